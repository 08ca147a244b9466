"""The report: what people and machines read, rendered from the engines' results.

- `render`: a trace as numbered lines, and as JSON;
- `formats`: a trace as a Mermaid sequence diagram and as an ITF trace;
- `verify`, `explore`, `conform`, `demo`, `audit`, `livekit`: each command's
  tables (as lines; the command line prints them) and JSON;
- `pages`: `docs/variants.md`, generated from the verdicts.

Nothing here runs a check of its own except `pages`, which asks the z3 engine
for the catalog's verdicts. The names below are imported on first use.
"""

import typing as _typing

if _typing.TYPE_CHECKING:
    from proofs.report.formats import itf, mermaid
    from proofs.report.render import describe, trace_json, trace_lines
    from proofs.report.verify import cell_json

_WHERE = {
    "cell_json": "proofs.report.verify",
    "describe": "proofs.report.render",
    "itf": "proofs.report.formats",
    "mermaid": "proofs.report.formats",
    "trace_json": "proofs.report.render",
    "trace_lines": "proofs.report.render",
}

__all__ = [
    "cell_json",
    "describe",
    "itf",
    "mermaid",
    "trace_json",
    "trace_lines",
]


def __getattr__(name: str) -> object:
    """Import the module of a public name when the name is first asked for."""
    from importlib import import_module

    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(where), name)


def __dir__() -> list[str]:
    """The loaded names and the lazy ones, so completion sees the whole face."""
    return sorted({*globals(), *__all__})
