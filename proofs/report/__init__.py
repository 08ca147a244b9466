"""The report: what people and machines read, rendered from the engines' results.

- `render`: a trace as numbered lines, and as JSON;
- `formats`: a trace as a Mermaid sequence diagram and as an ITF trace;
- `verify`, `explore`, `conform`, `demo`, `audit`, `livekit`: each command's
  tables (as lines; the command line prints them) and JSON;
- `casebook`: `ackguard verify --case` tables and JSON, what each fix closes, and
  the sections of `docs/casebook.md`;
- `pages`: `docs/variants.md` and `docs/casebook.md`, generated from the verdicts.

Nothing here runs a check of its own except `pages`, which asks the z3 engine
for the catalog's verdicts, and `casebook.judged`, which asks the case's judge.
The names below are imported on first use.
"""

import typing as _typing

import proofs.lazy as _lazy

if _typing.TYPE_CHECKING:
    from proofs.report.casebook import JudgedCase, case_json, case_lines, judged, render_casebook
    from proofs.report.formats import itf, mermaid
    from proofs.report.render import describe, trace_json, trace_lines
    from proofs.report.verify import cell_json

_WHERE = {
    "JudgedCase": "proofs.report.casebook",
    "case_json": "proofs.report.casebook",
    "case_lines": "proofs.report.casebook",
    "judged": "proofs.report.casebook",
    "render_casebook": "proofs.report.casebook",
    "cell_json": "proofs.report.verify",
    "describe": "proofs.report.render",
    "itf": "proofs.report.formats",
    "mermaid": "proofs.report.formats",
    "trace_json": "proofs.report.render",
    "trace_lines": "proofs.report.render",
}

__all__ = [
    "JudgedCase",
    "case_json",
    "case_lines",
    "cell_json",
    "describe",
    "itf",
    "judged",
    "mermaid",
    "render_casebook",
    "trace_json",
    "trace_lines",
]

__getattr__, __dir__ = _lazy.face(__name__, _WHERE, __all__, globals())
