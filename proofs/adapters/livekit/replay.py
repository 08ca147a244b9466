"""Replaying the model's interleavings against the installed livekit-agents.

The generic part is the engines' `Follow` (`proofs.engines.conformance.follow`):
one stimulus at a time, both invariants checked on what the stand-in server
observed, the model of the release's variant followed along with its first
divergence kept, and everything still in flight delivered at the end (`drain`),
so the verdict is about the conversation at rest. What is livekit's here is
the `Outcome` a run reports: an item the local context holds that the server
lost, an item a push brought back, which line of `agent_activity.py` each push
came from, and how each call was driven.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Protocol

from attrs import frozen

from model import INTERNAL_MOVES, Config, Invariant, Move, MoveKind
from proofs.adapters.livekit.adapter import LivekitAdapter
from proofs.engines.conformance.checks import ImplViolation
from proofs.engines.conformance.follow import Follow, sequences

__all__ = ["Outcome", "early_calls", "run", "sequences"]

log = logging.getLogger("ackguard.livekit")


@frozen
class Outcome:
    """What the real code did under one interleaving."""

    config: Config
    #: The stimuli given, as `Move.label()` writes them.
    stimuli: tuple[str, ...]
    #: The first violation of each invariant the real code showed (run and drain).
    violations: dict[Invariant, ImplViolation]
    #: How many stimuli had been given when each violation first showed.
    violation_steps: dict[Invariant, int]
    #: Items the local context holds that reached the server and are gone from it.
    lost: tuple[str, ...]
    #: Items a delete removed and a later create brought back, still on the server.
    recreated: tuple[str, ...]
    #: Calls that reached no push (a site the release does not have).
    unreached: tuple[int, ...]
    #: The first step at which the real code left the model (None: it never did).
    divergence: str | None
    #: A stimulus the real code could not take (nothing in flight to deliver...).
    stuck: str | None
    #: Which line of agent_activity.py each call's push came from.
    push_lines: dict[int, int]
    errors: tuple[str, ...]
    background_losses: tuple[str, ...]
    #: How each call was driven: "public" (AgentSession's API) or "direct" (the
    #: activity's generation coroutine on a speech handle of its own).
    drive: dict[int, str]

    @property
    def broken(self) -> frozenset[Invariant]:
        return frozenset(self.violations)


def _outcome(session: Follow[LivekitAdapter], stuck: str | None) -> Outcome:
    adapter = session.adapter
    observation = adapter.observe()
    lost = tuple(
        item
        for item in observation.local
        if item in observation.reached and item not in observation.server
    )
    recreated = tuple(
        sorted(item for _, item in observation.recreated if item in observation.server)
    )
    lines = {
        index: record.line
        for index, record in adapter.tracker.records.items()
        if record.line is not None
    }
    unreached = tuple(adapter.unreached())
    errors = tuple(e for e in adapter.errors() if "reached no push" not in e)
    return Outcome(
        config=session.config,
        stimuli=tuple(session.stimuli),
        violations=dict(session.violations),
        violation_steps=dict(session.violation_steps),
        lost=lost,
        recreated=recreated,
        unreached=unreached,
        divergence=session.divergence,
        stuck=stuck,
        push_lines=lines,
        errors=errors,
        background_losses=tuple(adapter.background_losses()),
        drive={
            index: "direct" if index in adapter.direct else "public"
            for index in range(len(session.config.scenario.calls))
        },
    )


def early_calls(stimuli: Iterable[Move]) -> frozenset[int]:
    """The calls whose items a run makes before the call (its `before-call` steps):
    the adapter sets their generations up for it (`LivekitAdapter.early`)."""
    return frozenset(
        m.task for m in stimuli if m.kind is MoveKind.BEFORE_CALL and m.task is not None
    )


class _Gives(Protocol):
    def give(self, move: Move) -> None: ...


def give_until_stuck(session: _Gives, stimuli: Iterable[Move]) -> str | None:
    """Give the real code each stimulus (internal moves are skipped) until it cannot
    take one: what stopped it, or None when it took them all."""
    for move in stimuli:
        if move.kind in INTERNAL_MOVES:
            continue
        try:
            session.give(move)
        except (IndexError, LookupError) as error:
            return f"{move.label()}: the real code cannot take it ({error!r})"
    return None


def run(
    config: Config,
    stimuli: Iterable[Move],
    *,
    drain: bool = True,
    build: type[LivekitAdapter] = LivekitAdapter,
) -> Outcome:
    """Give the real code `stimuli` (internal moves are skipped), then drain; `build`
    is the adapter class (a mutant, or one that records what it saw)."""
    stimuli = tuple(stimuli)
    early = early_calls(stimuli)
    session = Follow(config, lambda c: build(c, early=early))
    try:
        stuck = give_until_stuck(session, stimuli)
        if drain:
            server = session.adapter.server
            session.drain(lambda: (bool(server.to_server), bool(server.to_client)))
        return _outcome(session, stuck)
    finally:
        quiet_close(session)


class _Closes(Protocol):
    def close(self) -> None: ...


def quiet_close(session: _Closes) -> None:
    """Close a run with livekit's own logging silenced (its tasks log as they end)."""
    logger = logging.getLogger("livekit")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        session.close()
    finally:
        logger.setLevel(level)
