"""Published JSON Schemas (draft 2020-12) of the files ackguard reads and writes, shipped as
package data.

`site-file.schema.json` describes a site file (`ackguard audit --emit-sites`
writes one, `ackguard explore --sites` reads it); editors can validate a
hand-edited file against it, and `proofs.engines.site_file` checks every file
against it on load. `session-file.schema.json` describes the session file that
`--emit-sites` writes for a provider session class (the shape it infers, with its
evidence); `proofs.engines.audit_session_file` checks it on load. `case-file.schema.json`
describes a case file (a report of the casebook written as data, `ackguard verify
--case-file`); `proofs.engines.case_file` checks it on load.

`COMMAND-output.schema.json` describes what `ackguard COMMAND --json` prints, for
verify, explore (with and without `--sweep`), conform, audit, demo and livekit;
the definitions they share (names, invariants, environments, move labels, model
traces) are in `output-common.schema.json`, referred to by its `$id`
(`urn:ackguard:schema:output-common:1`), so a validator needs it registered
beside the one it checks. `tests/proofs/test_output_schemas.py` validates every
command's output against its schema.
"""

__all__: list[str] = []
