"""Following the model along a run of released code, without stopping where it leaves.

`Lockstep` fails at the first step where an implementation leaves the model;
code that is not ours (a released framework) is asked what it does instead. A
`Follow` gives an adapter one stimulus at a time on a virtual-time loop, lets
the code run until every task is blocked, and then:

* checks both invariants on the raw observation (`checks.impl_violations`),
  keeping the first violation of each and after how many stimuli it showed;
* follows the model along: the observed state, mapped by the abstraction
  function, must be one the model reaches by the same stimulus and its internal
  moves. The first step where it is not is kept (`divergence`) and the run goes on.

`drain` then delivers what is still in flight, in order, so that a verdict is
about the conversation at rest; `sequences` lists every maximal stimulus
sequence the model allows, for a sweep. Any adapter can be followed; the
livekit check is the one that does (`proofs.adapters.livekit.replay`).

The loop is the caller's choice (`SteppedLoop`: anything that can be made the
running loop and run until blocked): the conformance loop with virtual time by
default, or a loop with real sockets for code that talks over a websocket
(`proofs.adapters.livekit.socket_loop`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractContextManager
from typing import Generic, Protocol, TypeVar

from model import Config, Invariant, Move, MoveKind, State, initial_state
from model.local_order import matching
from proofs.engines.conformance.abstraction import abstract
from proofs.engines.conformance.adapter import Adapter
from proofs.engines.conformance.checks import ImplViolation, impl_violations
from proofs.engines.conformance.lockstep import ModelSide, explain, model_side, stimulate
from proofs.engines.conformance.virtual_time import new_virtual_loop

A = TypeVar("A", bound=Adapter)

#: How many deliveries `drain` makes before it declares the conversation restless.
DRAIN_LIMIT = 500


class SteppedLoop(Protocol):
    """What `Follow` and `shutdown` use of an event loop: the harness steps it; it
    never runs by itself, so every interleaving comes from the stimuli."""

    def running(self) -> AbstractContextManager[None]:
        """Make it the running loop for code called from outside its callbacks."""
        ...

    def run_until_blocked(self) -> int:
        """Run until nothing can go on; how much ran."""
        ...

    def close(self) -> None: ...


class Follow(Generic[A]):
    """One run of an adapter, stimulus by stimulus, with the model followed along."""

    def __init__(
        self,
        config: Config,
        build: Callable[[Config], A],
        loop: Callable[[], SteppedLoop] = new_virtual_loop,
    ) -> None:
        """`build` makes the adapter with `loop()`'s loop running, so it may create
        tasks on it."""
        self.config = config
        self.loop: SteppedLoop = loop()
        try:
            with self.loop.running():
                self.adapter: A = build(config)
        except BaseException:
            shutdown(self.loop)
            raise
        self.side: ModelSide = model_side(config)
        self.state: State | None = initial_state(config)
        self.violations: dict[Invariant, ImplViolation] = {}
        self.violation_steps: dict[Invariant, int] = {}
        #: The first step at which the code left the model (None: it never did).
        self.divergence: str | None = None
        #: The stimuli given, as `Move.label()` writes them.
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
            got = abstract(observation, self.state)
        except ValueError as error:
            self._diverge(where, f"no model state for it: {error}")
            return
        got = matching(got, expected)
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
        """One stimulus, then the code runs until it is blocked."""
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
        """The move the model of this variant makes for a stimulus of another's trace
        (`ModelSide.stimulus`: deliveries by position, every other stimulus exactly)."""
        if self.state is None:
            return None
        return self.side.stimulus(self.state, move)

    def drain(self, in_flight: Callable[[], tuple[bool, bool]]) -> None:
        """Deliver everything in flight, in order, until the conversation is at rest.

        `in_flight` says whether an op is on its way to the server and whether an
        event is on its way to the client; it counts what the observation leaves
        out (items outside the scenario) too.
        """
        for _ in range(DRAIN_LIMIT):
            to_server, to_client = in_flight()
            if to_server:
                self.give(Move(MoveKind.SERVER_APPLY))
            elif to_client:
                self.give(Move(MoveKind.CLIENT_APPLY))
            else:
                return
        raise RuntimeError("the conversation did not come to rest")

    def close(self) -> None:
        with self.loop.running():
            self.adapter.close()
        shutdown(self.loop)


def shutdown(loop: SteppedLoop) -> None:
    """Cancel whatever still runs, let it unwind on the loop, close the loop."""
    loop.run_until_blocked()
    for _ in range(5):
        with loop.running():
            # the running loop's tasks: `loop` need be no more than a SteppedLoop
            pending = [task for task in asyncio.all_tasks() if not task.done()]
        if not pending:
            break
        for task in pending:
            task.cancel()
        loop.run_until_blocked()
    loop.close()


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
