"""The order relations in the first-order system of an ordered cell (`Cell(ordered=True)`).

Four relations, kept as the model keeps the orders (`model/local_order.py`,
`model/diff.py`, `model.state.insert_after`):

- `born(i, j)`, static: a strict total order on every item, the order of creation. A
  step that creates a call's items requires them to be younger than every item made so
  far (`made`), so a run picks `born` once and creates in its order. A site whose items
  are made before its call (a tool output) gets a `make` action that may run at any
  moment before the call; the others create at the call, or at the snapshot where the
  model does.
- `mo(i, j)`: the mirror's order. An added event puts its item right after its anchor,
  the item ahead of it in its push's request, when the mirror holds the anchor; at the
  tail when it does not; at the head when the item is first in its request. The anchor is
  the request's immediate predecessor, asked in the action's guard (`forall z. not
  (ro(t, p, z) and ro(t, z, i))`), so no update has a quantifier. A deleted event takes
  its item out.
- `ro(t, i, j)`: the order of task t's fixed request: a snapshot's is the mirror's order
  of the moment, then the call's own items in creation order; a request that is the
  local context or a copy of it is in creation order, since livekit's insert keeps the
  local context in creation order (`order.LOCAL_BY_CREATION`, checked on every explorer
  state of the cross-checks) and a replacement's own items are the youngest.

Not modelled: the server's order (the server may refuse any create, as before), the
model's items (`server-items`) and three-way; `modelled.coverage` keeps such ordered
cells out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import z3

from model import LocalUpdate, RequestSource, Site
from model.sites import Creation, local_order
from proofs.engines.fol.order import BORN, row_order, strict_order
from proofs.engines.fol.system import Action, Cell, Expr, Fn, Run, Sorts
from proofs.engines.fol.vocab import ITEM, TASK, Clause

#: Relations whose initial value `init` gives (the others start empty).
INITIALISED = frozenset({"made", "mo"})
#: The order structure every state of an ordered cell has.
FIXED: tuple[Clause, ...] = (*BORN, *strict_order("mo", "M"), *row_order("ro", "req"))


def creation(cell: Cell, site: Site) -> str:
    """The step that creates a call's items: 'make' (any moment before the call, or the
    call), 'snapshot' (the step that takes the mirror snapshot) or 'call'."""
    created = local_order(site).created
    if created is Creation.BEFORE_CALL:
        return "make"
    snapshots = site.request is RequestSource.MIRROR_SNAPSHOT
    if created is Creation.AT_SNAPSHOT and snapshots:
        before = cell.variant.local_update(site) is LocalUpdate.BEFORE_PUSH
        return "call" if before else "snapshot"
    return "call"


def init(sorts: Sorts, rels: Mapping[str, Any]) -> list[Expr]:
    """`born` a strict total order; the start's items made, the mirror in their order."""
    born, made, mo = rels["born"], rels["made"], rels["mo"]
    S, L = rels["S"], rels["L"]
    return [
        sorts.forall(ITEM, lambda i: z3.Not(born(i, i))),
        sorts.forall_many(
            (ITEM, ITEM, ITEM),
            lambda i, j, k: z3.Implies(z3.And(born(i, j), born(j, k)), born(i, k)),
        ),
        sorts.forall_many((ITEM, ITEM), lambda i, j: z3.Or(i == j, born(i, j), born(j, i))),
        sorts.forall(ITEM, lambda i: made(i) == z3.Or(S(i), L(i))),
        sorts.forall_many((ITEM, ITEM), lambda i, j: mo(i, j) == z3.And(S(i), S(j), born(i, j))),
    ]


def create(sorts: Sorts, run: Run, t: Any) -> None:
    """Task t's items not made yet are made now, younger than every item made before."""
    made, adds, born = run["made"], run["adds"], run["born"]
    run.require(
        sorts.forall_many(
            (ITEM, ITEM),
            lambda x, y: z3.Implies(z3.And(made(x), adds(t, y), z3.Not(made(y))), born(x, y)),
        )
    )
    run.set("made", lambda i: z3.Or(made(i), adds(t, i)))


def make_action(cell: Cell, sorts: Sorts, site: Site) -> Action:
    """A call of `site` makes its items before its call (a tool returns, a playout starts)."""

    def effect(run: Run, p: dict[str, Any]) -> Run:
        t = p["t"]
        run.require(z3.And(run[cell.site_rel(site)](t), z3.Or(run["idle"](t), run["copied"](t))))
        create(sorts, run, t)
        return run

    return Action(f"make {site.name}'s items", (("t", TASK),), effect)


