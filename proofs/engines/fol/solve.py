"""z3 queries over a cell: initiation, consecution, enabledness, and reading models back.

Each query is one satisfiability question about a pre and a post state joined by
one action. A model z3 returns is read back as two finite structures, so candidates
are evaluated on it in Python and counterexamples to induction are shown in
ackguard's words.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import z3
from attrs import frozen

from proofs.engines.fol.problem import Problem
from proofs.engines.fol.system import Action, FiniteSorts
from proofs.engines.fol.vocab import ITEM, TASK, Clause, Structure, with_derived
from proofs.errors import Unsettled


@frozen
class Transition:
    """A pre and a post state of one action, read back from a z3 model."""

    action: str
    pre: Structure
    post: Structure
    params: Mapping[str, object]


def solver(timeout_ms: int, ctx: Any) -> Any:
    """A solver in the problem's own context (`Sorts.ctx`)."""
    s = z3.Solver(ctx=ctx)
    s.set("timeout", timeout_ms)
    s.set("core.minimize", True)
    return s


def check(s: Any, *assumptions: Any) -> bool:
    """True for sat, False for unsat; `Unsettled` otherwise."""
    answer = s.check(*assumptions)
    if answer == z3.sat:
        return True
    if answer == z3.unsat:
        return False
    raise Unsettled(str(s.reason_unknown()))


def read(problem: Problem, model: Any, rels: Mapping[str, Any]) -> Structure:
    """The finite structure a z3 model gives the relations `rels`."""
    universes = {}
    for sort in (TASK, ITEM):
        universes[sort] = problem.sorts.elements(model, sort)
    names = {TASK: [f"T{n}" for n in range(len(universes[TASK]))]}
    names[ITEM] = [f"i{n}" for n in range(len(universes[ITEM]))]
    rows: list[tuple[str, tuple[object, ...]]] = []
    terms: list[Any] = []
    finite = isinstance(problem.sorts, FiniteSorts)
    key = tuple(rels[r.name].name() for r in problem.relations) if finite else ()
    packed = problem.packed.get(key) if finite else None
    if packed is None:
        for rel in problem.relations:
            for combo in _product([list(range(len(universes[s]))) for s in rel.sorts]):
                args = [universes[s][k] for s, k in zip(rel.sorts, combo, strict=True)]
                rows.append(
                    (rel.name, tuple(names[s][k] for s, k in zip(rel.sorts, combo, strict=True)))
                )
                terms.append(rels[rel.name](*args))
        ctx = problem.sorts.ctx
        one, zero = z3.BitVecVal(1, 1, ctx), z3.BitVecVal(0, 1, ctx)
        bits = [z3.If(t, one, zero) for t in terms]
        packed = (rows, bits[0] if len(bits) == 1 else z3.Concat(*bits))
        if finite:
            problem.packed[key] = packed
    rows, vector = packed
    value = model.eval(vector, model_completion=True).as_long()
    width = len(rows)
    table: dict[str, set[tuple[object, ...]]] = {rel.name: set() for rel in problem.relations}
    for k, (name, row) in enumerate(rows):
        if value >> (width - 1 - k) & 1:
            table[name].add(row)
    frozen_table = {name: frozenset(v) for name, v in table.items()}
    return Structure(tuple(names[TASK]), tuple(names[ITEM]), with_derived(frozen_table))


def element(problem: Problem, model: Any, const: Any, sort: str) -> str:
    elems = problem.sorts.elements(model, sort)
    value = model.eval(const, model_completion=True)
    prefix = "T" if sort == TASK else "i"
    for n, elem in enumerate(elems):
        if z3.eq(elem, value):
            return f"{prefix}{n}"
    return f"{prefix}?"


def _product(pools: Sequence[list[int]]) -> Iterable[tuple[int, ...]]:
    if not pools:
        yield ()
        return
    for head in pools[0]:
        for rest in _product(pools[1:]):
            yield (head, *rest)


def post_symbols(
    problem: Problem, action: Action, pre: Mapping[str, Any], tag: str
) -> dict[str, Any]:
    """Post-state symbols: fresh for what the action changes, the pre symbols otherwise."""
    changed = problem.changed(action)
    fresh = problem.symbols(tag)
    return {name: fresh[name] if name in changed else pre[name] for name in pre}


def conjunction(problem: Problem, clauses: Iterable[Clause], rels: Mapping[str, Any]) -> list[Any]:
    return [problem.clause(c, rels) for c in clauses]
