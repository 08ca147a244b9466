"""The ghosts invariant 2 reads, and the server's anchor rule, in the first-order system of
a cell that asks for them (`Cell(agreement=True)`).

Five relations, the twins of `model.State`'s ghosts: `reached` (has been on the server),
`removed` (a delete removed it), `sent` (a create of it was sent, or it was on the server),
`refused` (the server refused its create because the item it was to follow had been
deleted) and, per task, `pa(t, a)`: a may anchor t's creates. The model's diff
(`model.diff.three_way_diff`) places each create after the nearest earlier request item
that will exist by then: an item of the expected view the request keeps or the caller
never saw, or one of the push's own creates. `pa` is that whole set, fixed at the diff, so
the create's real anchor is always in it.

The server refuses a create here only with a parameter `a` in `pa` that is off the
server, and records `refused` exactly when `a` was removed, as `model.moves._server_apply`
does for the real anchor. Choosing another `a` (or an anchor the model would not pick) only
adds runs, and a refusal whose anchor was never removed records nothing, as in the model.
With `rejections`, the server may still reject any create (no ghost), as the model's
`server-reject` move does. A function output refused for want of a function call
(`OrphanOutputs.REFUSED`) is not modelled: `agreement.coverage` refuses such shapes.

The one assumption on calls (`ASSUMPTION`): a caller-copy call drops only items its copy
holds. The model lets a replacement name any item in its drops and puts it in its base
(`base = copy | drops`), and then three-way deletes an item the caller never saw: the
explorer finds invariant 2 broken that way (a user turn and a replacement that drops the
turn's message before the turn adds it locally; `tests/proofs/test_fol_agreement.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import z3

from proofs.engines.fol.system import Expr, Fn, Run, Sorts
from proofs.engines.fol.vocab import ITEM, TASK

__all__ = [
    "ASSUMPTION",
    "ASSUMPTION_ADDS",
    "at_call",
    "at_diff",
    "axioms",
    "init",
    "placed",
    "refuse_anchored",
    "removed",
]

ASSUMPTION = "a replacement drops only items its copy of the local context holds"
#: The model lets a live-context call (the cleanup) add items, and three-way never sends
#: them (they are in its base: the local context it pushes), a loss under 2(a) at rest;
#: no real cleanup adds, and none in the catalog or the mixes does.
ASSUMPTION_ADDS = "a push of the live local context (the cleanup) adds nothing"


def _set(run: Run, name: str, i: Any) -> None:
    old = run[name]
    run.set(name, lambda y: z3.Or(old(y), y == i))


def at_call(sorts: Sorts, run: Run, t: Any, copy: Fn) -> None:
    """A caller-copy call's drops are items of its copy (`ASSUMPTION`)."""
    drops = run["drops"]
    run.require(sorts.forall(ITEM, lambda i: z3.Implies(drops(t, i), copy(i))))


def at_diff(run: Run, t: Any, expected: Fn, merged: Fn, creates: Fn) -> None:
    """The push's creates are sent; `pa(t, .)` is every item a create of it may follow."""
    sent, base, pa = run["sent"], run["base"], run["pa"]
    run.set("sent", lambda i: z3.Or(sent(i), creates(i)))

    def anchors(i: Any) -> Expr:
        present = z3.And(expected(i), z3.Or(merged(i), z3.Not(base(t, i))))
        return z3.Or(present, creates(i))

    run.set("pa", lambda x, i: z3.If(x == t, anchors(i), pa(x, i)))


def placed(run: Run, i: Any) -> None:
    """The server holds `i` (a push's create, or the model's item)."""
    _set(run, "reached", i)


def removed(run: Run, i: Any) -> None:
    """A delete removed `i` from the server."""
    _set(run, "removed", i)


def refuse_anchored(run: Run, t: Any, i: Any, a: Any, mutant: bool = False) -> None:
    """The server refuses t's create of `i` because its anchor `a` is not on the server;
    the refusal counts as pushed (`refused`) when `a` was removed. The `refuse-anchored`
    mutant (`mutant`) also refuses with `a` on the server, and counts that one pushed."""
    anchor_gone = z3.Not(run["S"](a))
    guard = z3.And(run["pa"](t, a), z3.Not(run["S"](i)))
    run.require(guard if mutant else z3.And(guard, anchor_gone))
    refused, gone = run["refused"], run["removed"](a)
    if mutant:
        gone = z3.Or(gone, run["S"](a))
    run.set("refused", lambda y: z3.Or(refused(y), z3.And(y == i, gone)))


def axioms(sorts: Sorts, rels: Mapping[str, Any], live: list[Any]) -> list[Expr]:
    """`ASSUMPTION_ADDS`: a call of a live-context site (`live`, its site relations) adds
    nothing."""
    adds = rels["adds"]

    def none_added(site: Any) -> Expr:
        def row(t: Any) -> Expr:
            return sorts.forall(ITEM, lambda i: z3.Implies(site(t), z3.Not(adds(t, i))))

        return sorts.forall(TASK, row)

    return [none_added(site) for site in live]


def init(sorts: Sorts, rels: Mapping[str, Any]) -> list[Expr]:
    """At the start what is on the server has been sent and reached it; nothing else."""
    S, reached, sent = rels["S"], rels["reached"], rels["sent"]
    removed_, refused, pa = rels["removed"], rels["refused"], rels["pa"]
    return [
        sorts.forall(
            ITEM,
            lambda i: z3.And(
                reached(i) == S(i), sent(i) == S(i), z3.Not(removed_(i)), z3.Not(refused(i))
            ),
        ),
        sorts.forall(TASK, lambda t: sorts.forall(ITEM, lambda i: z3.Not(pa(t, i)))),
    ]


#: Relations `init` sets (the problem's generic start leaves them alone).
INITIALISED = frozenset({"reached", "sent", "removed", "refused", "pa"})
