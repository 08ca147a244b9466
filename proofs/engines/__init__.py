"""The engines: everything that checks, and nothing that prints or parses arguments.

- `explore`: the explicit-state explorer (breadth-first, shortest counterexamples) on
  the compact encoding of `compact` with the symmetry reduction of `symmetry`;
  `explore_readable` is the same search on the readable states (the baseline);
- `sweep`: every mix of up to N calls per cell, on an executor of `executors`;
- `smt`: z3 (bounded model checking, k-induction, reachable-set invariants);
- `stateful`: the Hypothesis state machine of the model;
- `conformance`: the harness that drives an implementation in lockstep with the
  model, through an `Adapter` it is given (it imports no concrete adapter);
- `audit`: the static lock-discipline audit of real source; with `audit_session`
  (the facts of a provider session class, walked by `audit_session_walk`),
  `audit_session_shape` (the shape record inferred from them) and
  `audit_session_file` (the session file `--emit-sites` writes for a provider);
- `casebook`: the casebook's configurations (`model.cases`) judged by the explorer;
  `case_file`: a case written as data (`ackguard verify --case-file`), and
  `CaseRecord`, a case with the sites and variants a file adds;
- `site_file`: the site records the audit writes and the explorer reads.

The names below are imported on first use, so `import proofs.engines.explore`
does not pay for z3 or Hypothesis. The explorer's function is not among them:
`proofs.engines.explore` is its module, so `from proofs.engines.explore import
explore`.
"""

import typing as _typing

import proofs.lazy as _lazy

if _typing.TYPE_CHECKING:
    from proofs.engines.audit import (
        AuditConfig,
        Place,
        audit_paths,
        audit_session_paths,
        audit_source,
        emit_sites,
    )
    from proofs.engines.audit_session_file import SessionFile, load_session_file
    from proofs.engines.audit_session_shape import InferredShape, infer_shape
    from proofs.engines.case_file import CaseRecord, load_case_file
    from proofs.engines.casebook import CaseVerdict, judge
    from proofs.engines.explore import Exploration, Finding
    from proofs.engines.site_file import SiteSpec, load_sites, pair_scenarios
    from proofs.engines.stateful import model_machine
    from proofs.engines.sweep import CellResult, MixResult
    from proofs.engines.trace import Step, Trace, replay

_WHERE = {
    "AuditConfig": "proofs.engines.audit",
    "Place": "proofs.engines.audit",
    "audit_paths": "proofs.engines.audit",
    "audit_source": "proofs.engines.audit",
    "emit_sites": "proofs.engines.audit",
    "audit_session_paths": "proofs.engines.audit",
    "SessionFile": "proofs.engines.audit_session_file",
    "load_session_file": "proofs.engines.audit_session_file",
    "InferredShape": "proofs.engines.audit_session_shape",
    "infer_shape": "proofs.engines.audit_session_shape",
    "CaseRecord": "proofs.engines.case_file",
    "load_case_file": "proofs.engines.case_file",
    "CaseVerdict": "proofs.engines.casebook",
    "judge": "proofs.engines.casebook",
    "Exploration": "proofs.engines.explore",
    "Finding": "proofs.engines.explore",
    "CellResult": "proofs.engines.sweep",
    "MixResult": "proofs.engines.sweep",
    "SiteSpec": "proofs.engines.site_file",
    "load_sites": "proofs.engines.site_file",
    "pair_scenarios": "proofs.engines.site_file",
    "model_machine": "proofs.engines.stateful",
    "Step": "proofs.engines.trace",
    "Trace": "proofs.engines.trace",
    "replay": "proofs.engines.trace",
}

__all__ = [
    "AuditConfig",
    "CaseRecord",
    "CaseVerdict",
    "CellResult",
    "Exploration",
    "Finding",
    "InferredShape",
    "MixResult",
    "Place",
    "SessionFile",
    "SiteSpec",
    "Step",
    "Trace",
    "audit_paths",
    "audit_session_paths",
    "audit_source",
    "emit_sites",
    "infer_shape",
    "judge",
    "load_case_file",
    "load_session_file",
    "load_sites",
    "model_machine",
    "pair_scenarios",
    "replay",
]

__getattr__, __dir__ = _lazy.face(__name__, _WHERE, __all__, globals())
