"""The invariants, each a function from a state to None or a violation.

1. No unintended delete: no push ever sends a delete for an item that has been
   acknowledged unless that push intends to remove it.
2. Agreement at rest: when nothing is in flight, (a) every item the local
   context holds that was pushed (it reached the server, or the server refused
   its create because the item it was to follow, or the function call it
   answers, was gone) or that was never sent at all is on the server, and (b)
   no item a delete removed from the server is back on it (by a create, or by
   a reconnect's rebuild).
3. The mirror is true at rest: when nothing is in flight, the session's mirror
   holds exactly the server conversation's items.
4. Nothing twice: no item id is ever on the server conversation twice.
5. Removed at rest: when nothing is in flight, no item that a finished push
   meant to remove (the drops of its call, and for a dropped item the local
   context holds under a fresh id of its own, the server's item too) is on the
   server conversation.

A push has finished when it returned or failed (`Pc.DONE`, `Pc.FAILED`); a
session that withholds a delete sends none, so it cannot break 1, and the item it
leaves on the server breaks 5.

6. No wait on a settled op: no push goes on waiting for an op once the server
   has applied or refused that op and its answer has reached the session; a
   wait that only the timeout ends counts, since the answer came before it.

"Nothing in flight" (`State.at_rest`): no op, no event, no push under way, no
request kept back, and a server session active. Invariant 3 compares items
with their counts, not their order.

Clause (b) is ours: the design's wording of (2) is (a) alone, which misses the
seed's cleanup finding (a late tool push re-creating a never-played item that
the cleanup deleted). `docs/invariants.md` says why both clauses are needed.
"""

from __future__ import annotations

from collections import Counter

from attrs import frozen

from model.moves import Config, server_id
from model.shapes import DuplicateRejection, SessionShape
from model.state import Pc, State
from model.variants import Invariant


@frozen
class Violation:
    """A broken invariant with the item it lost and the push to blame, so a
    counterexample says what went wrong and not only that something did."""

    invariant: Invariant
    item: str
    #: The task whose push caused it, when one did.
    task: int | None
    site: str | None
    reason: str

    def describe(self) -> str:
        """One line for traces and tables."""
        who = f"T{self.task} ({self.site})" if self.task is not None else "no push"
        return f"{self.invariant.value}: {self.item}: {self.reason} [{who}]"


def no_unintended_delete(state: State, config: Config) -> Violation | None:
    """Invariant 1: a delete sent for an acknowledged item its push did not mean to remove."""
    for task, item, was_acked in sorted(state.deletes_sent):
        if was_acked and item not in config.call(task).drops:
            site = config.call(task).site
            return Violation(
                Invariant.NO_UNINTENDED_DELETE,
                item,
                task,
                site,
                f"the {site} push sent a delete for acknowledged {item}, which it did not "
                "mean to remove",
            )
    return None


def agreement_at_rest(state: State, config: Config) -> Violation | None:
    """Invariant 2 when nothing is in flight: a pushed item the server lost, or a
    deleted one it has again."""
    if not state.at_rest():
        return None
    for item in state.local:
        pushed = item in state.reached or item in state.refused
        never_sent = item not in state.sent
        # an item learned under a fresh id is on the server as its twin
        on_server = item in state.server or server_id(config, item) in state.server
        if (pushed or never_sent) and not on_server:
            deleters = sorted(task for task, deleted, _ in state.deletes_sent if deleted == item)
            task = deleters[0] if deleters else None
            site = config.call(task).site if task is not None else None
            return Violation(
                Invariant.AGREEMENT_AT_REST,
                item,
                task,
                site,
                f"the local context holds {item} but the server lost it"
                if pushed
                else f"the local context holds {item}, which was never sent",
            )
    for task, item in sorted(state.recreated):
        if item in state.server:
            site = config.call(task).site
            return Violation(
                Invariant.AGREEMENT_AT_REST,
                item,
                task,
                site,
                f"{item} was deleted from the server, and the {site} push created it again",
            )
    for item in sorted(state.rebuilt):
        if item in state.server:
            return Violation(
                Invariant.AGREEMENT_AT_REST,
                item,
                None,
                None,
                f"{item} was deleted from the server, and the reconnect's rebuild put it back",
            )
    return None


