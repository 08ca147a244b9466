"""Ghost relations: facts about the past that the state does not keep, set by the actions.

`owes(t, i)`: call t removed item i from the local context at its call and has not
diffed yet (it waits for a lock). A call of a caller-copy site builds its request from
its copy, so what it removes from the local context is what it drops of its copy:
`drops(t, i) & copy(t, i)`, set at the call and cleared at the diff. Where a site
replaces the local context under the activity lock, an item the mirror holds and the
local context lacks is being deleted or owed by a waiting call, and a call waiting ahead
of the one that owes an item still has the item in its request (`docs/proofs.md`, "Ghosts").
With `owes` as a relation those facts are universal clauses; said with `drops`, `copy`
and the queue alone they need "some call ahead of t", a function from tasks to tasks.

A ghost adds no behaviour: every action sets it from relations it already has, so each
run of the system with it is a run without it and back. It is a function of the
explorer's state too (`rows`), so the cross-check maps it like every other relation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import z3

from model import Config, LocalUpdate, Pc, RequestSource, State
from proofs.engines.fol.vocab import ITEM, TASK, Relation

if TYPE_CHECKING:  # system.py reads `relations` from here
    from proofs.engines.fol.system import Cell, Run

OWES = Relation("owes", (TASK, ITEM), summary="removed it at its call, not diffed yet (ghost)")

#: The program counters of a call that has called and not diffed.
_WAITING = (Pc.WAIT_ACTIVITY, Pc.WAIT_PROVIDER)


def has_owes(cell: Cell) -> bool:
    """Whether the cell gets `owes`: a mirror-diff cell with a caller-copy site that
    replaces the local context under the activity lock (a later call can then orphan a
    waiting one). Other cells keep their vocabulary, and so their certificates."""
    return not cell.three_way and any(
        site.request is RequestSource.CALLER_COPY
        and cell.variant.local_update(site) is LocalUpdate.REPLACE
        and cell.variant.locks(site)
        for site in cell.sites
    )


def relations(cell: Cell) -> tuple[Relation, ...]:
    """The ghosts of `cell`'s vocabulary."""
    return (OWES,) if has_owes(cell) else ()


def at_call(run: Run, t: Any) -> None:
    """At a caller-copy call t, after its copy row is set: t owes what it drops of its
    copy (until its diff)."""
    if "owes" not in run.rels:
        return
    old, drops, copy = run["owes"], run["drops"], run["copy"]
    run.set("owes", lambda x, i: z3.If(x == t, z3.And(drops(t, i), copy(t, i)), old(x, i)))


def at_diff(run: Run, t: Any) -> None:
    """At t's diff: it owes nothing any more (its request is read)."""
    if "owes" not in run.rels:
        return
    old = run["owes"]
    run.set("owes", lambda x, i: z3.And(x != t, old(x, i)))


def rows(state: State, config: Config, cell: Cell) -> frozenset[tuple[object, ...]]:
    """`owes` on an explorer state: a caller-copy call that has called and not diffed,
    and an item it drops of its copy (the model keeps each call's copy)."""
    if not has_owes(cell):
        return frozenset()
    out: set[tuple[object, ...]] = set()
    for t, task in enumerate(state.tasks):
        if task.pc not in _WAITING or config.site(t).request is not RequestSource.CALLER_COPY:
            continue
        copy = set(task.copy or ())
        out.update((t, item) for item in config.scenario.calls[t].drops if item in copy)
    return frozenset(out)
