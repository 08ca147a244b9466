"""Replaying the model's interleavings against the installed livekit-agents.

A run gives the adapter one stimulus at a time (the non-internal moves of a
model trace), lets the real code run until every task is blocked, and then:

* checks both invariants on what the stand-in server observed
  (`proofs.engines.conformance.checks`, the harness's own implementation-side checks);
* follows the model of the release's variant along: the real state, mapped by
  the harness's abstraction function, must be one the model reaches by the same
  stimulus and its internal moves. The first step where it is not is reported
  (`divergence`); the run goes on, since the question asked of the real code is
  what it does, not whether it is the model.

After the trace every op and event still in flight is delivered in order
(`drain`), so the verdict is about the conversation at rest: an item the local
context holds that the server lost, or an item a push brought back.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Iterable, Sequence

from attrs import frozen

from model import INTERNAL_MOVES, Config, Invariant, Move, MoveKind, State, initial_state
from proofs.adapters.livekit.adapter import LivekitAdapter
from proofs.engines.conformance.abstraction import abstract
from proofs.engines.conformance.checks import ImplViolation, impl_violations
from proofs.engines.conformance.lockstep import ModelSide, explain, model_side, stimulate
from proofs.engines.conformance.virtual_time import VirtualTimeLoop, new_virtual_loop

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


class _Run:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.loop: VirtualTimeLoop = new_virtual_loop()
        try:
            with self.loop.running():
                self.adapter = LivekitAdapter(config)
        except BaseException:
            _shutdown(self.loop)
            raise
        self.side: ModelSide = model_side(config)
        self.state: State | None = initial_state(config)
        self.violations: dict[Invariant, ImplViolation] = {}
        self.violation_steps: dict[Invariant, int] = {}
        self.divergence: str | None = None
        self.stimuli: list[str] = []
        self._compare(self.side.closure(initial_state(config)), "the start")

    def _compare(self, expected: Collection[State], where: str) -> None:
        observation = self.adapter.observe()
        for invariant, violation in impl_violations(observation, self.config).items():
            if invariant not in self.violations:
                self.violations[invariant] = violation
                self.violation_steps[invariant] = len(self.stimuli)
        if self.divergence is not None:
            return
        try:
            got = abstract(observation)
        except ValueError as error:
            self._diverge(where, f"no model state for it: {error}")
            return
        if got not in expected:
            self._diverge(where, explain(got, expected))
            return
        left = self.side.internal(got)
        if left:
            self._diverge(where, "the real code stopped where the model goes on: " + _labels(left))
            return
        self.state = self.side.canonical(got)

    def _diverge(self, where: str, detail: str) -> None:
        self.divergence = f"after {where}: {detail}"
        self.state = None

    def give(self, move: Move) -> None:
        """One stimulus, then the real code runs until it is blocked."""
        self.stimuli.append(move.label())
        model_move = self._model_move(move)
        with self.loop.running():
            stimulate(self.adapter, move)
        self.loop.run_until_blocked()
        if model_move is None and self.divergence is None:
            self._diverge(move.label(), "the model does not allow this stimulus here")
        expected: Collection[State] = ()
        if self.state is not None and model_move is not None:
            expected = self.side.closure(self.side.after(self.state, model_move))
        self._compare(expected, move.label())

    def _model_move(self, move: Move) -> Move | None:
        """The move the model of this variant makes for a stimulus of another's trace.

        Deliveries are positional (the next op, the next event), so their item
        label may differ between variants; every other stimulus must match.
        """
        if self.state is None:
            return None
        for candidate in self.side.stimuli(self.state):
            if candidate == move:
                return candidate
        if move.kind in (MoveKind.SERVER_APPLY, MoveKind.SERVER_REJECT, MoveKind.CLIENT_APPLY):
            for candidate in self.side.stimuli(self.state):
                if candidate.kind is move.kind:
                    return candidate
        return None

    def drain(self) -> None:
        """Deliver everything in flight, in order, until the conversation is at rest."""
        server = self.adapter.server
        for _ in range(500):
            if server.to_server:
                self.give(Move(MoveKind.SERVER_APPLY))
            elif server.to_client:
                self.give(Move(MoveKind.CLIENT_APPLY))
            else:
                return
        raise RuntimeError("the conversation did not come to rest")

    def outcome(self, stuck: str | None) -> Outcome:
        adapter = self.adapter
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
            config=self.config,
            stimuli=tuple(self.stimuli),
            violations=dict(self.violations),
            violation_steps=dict(self.violation_steps),
            lost=lost,
            recreated=recreated,
            unreached=unreached,
            divergence=self.divergence,
            stuck=stuck,
            push_lines=lines,
            errors=errors,
            background_losses=tuple(adapter.background_losses()),
            drive={
                index: "direct" if index in adapter.direct else "public"
                for index in range(len(self.config.scenario.calls))
            },
        )

    def close(self) -> None:
        with self.loop.running():
            self.adapter.close()
        _shutdown(self.loop)


def _shutdown(loop: VirtualTimeLoop) -> None:
    """Cancel whatever still runs, let it unwind on the loop, close the loop."""
    loop.run_until_blocked()
    for _ in range(5):
        pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
        if not pending:
            break
        for task in pending:
            task.cancel()
        loop.run_until_blocked()
    loop.close()


def run(config: Config, stimuli: Iterable[Move], *, drain: bool = True) -> Outcome:
    """Give the real code `stimuli` (internal moves are skipped), then drain."""
    session = _Run(config)
    stuck: str | None = None
    try:
        for move in stimuli:
            if move.kind in INTERNAL_MOVES:
                continue
            try:
                session.give(move)
            except (IndexError, LookupError) as error:
                stuck = f"{move.label()}: the real code cannot take it ({error!r})"
                break
        if drain:
            session.drain()
        return session.outcome(stuck)
    finally:
        _quiet_close(session)


def _quiet_close(session: _Run) -> None:
    logger = logging.getLogger("livekit")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        session.close()
    finally:
        logger.setLevel(level)


def _labels(moves: Sequence[Move]) -> str:
    return ", ".join(move.label() for move in moves)


def sequences(config: Config, limit: int = 2000) -> list[tuple[Move, ...]]:
    """Every maximal stimulus sequence the model allows for `config`, shortest first.

    Internal moves are the tasks' own business; after each stimulus the model
    may end in any quiescent state of its closure, and each is a branch.
    """
    side = model_side(config)
    found: set[tuple[Move, ...]] = set()

    def walk(state: State, prefix: tuple[Move, ...]) -> None:
        if len(found) >= limit:
            raise RuntimeError(f"more than {limit} stimulus sequences")
        moves = side.stimuli(state)
        if not moves:
            found.add(prefix)
            return
        for move in moves:
            for successor in sorted(side.closure(side.after(state, move)), key=repr):
                if not side.internal(successor):
                    walk(successor, (*prefix, move))

    walk(side.canonical(initial_state(config)), ())
    return sorted(found, key=lambda moves: (len(moves), [m.label() for m in moves]))