def mirror_true_at_rest(state: State, config: Config) -> Violation | None:
    """Invariant 3 when nothing is in flight: the mirror and the server hold the same
    items, each as many times."""
    if not state.at_rest():
        return None
    mirror, server = Counter(state.mirror), Counter(state.server)
    for item in sorted(set(mirror) | set(server)):
        if mirror[item] != server[item]:
            where = (
                "the mirror holds it and the server does not"
                if server[item] < mirror[item]
                else "the server holds it and the mirror does not"
            )
            if server[item] > 1 and mirror[item]:
                where = "the server holds it more often than the mirror"
            return Violation(Invariant.MIRROR_TRUE_AT_REST, item, None, None, f"at rest, {where}")
    return None


def nothing_twice(state: State, config: Config) -> Violation | None:
    """Invariant 4: an item id on the server conversation twice (the trace shows
    which pushes sent it)."""
    counts = Counter(state.server)
    for item in sorted(counts):
        if counts[item] > 1:
            return Violation(
                Invariant.NOTHING_TWICE,
                item,
                None,
                None,
                f"the server holds {item} {counts[item]} times",
            )
    return None


def intended_removals(config: Config, task: int, copy: tuple[str, ...] | None) -> tuple[str, ...]:
    """What push `task` meant to remove: the drops of its call, those of a caller's copy
    only where the copy had them (a caller cannot mean to remove what it never saw)."""
    drops = config.call(task).drops
    if copy is None:
        return drops
    return tuple(item for item in drops if item in copy)


def removed_at_rest(state: State, config: Config) -> Violation | None:
    """Invariant 5 when nothing is in flight: an item a finished push meant to remove
    is still on the server (a delete withheld, dropped, refused, or undone)."""
    if not state.at_rest():
        return None
    for task, run in enumerate(state.tasks):
        if run.pc not in (Pc.DONE, Pc.FAILED):
            continue
        site = config.call(task).site
        for dropped in intended_removals(config, task, run.copy):
            for item in dict.fromkeys((dropped, server_id(config, dropped))):
                if item in state.server:
                    return Violation(
                        Invariant.REMOVED_AT_REST,
                        item,
                        task,
                        site,
                        f"the {site} push meant to remove {item}, and at rest the server "
                        "still holds it",
                    )
    return None


def no_wait_on_settled(state: State, config: Config) -> Violation | None:
    """Invariant 6: a push still waited for an op after the server's answer to that
    op (applied or refused) reached the session (`Task.stalled`)."""
    for task, pushed in enumerate(state.tasks):
        if pushed.stalled:
            kind, item = min(pushed.stalled, key=lambda key: (key[0].value, key[1]))
            site = config.call(task).site
            return Violation(
                Invariant.NO_WAIT_ON_SETTLED,
                item,
                task,
                site,
                f"the server answered the {site} push's {kind.value} of {item}, and the push "
                "went on waiting for it",
            )
    return None


def by_construction(invariant: Invariant, shape: SessionShape) -> str | None:
    """Why `invariant` cannot break under `shape` whatever runs, if it cannot: a
    verdict says so instead of only "holds"."""
    if invariant is Invariant.NO_UNINTENDED_DELETE and not shape.sends_deletes:
        return "the session sends no deletes"
    if invariant is Invariant.NOTHING_TWICE and shape.sends_deletes:
        return "the server refuses a create for an id it holds; a rebuild copies the mirror"
    if invariant is Invariant.NO_WAIT_ON_SETTLED:
        if not shape.waits_for_acks:
            return "the session waits for no acks"
        if shape.duplicate_rejection is DuplicateRejection.SETTLES:
            return "every answer the session applies ends its own push's wait for that op"
    return None


CHECKS = {
    Invariant.NO_UNINTENDED_DELETE: no_unintended_delete,
    Invariant.AGREEMENT_AT_REST: agreement_at_rest,
    Invariant.MIRROR_TRUE_AT_REST: mirror_true_at_rest,
    Invariant.NOTHING_TWICE: nothing_twice,
    Invariant.REMOVED_AT_REST: removed_at_rest,
    Invariant.NO_WAIT_ON_SETTLED: no_wait_on_settled,
}


def check(state: State, config: Config, invariant: Invariant) -> Violation | None:
    """The violation of `invariant` in `state`, if any: what every engine asks."""
    return CHECKS[invariant](state, config)
