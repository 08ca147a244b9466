"""The four invariants, checked on the implementation's side from what the fake
server and transport observed, without going through the abstraction function.

The model's own checks (`model.invariants`) run on the matched model state too;
the harness requires the two sides to agree, so a wrong abstraction cannot hide
a violation and a wrong model cannot invent one.
"""

from __future__ import annotations

from collections import Counter

from attrs import frozen

from model import Config, Invariant, Pc
from proofs.engines.conformance.adapter import Observation

_RUNNING = frozenset({Pc.COPIED, Pc.WAIT_ACTIVITY, Pc.WAIT_PROVIDER, Pc.WAIT_ACKS, Pc.WAIT_SEND})


@frozen
class ImplViolation:
    invariant: Invariant
    item: str
    task: int | None
    reason: str


def at_rest(observation: Observation) -> bool:
    """Nothing in flight, no push under way, no request kept back, and connected."""
    return (
        observation.connected
        and observation.kept is None
        and not observation.to_server
        and not observation.to_client
        and all(task.phase not in _RUNNING for task in observation.tasks)
    )


def unintended_delete(observation: Observation, config: Config) -> ImplViolation | None:
    """A delete sent for an item the client had seen acknowledged, not in its call's drops."""
    for task, item, acked in sorted(observation.deletes_sent):
        if acked and item not in config.call(task).drops:
            return ImplViolation(
                Invariant.NO_UNINTENDED_DELETE,
                item,
                task,
                f"T{task} ({config.call(task).site}) sent a delete for acknowledged {item}",
            )
    return None


def disagreement_at_rest(observation: Observation, config: Config) -> ImplViolation | None:
    """At rest: an item of the local context that was pushed (it reached the server,
    or its create was refused for following a deleted item) is not on the server, or
    an item a delete removed is back."""
    if not at_rest(observation):
        return None
    for item in observation.local:
        pushed = item in observation.reached or item in observation.refused
        never_sent = observation.sent is not None and item not in observation.sent
        if (pushed or never_sent) and item not in observation.server:
            deleters = sorted(t for t, deleted, _ in observation.deletes_sent if deleted == item)
            return ImplViolation(
                Invariant.AGREEMENT_AT_REST,
                item,
                deleters[0] if deleters else None,
                f"the local context holds {item}; the server lost it",
            )
    for task, item in sorted(observation.recreated):
        if item in observation.server:
            return ImplViolation(
                Invariant.AGREEMENT_AT_REST,
                item,
                task,
                f"{item} was deleted and T{task} ({config.call(task).site}) created it again",
            )
    return None


def untrue_mirror_at_rest(observation: Observation, config: Config) -> ImplViolation | None:
    """At rest: the session's mirror and the server hold other items (or as often)."""
    if not at_rest(observation):
        return None
    mirror, server = Counter(observation.mirror), Counter(observation.server)
    for item in sorted(set(mirror) | set(server)):
        if mirror[item] != server[item]:
            return ImplViolation(
                Invariant.MIRROR_TRUE_AT_REST,
                item,
                None,
                f"at rest the mirror holds {item} {mirror[item]} times, the server "
                f"{server[item]} times",
            )
    return None


def twice(observation: Observation, config: Config) -> ImplViolation | None:
    """An item id on the server twice."""
    counts = Counter(observation.server)
    for item in sorted(counts):
        if counts[item] > 1:
            return ImplViolation(
                Invariant.NOTHING_TWICE, item, None, f"the server holds {item} {counts[item]} times"
            )
    return None


def removed_not_gone(observation: Observation, config: Config) -> ImplViolation | None:
    """At rest: an item a finished push meant to remove (its call's drops; a caller's
    copy's only where the copy had them) is on the server (invariant 5)."""
    if not at_rest(observation):
        return None
    for task, view in enumerate(observation.tasks):
        if view.phase not in (Pc.DONE, Pc.FAILED):
            continue
        drops = config.call(task).drops
        meant = drops if view.copy is None else tuple(i for i in drops if i in view.copy)
        for item in meant:
            if item in observation.server:
                return ImplViolation(
                    Invariant.REMOVED_AT_REST,
                    item,
                    task,
                    f"T{task} ({config.call(task).site}) meant to remove {item}; the server "
                    "still holds it",
                )
    return None


def impl_violations(observation: Observation, config: Config) -> dict[Invariant, ImplViolation]:
    found: dict[Invariant, ImplViolation] = {}
    for check in (
        unintended_delete,
        disagreement_at_rest,
        untrue_mirror_at_rest,
        twice,
        removed_not_gone,
    ):
        violation = check(observation, config)
        if violation is not None:
            found[violation.invariant] = violation
    return found
