"""Invariants found by inference, kept as data so a proof can be checked without
finding it again.

Inference is the slow half of a proof (tens of seconds for some cells); checking an
invariant it found is initiation per conjunct, consecution per (action, conjunct) and
enabledness per action, with the sorts unbounded (a second or two). A certificate is
the invariant as JSON, written by `benchmarks/bench_fol_coverage.py --write`; `check`
runs those queries on the cell as the model is now, so a certificate proves nothing by
being there: a change to the actions that breaks it makes `check` fail. Which file a
certificate came from is therefore no part of the proof; the key only finds it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from proofs.engines.fol.modelled import OPTIONS_MODELLED
from proofs.engines.fol.problem import SAFETY, Problem, fixed_conjuncts
from proofs.engines.fol.proving import CheckResult, check_invariant
from proofs.engines.fol.system import Cell, unbounded_sorts
from proofs.engines.fol.vocab import Atom, Clause, Literal

#: Where the committed certificates are, one file per cell.
DIRECTORY = Path(__file__).with_name("certificates")


def key(cell: Cell) -> str:
    """The file name of a cell's certificate: variant, site names sorted (a cell's sites
    are a set), and the environment's options the actions read (`base` for none: an
    option the shape makes inert, such as three-way's reconnects, changes no action)."""
    sites = "+".join(sorted(site.name for site in cell.sites))
    options = [name for name in cell.environment.options if name in OPTIONS_MODELLED]
    mutant = f"--{cell.mutant}" if cell.mutant else ""
    return f"{cell.variant.name}--{sites}--{'+'.join(options) or 'base'}{mutant}.json"


def dumps(invariant: Sequence[Clause]) -> str:
    """The invariant as JSON: per conjunct its family name and its literals."""
    rows = [
        {
            "name": clause.name,
            "literals": [[x.positive, x.atom.name, list(x.atom.args)] for x in clause.literals],
        }
        for clause in invariant
    ]
    return json.dumps(rows, indent=1) + "\n"


def loads(text: str) -> tuple[Clause, ...]:
    """The conjuncts `dumps` wrote."""
    out = []
    for row in json.loads(text):
        literals = tuple(
            Literal(bool(p), Atom(str(n), tuple(str(a) for a in args)))
            for p, n, args in row["literals"]
        )
        out.append(Clause(literals, str(row["name"])))
    return tuple(out)


def committed(cell: Cell) -> tuple[Clause, ...] | None:
    """The committed certificate of `cell`, or None when there is none."""
    path = DIRECTORY / key(cell)
    return loads(path.read_text()) if path.exists() else None


def write(cell: Cell, invariant: Sequence[Clause]) -> Path:
    """Commit-ready: the certificate of `cell` in `DIRECTORY`."""
    DIRECTORY.mkdir(exist_ok=True)
    path = DIRECTORY / key(cell)
    path.write_text(dumps(invariant))
    return path


def require_structure(cell: Cell, invariant: Sequence[Clause]) -> None:
    """AssertionError unless the invariant holds the fixed structure and safety: a check
    proves safety only if safety is a conjunct."""
    missing = [c.name for c in (*fixed_conjuncts(cell), SAFETY) if c not in invariant]
    if missing:
        raise AssertionError(f"a certificate lacks {missing[0]}")


def check(cell: Cell, invariant: Sequence[Clause], timeout_ms: int = 60_000) -> CheckResult:
    """The certificate's proof with the sorts unbounded: it must hold the fixed structure
    and safety, hold initially (AssertionError otherwise), and be inductive per (action,
    conjunct); `breaks` is None exactly when it is a proof for every size."""
    require_structure(cell, invariant)
    return check_invariant(Problem(cell, unbounded_sorts()), list(invariant), timeout_ms)
