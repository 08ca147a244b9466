"""Published JSON Schemas (draft 2020-12) of the files ackguard reads, shipped as package data.

`site-file.schema.json` describes a site file (`ackguard audit --emit-sites`
writes one, `ackguard explore --sites` reads it); editors can validate a
hand-edited file against it, and `proofs.engines.site_file` checks every file
against it on load.
"""

__all__: list[str] = []