def by_creation(run: Run, t: Any, row: Fn) -> None:
    """Task t's request order is creation order on `row` (a live or copied request)."""
    ro, born = run["ro"], run["born"]
    run.set(
        "ro",
        lambda x, a, b: z3.If(x == t, z3.And(row(a), row(b), born(a, b)), ro(x, a, b)),
    )


def by_creation_where(run: Run, which: Fn, row: Fn) -> None:
    """Every task `which` holds gets `row` in creation order as its request order."""
    ro, born = run["ro"], run["born"]
    run.set(
        "ro",
        lambda x, a, b: z3.If(which(x), z3.And(row(a), row(b), born(a, b)), ro(x, a, b)),
    )


def at_diff(run: Run, t: Any, bound: Expr, final: Fn) -> None:
    """A live request is fixed at the diff, in creation order; the others keep theirs."""
    ro, born = run["ro"], run["born"]
    run.set(
        "ro",
        lambda x, a, b: z3.If(
            z3.And(x == t, bound), z3.And(final(a), final(b), born(a, b)), ro(x, a, b)
        ),
    )


def snapshot(run: Run, t: Any) -> None:
    """A snapshot request: the mirror in its order, then the call's items by creation."""
    ro, mo, mirror, adds, born = run["ro"], run["mo"], run["M"], run["adds"], run["born"]

    def order(a: Any, b: Any) -> Expr:
        return z3.Or(
            z3.And(mirror(a), mirror(b), mo(a, b)),
            z3.And(mirror(a), z3.Not(mirror(b)), adds(t, b)),
            z3.And(z3.Not(mirror(a)), z3.Not(mirror(b)), adds(t, a), adds(t, b), born(a, b)),
        )

    run.set("ro", lambda x, a, b: z3.If(x == t, order(a, b), ro(x, a, b)))


def _immediate(sorts: Sorts, run: Run, t: Any, p: Any, i: Any) -> Expr:
    ro = run["ro"]
    return z3.And(
        ro(t, p, i),
        sorts.forall(ITEM, lambda z: z3.Not(z3.And(ro(t, p, z), ro(t, z, i)))),
    )


#: Where an added event puts its item in the mirror, by the anchor's case.
PLACES = ("after its anchor", "at the tail, its anchor gone", "at the head")


def added(sorts: Sorts, run: Run, place: str, p: dict[str, Any], mirror: Fn, mo: Fn) -> None:
    """The mirror's order once the added event of (t, i) is applied in the case `place`
    (`mirror` and `mo` are the views before the event)."""
    t, i, anchor = p["t"], p["i"], p.get("p")
    ro = run["ro"]
    if place == PLACES[2]:
        run.require(sorts.forall(ITEM, lambda z: z3.Not(ro(t, z, i))))

        def new(x: Any, y: Any) -> Expr:
            return z3.And(x == i, mirror(y), y != i)

    else:
        run.require(_immediate(sorts, run, t, anchor, i))
        if place == PLACES[0]:
            run.require(mirror(anchor))

            def new(x: Any, y: Any) -> Expr:
                return z3.Or(
                    z3.And(x == i, mo(anchor, y)),
                    z3.And(y == i, z3.Or(x == anchor, mo(x, anchor))),
                )

        else:
            run.require(z3.Not(mirror(anchor)))

            def new(x: Any, y: Any) -> Expr:
                return z3.And(y == i, mirror(x), x != i)

    held = mirror(i)
    run.set("mo", lambda x, y: z3.If(held, mo(x, y), z3.Or(mo(x, y), new(x, y))))


def deleted(run: Run, i: Any, mo: Fn) -> None:
    """A deleted event takes its item out of the mirror's order."""
    run.set("mo", lambda x, y: z3.And(mo(x, y), x != i, y != i))


def in_batch_order(
    sorts: Sorts, run: Run, t: Any, i: Any, creates: tuple[str, ...], deletes: tuple[str, ...]
) -> None:
    """Inside one batch the FIFO is exact for what the order reads: a push sends its
    deletes first, then its creates in its request's order, and the server and the client
    take them in that order. So the create of (t, i) (its op, or its event) goes only when
    no delete of t and no create of t ahead of i in t's request is still there."""
    ro = run["ro"]
    rels = [run[name] for name in creates]
    dels = [run[name] for name in deletes]
    run.require(
        sorts.forall(
            ITEM,
            lambda z: z3.And(
                *(z3.Not(d(t, z)) for d in dels),
                z3.Implies(ro(t, z, i), z3.And(*(z3.Not(r(t, z)) for r in rels))),
            ),
        )
    )
