"""Finding a small inductive invariant: strengthening from safety by counterexamples to
induction, weakening (Houdini) where no candidate blocks one.

Houdini over every candidate keeps hundreds of conjuncts, and each later check then
carries all of them. Here the invariant starts as the fixed structure and the safety
conjunct, and grows only by what a counterexample to induction (CTI) asks for:

- a CTI is a pre state of the current conjunction and an action whose successor
  breaks a conjunct;
- if some candidate (true on every sampled reachable state) is false on the pre
  state, the smallest such candidates join the invariant: the pre state is
  unreachable, and they say why;
- if none is, the conjuncts the successor breaks leave (and may not come back): the
  templates cannot show them inductive. If safety or a fixed conjunct is among
  them, inference stops with that CTI.

Each step adds a candidate or removes one for good, so it ends. The result is
inductive for the queries' sorts: on a finite instance first (fast), then again
with the sorts unbounded, where a CTI of any size feeds the same loop.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from attrs import frozen

from proofs.engines.fol.data import Sample
from proofs.engines.fol.problem import Problem
from proofs.engines.fol.queries import ActionQueries, InitQueries, all_queries
from proofs.engines.fol.vocab import Clause, Structure

#: How many of the smallest blocking candidates join per CTI.
BLOCKERS = 1

#: How often a conjunct that left at a CTI no candidate blocked may come back as a
#: blocker: it left because the invariant then could not show it inductive, and a later
#: blocker may. Each return costs a CTI, so inference still ends. 1 is Houdini's rule
#: (never back); with it an early drop cascades (lock5 {replacement} lost its lemma so).
RETURNS = 1


@frozen
class Stuck:
    """A CTI no candidate blocks, on a conjunct inference may not drop (or the last CTI
    when inference ran out of its budget of CTIs: `exhausted`)."""

    conjunct: Clause
    action: str
    pre: Structure
    post: Structure
    params: dict[str, str]
    exhausted: bool = False


@frozen
class Inference:
    """What inference ends with: the invariant, or where it got stuck."""

    invariant: tuple[Clause, ...]
    stuck: Stuck | None
    ctis: int
    dropped: int


@frozen
class Inferred:
    """What a whole inference run for one cell found (`order_proof.prove_ordered`,
    `agreement.prove_agreement`): proved (the invariant), or where it stopped, with the
    CTIs asked, the seconds, and the sizes of the sample and the candidate pool."""

    status: str
    invariant: tuple[Clause, ...]
    stuck: Stuck | None
    ctis: int
    seconds: float
    sampled: int
    candidates: int


#: Template families by how often their blockers end up in a proved invariant, most
#: likely first: a CTI is blocked by the first candidate in this order that its pre
#: state breaks, so a family whose instances mostly leave again costs CTIs when tried
#: early. Counted on three-way with all six sites (blockers added, then dropped):
#: task 13/0, fresh 7/3, item 6/1, task-item 112/60, same-item 18/14, item-flight
#: 32/30, item3 19/17 (docs/proofs.md, "Finding the invariant").
LIKELY: tuple[str, ...] = (
    "ghost",
    "task",
    "item",
    "fresh",
    "task-item",
    "at-most-one",
    "queue",
    "task3",
    "same-item",
    "fifo",
    "item-flight",
    "item-owed",
    "row-owed",
    "task-rows",
    "queue-rows",
    "queue-owed",
    "item-adder",
    "slot-adder",
    "slot-item",
    "item3",
)


def _size(clause: Clause) -> tuple[int, int, str]:
    return (len(clause.literals), len(clause.variables), clause.text())


def _likely(clause: Clause) -> tuple[int, int, int, str]:
    rank = LIKELY.index(clause.name) if clause.name in LIKELY else len(LIKELY)
    return (rank, *_size(clause))


#: The order blockers are tried in.
ORDER = _likely


def infer_on(
    problem: Problem,
    start: Sequence[Clause],
    protected: Sequence[Clause],
    pool: Sequence[Clause],
    timeout_ms: int,
    deadline: float | None,
) -> Inference:
    """`infer` with fresh queries of `problem` (how a run goes on to a larger instance
    once inference ended on a smaller one)."""
    init, actions = InitQueries(problem, timeout_ms), all_queries(problem, timeout_ms)
    return infer(start, protected, pool, init, actions, deadline=deadline)


def infer(
    start: Sequence[Clause],
    protected: Sequence[Clause],
    pool: Sequence[Clause],
    init: InitQueries,
    actions: Sequence[ActionQueries],
    budget: int = 3000,
    drops: list[Stuck] | None = None,
    deadline: float | None = None,
    returns: int = RETURNS,
) -> Inference:
    """The loop of the module docstring over the given queries (one sort choice);
    `drops`, when given, collects why each conjunct left; past `deadline` (a
    `time.monotonic()` value) inference stops as if out of budget; `returns` as
    `RETURNS`."""
    invariant = list(start)
    keep = set(protected)
    # how often each candidate left: false initially counts as `returns` (never back)
    gone: dict[Clause, int] = {}
    ranked = sorted(pool, key=ORDER)
    ctis = 0
    changed = True
    while changed:
        changed = False
        for action in actions:
            while True:
                found = action.breaks(invariant, invariant)
                if found is None:
                    break
                ctis += 1
                late = deadline is not None and time.monotonic() > deadline
                if ctis > budget or late:
                    pre, post, params = found
                    culprit = next(c for c in invariant if not post.satisfies(c))
                    stuck = Stuck(culprit, action.action.name, pre, post, params, exhausted=True)
                    return Inference(tuple(invariant), stuck, ctis, len(gone))
                changed = True
                pre, post, params = found
                members = set(invariant)
                blockers = _blockers(ranked, members, gone, pre, returns)
                added = [c for c in blockers if init.breaks(c) is None]
                gone.update((c, returns) for c in blockers if c not in added)
                if added:
                    invariant += added
                    continue
                if blockers:
                    continue
                broken = [c for c in invariant if not post.satisfies(c)]
                fatal = [c for c in broken if c in keep]
                if fatal:
                    stuck = Stuck(fatal[0], action.action.name, pre, post, params)
                    return Inference(tuple(invariant), stuck, ctis, len(gone))
                for c in broken:
                    gone[c] = gone.get(c, 0) + 1
                if drops is not None:
                    drops += [Stuck(c, action.action.name, pre, post, params) for c in broken]
                invariant = [c for c in invariant if c not in broken]
    return Inference(tuple(invariant), None, ctis, len(gone))


def _blockers(
    ranked: Sequence[Clause],
    members: set[Clause],
    gone: dict[Clause, int],
    pre: Structure,
    returns: int,
) -> list[Clause]:
    """The first `BLOCKERS` candidates (smallest first) that the pre state breaks, among
    those not false initially and dropped fewer than `returns` times."""
    out: list[Clause] = []
    state = Sample((pre,))
    for clause in ranked:
        if clause in members or gone.get(clause, 0) >= returns:
            continue
        if not state.violated(clause):
            continue
        out.append(clause)
        if len(out) == BLOCKERS:
            break
    return out


def core(
    invariant: Sequence[Clause], keep: Sequence[Clause], actions: Sequence[ActionQueries]
) -> tuple[Clause, ...]:
    """A subset of an inductive `invariant` that holds `keep` and is inductive itself: the
    closure of `keep` under the premises each action's unsat core names."""
    needed = set(keep)
    frontier = set(keep)
    while frontier:
        grown: set[Clause] = set()
        for action in actions:
            grown |= action.premises(invariant, sorted(frontier, key=_size))
        frontier = grown - needed
        needed |= grown
    return tuple(c for c in invariant if c in needed)
