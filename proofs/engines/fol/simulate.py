"""Step-by-step cross-check: each move of a model trace is a step of the first-order system.

The state-wise cross-checks evaluate clauses on the explorer's states; they say nothing
about whether the actions move the relations as the model moves its state. Here both
states of a model move, mapped to relations, are fixed on a finite instance of the
cell's size, and z3 is asked which action joins them. A move no action joins is one the
first-order system lacks, so a proof over it would not be a proof of the model.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from itertools import product
from typing import Any

import z3

from model import Config, State, successors
from proofs.engines.fol.problem import Problem
from proofs.engines.fol.solve import check, solver
from proofs.engines.fol.system import Cell, FiniteSorts
from proofs.engines.fol.vocab import TASK, Structure

#: Relations a mapped state shows only in part: `data.batch_order` orders the tasks with
#: nothing in flight by their number, so a move that drains a batch can reorder them,
#: which no guard reads. A post state leaves them free.
PARTIAL = frozenset({"before"})


def _fixed(
    problem: Problem, rels: Mapping[str, Any], s: Structure, free: frozenset[str] = frozenset()
) -> list[Any]:
    """`s` as the values of every relation of `rels` but `free` (a finite instance of its
    size)."""
    sorts = problem.sorts
    assert isinstance(sorts, FiniteSorts)
    elems = {TASK: dict(zip(s.tasks, sorts.task_elems, strict=True))}
    elems["item"] = dict(zip(s.items, sorts.item_elems, strict=True))
    out = []
    for rel in problem.relations:
        if rel.name in free:
            continue
        f = rels[rel.name]
        rows = s.relations.get(rel.name, frozenset())
        pools = [s.tasks if sort == TASK else s.items for sort in rel.sorts]
        made = s.relations.get("made", frozenset())
        for combo in product(*pools):
            if rel.name == "born" and not all((x,) in made for x in combo):
                continue  # the creation order of items yet to be made is the run's to pick
            atom = f(*(elems[sort][x] for sort, x in zip(rel.sorts, combo, strict=True)))
            out.append(atom if combo in rows else z3.Not(atom))
    return out


def same(problem: Problem, pre: Structure, post: Structure) -> bool:
    """Whether the two structures agree on every relation of the cell (a move the
    first-order vocabulary does not see)."""
    return all(
        pre.relations.get(r.name, frozenset()) == post.relations.get(r.name, frozenset())
        for r in problem.relations
        if r.name not in PARTIAL
    )


def joining(
    problem: Problem,
    pre: Structure,
    post: Structure,
    timeout_ms: int = 60_000,
    among: tuple[str, ...] | None = None,
) -> tuple[str, ...]:
    """The actions (of `among`, by default all) with a step from `pre` to `post` (both
    over the problem's finite sizes)."""
    post_rels = problem.symbols("'")
    s = solver(timeout_ms, problem.sorts.ctx)
    s.add(*problem.axioms(problem.pre), *_fixed(problem, problem.pre, pre))
    s.add(*_fixed(problem, post_rels, post, PARTIAL))
    found = []
    for n, action in enumerate(problem.actions):
        if among is not None and action.name not in among:
            continue
        s.push()
        s.add(*problem.step(action, problem.pre, post_rels, f"j{n}"))
        if check(s):
            found.append(action.name)
        s.pop()
    return tuple(found)


def unjoined(problem: Problem, config: Config, cell: Cell, limit: int = 100_000) -> Iterator[str]:
    """Every move of every state the explorer reaches in `config` that no action of the
    ordered cell's first-order system joins, as 'move: pre -> post' (the mapped states
    with their creation order; `problem` a finite instance of the scenario's size)."""
    from proofs.engines.fol.data import structure
    from proofs.engines.fol.order import births, order_structure, reachable_born

    def mapped(state: State, born: tuple[str, ...]) -> Structure:
        return order_structure(structure(state, config, cell), state, config, born)

    for state, born in reachable_born(config, limit):
        pre = mapped(state, born)
        for move, after in successors(state, config):
            post = mapped(after, births(state, after, born))
            if same(problem, pre, post):
                continue
            if not joining(problem, pre, post):
                yield f"{move.kind.value} {move.task} {move.item}"
