"""The two invariants, each a function from a state to None or a violation.

1. No unintended delete: no push ever sends a delete for an item that has been
   acknowledged unless that push intends to remove it.
2. Agreement at rest: when nothing is in flight, (a) every item the local
   context holds that was pushed (it reached the server, or the server refused
   its create because the item it was to follow had been deleted) is on the
   server, and (b) no item a delete removed from the server is back on it.

Clause (b) is ours: the design's wording of (2) is (a) alone, which misses the
seed's cleanup finding (a late tool push re-creating a never-played item that
the cleanup deleted). `docs/invariants.md` says why both clauses are needed.
"""

from __future__ import annotations

from attrs import frozen

from model.moves import Config
from model.state import State
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
        if pushed and item not in state.server:
            deleters = sorted(task for task, deleted, _ in state.deletes_sent if deleted == item)
            task = deleters[0] if deleters else None
            site = config.call(task).site if task is not None else None
            return Violation(
                Invariant.AGREEMENT_AT_REST,
                item,
                task,
                site,
                f"the local context holds {item} but the server lost it",
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
    return None


CHECKS = {
    Invariant.NO_UNINTENDED_DELETE: no_unintended_delete,
    Invariant.AGREEMENT_AT_REST: agreement_at_rest,
}


def check(state: State, config: Config, invariant: Invariant) -> Violation | None:
    """The violation of `invariant` in `state`, if any: what every engine asks."""
    return CHECKS[invariant](state, config)
