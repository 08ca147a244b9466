"""Lockstep: the implementation and the model, one stimulus at a time.

Each stimulus is a model move that comes from outside the running tasks (every
move but WAKE and RESUME). The harness gives it to the implementation through
the adapter, runs the event loop until every task is blocked, maps the
implementation's state to a model state (`abstraction.abstract`) and compares.
The implementation's tasks wake and resume on their own, so the state it
reaches must be one of the model states reachable from `step(state, move)` by
WAKE and RESUME moves alone (refinement), and one in which the model has no
such move left (else the implementation stopped where the model goes on). The
run continues from the matched state. Both sides' invariant checks run after
every step and must agree.

A *burst* gives several stimuli before the loop runs, as when several messages
arrive in one loop iteration: the implementation must then land in a state the
model reaches by applying them in some order, interleaved with internal moves.
With a scheduler that reorders ready callbacks, that is how a race at an await
the model does not have shows up.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import cast

import attrs
from attrs import frozen

from model import (
    INTERNAL_MOVES,
    MOVES,
    STIMULI,
    Actor,
    Config,
    Event,
    Invariant,
    Lock,
    Move,
    MoveKind,
    MoveSpec,
    Op,
    OpKind,
    State,
    Task,
    check,
    initial_state,
    successors,
)
from model.local_order import matching
from proofs.engines.conformance.abstraction import abstract
from proofs.engines.conformance.adapter import (
    Adapter,
    AdapterFactory,
    Observation,
    Reconnecting,
)
from proofs.engines.conformance.checks import impl_violations
from proofs.engines.conformance.loop import Fifo, Replay, Schedule, Scheduler, new_loop
from proofs.engines.conformance.steps import Step, format_steps
from proofs.errors import AckguardError, InternalError, NotEnabled

__all__ = [
    "BURST_KEYS",
    "STIMULI",
    "STIMULUS_HANDLERS",
    "FoundViolation",
    "Lockstep",
    "Mismatch",
    "ModelSide",
    "burst_compatible",
    "explain",
    "model_side",
    "stimulate",
    "trace_steps",
]


class Mismatch(AckguardError):
    """The implementation left the model's behaviour."""

    def __init__(self, steps: Sequence[Step], detail: str) -> None:
        self.steps = tuple(steps)
        self.detail = detail
        super().__init__(f"{detail}\n  after: {format_steps(self.steps)}")


@frozen
class FoundViolation:
    """An invariant the implementation broke, first seen after `steps`."""

    invariant: Invariant
    item: str
    task: int | None
    site: str | None
    reason: str
    steps: tuple[Step, ...]

    @property
    def moves(self) -> tuple[Move, ...]:
        return tuple(move for step in self.steps for move in step.moves)


# -- the model side, memoised per config ---------------------------------------------


#: Deliveries, given by position: the next op, the next event (`ModelSide.stimulus`).
_POSITIONAL = frozenset({MoveKind.SERVER_APPLY, MoveKind.SERVER_REJECT, MoveKind.CLIENT_APPLY})


class ModelSide:
    """The model's moves from a state, with the internal-move closures the harness needs.

    States are big tuples that Python re-hashes on every lookup, so the caches
    are keyed by the identity of the model's own state objects (kept alive here),
    and `canonical` maps an equal state to that object with one hash.
    """

    def __init__(self, config: Config) -> None:
        self.config = config
        self._canonical: dict[State, State] = {}
        self._successors: dict[int, tuple[tuple[Move, State], ...]] = {}
        self._closures: dict[int, dict[State, int]] = {}

    def canonical(self, state: State) -> State:
        return self._canonical.setdefault(state, state)

    def successors(self, state: State) -> tuple[tuple[Move, State], ...]:
        state = self.canonical(state) if id(state) not in self._successors else state
        found = self._successors.get(id(state))
        if found is None:
            found = tuple(
                (move, self.canonical(successor))
                for move, successor in successors(state, self.config)
            )
            self._successors[id(state)] = found
        return found

    def stimuli(self, state: State) -> list[Move]:
        return [move for move, _ in self.successors(state) if move.kind in STIMULI]

    def internal(self, state: State) -> list[Move]:
        return [move for move, _ in self.successors(state) if move.kind in INTERNAL_MOVES]

    def stimulus(self, state: State, move: Move) -> Move | None:
        """The stimulus the model makes in `state` for `move` of some trace, or None.

        Deliveries are positional (the next op, the next event), so their item label
        may differ between models of one run (another variant's trace, the harness's
        unlabelled drain): the first delivery of that kind stands for it; every other
        stimulus must match exactly."""
        stimuli = self.stimuli(state)
        if move in stimuli:
            return move
        if move.kind in _POSITIONAL:
            return next((m for m in stimuli if m.kind is move.kind), None)
        return None

    def after(self, state: State, move: Move) -> State:
        for candidate, successor in self.successors(state):
            if candidate == move:
                return successor
        raise NotEnabled(f"{move.label()} is not enabled")

    def closure(self, state: State) -> dict[State, int]:
        """Every state reachable from `state` by internal moves alone, `state` included,
        with how many internal moves it takes."""
        state = self.canonical(state)
        found = self._closures.get(id(state))
        if found is None:
            found = {state: 0}
            queue = deque([state])
            while queue:
                current = queue.popleft()
                for move, successor in self.successors(current):
                    if move.kind in INTERNAL_MOVES and successor not in found:
                        found[successor] = found[current] + 1
                        queue.append(successor)
            self._closures[id(state)] = found
        return found

    def after_burst(self, state: State, moves: Sequence[Move]) -> dict[State, int]:
        """States reached by applying every move of `moves` once, in any order the
        model allows, interleaved with internal moves (with how many of those)."""
        start = (state, tuple(sorted(moves, key=_move_key)))
        seen = {start: 0}
        queue = deque([start])
        ends: dict[State, int] = {}
        while queue:
            current, left = queue.popleft()
            if not left:
                for end, internal in self.closure(current).items():
                    total = seen[(current, left)] + internal
                    ends[end] = min(total, ends.get(end, total))
                continue
            for move, successor in self.successors(current):
                if move.kind in INTERNAL_MOVES:
                    nxt = (successor, left)
                elif move in left:
                    rest = list(left)
                    rest.remove(move)
                    nxt = (successor, tuple(rest))
                else:
                    continue
                if nxt not in seen:
                    seen[nxt] = seen[(current, left)] + (move.kind in INTERNAL_MOVES)
                    queue.append(nxt)
        return ends


def _move_key(move: Move) -> tuple[str, int, str]:
    return (move.kind.value, -1 if move.task is None else move.task, move.item or "")


_MODEL_SIDES: dict[Config, ModelSide] = {}


def model_side(config: Config) -> ModelSide:
    side = _MODEL_SIDES.get(config)
    if side is None:
        if len(_MODEL_SIDES) > 256:
            _MODEL_SIDES.clear()
        side = _MODEL_SIDES[config] = ModelSide(config)
    return side


def trace_steps(config: Config, moves: Iterable[Move]) -> tuple[Step, ...]:
    """The steps that replay a model trace in an implementation whose tasks wake
    and resume as soon as they can.

    A stimulus is its own step, unless the trace gives it while a WAKE or RESUME
    it has not taken yet is already enabled: then the implementation would have
    made that move first, so the stimulus joins the previous step's burst and
    arrives before the loop runs (when the two can arrive together, and the
    stimulus is enabled where that burst starts: a burst's moves are given
    before any of them is taken).
    """
    side = model_side(config)
    state = side.canonical(initial_state(config))
    steps: list[list[Move]] = []
    #: The state the last step starts from: every move of a burst must be enabled there.
    start = state
    for move in moves:
        if move.kind not in INTERNAL_MOVES:
            postponed = bool(side.internal(state))
            last = steps[-1] if steps else None
            if (
                postponed
                and last is not None
                and len(last) < 3
                and burst_compatible([*last, move])
                and move not in last
                and move in side.stimuli(start)
            ):
                last.append(move)
            else:
                steps.append([move])
                start = state
        state = side.after(state, move)
    return tuple(Step(tuple(group)) for group in steps)


# -- stimuli ------------------------------------------------------------------------


#: How each stimulus reaches an adapter; `stimulate` refuses a kind it lacks.
def _before_call(adapter: Adapter, move: Move) -> None:
    """A site's items are created ahead of its call: an adapter that can make that
    happen in the real code has `born(task)`; one that cannot does nothing, and
    its implementation creates them at the call, so where the local order differs
    the next comparison reports it (the local context is compared in order)."""
    born = getattr(adapter, "born", None)
    if born is not None:
        born(_task(move))


STIMULUS_HANDLERS: dict[MoveKind, Callable[[Adapter, Move], None]] = {
    MoveKind.COPY: lambda adapter, move: adapter.copy(_task(move)),
    MoveKind.CALL: lambda adapter, move: adapter.call(_task(move)),
    MoveKind.SERVER_APPLY: lambda adapter, move: adapter.server_apply(),
    MoveKind.SERVER_REJECT: lambda adapter, move: adapter.server_reject(),
    MoveKind.CLIENT_APPLY: lambda adapter, move: adapter.client_apply(),
    MoveKind.MODEL_CREATES: lambda adapter, move: adapter.model_creates(_item(move)),
    MoveKind.LEARN: lambda adapter, move: adapter.learn(_item(move)),
    MoveKind.TIMEOUT: lambda adapter, move: adapter.timeout(_task(move)),
    MoveKind.DISCONNECT: lambda adapter, move: _reconnecting(adapter, move).disconnect(),
    MoveKind.CONNECT: lambda adapter, move: _reconnecting(adapter, move).connect(),
    MoveKind.MODEL_ANCHORS_ON_DELETED: lambda adapter, move: _no_stale_anchor(move),
    MoveKind.BEFORE_CALL: lambda adapter, move: _before_call(adapter, move),
}


def _no_stale_anchor(move: Move) -> None:
    raise NotEnabled(
        f"{move.label()}: the adapter interface cannot anchor a model item on a deleted one"
    )


def _reconnecting(adapter: Adapter, move: Move) -> Reconnecting:
    """The adapter, if it drives a connection (`Reconnecting`)."""
    if not (hasattr(adapter, "disconnect") and hasattr(adapter, "connect")):
        raise NotEnabled(f"{move.label()}: this adapter has no connection to drop")
    return cast(Reconnecting, adapter)


def stimulate(adapter: Adapter, move: Move) -> None:
    """Give one stimulus to the implementation (with the loop running, not run)."""
    if move.kind in INTERNAL_MOVES:
        raise NotEnabled(f"{move.label()} is internal: the implementation makes it on its own")
    handler = STIMULUS_HANDLERS.get(move.kind)
    if handler is None:
        raise InternalError(f"the harness has no handler for the stimulus {move.kind.value!r}")
    handler(adapter, move)


def _task(move: Move) -> int:
    if move.task is None:
        raise NotEnabled(f"{move.label()} names no task")
    return move.task


def _item(move: Move) -> str:
    if move.item is None:
        raise NotEnabled(f"{move.label()} names no item")
    return move.item


def _burst_key(spec: MoveSpec) -> Callable[[Move], object]:
    """What a move of this kind occupies in a burst, read off its row of `MOVES`.

    A move that takes a FIFO's head occupies that FIFO (only its head can go);
    one that names its task occupies that task (a task makes one move at a
    time); one that appends to a FIFO from outside any task (the model's next
    item) occupies that FIFO's tail; one told apart by its item occupies it.
    """
    if spec.actor is Actor.NETWORK:
        # a drop or a reconnect touches both FIFOs at once
        return lambda move: ("connection",)
    if spec.takes is not None:
        taken = ("takes", spec.takes)
        return lambda move: taken
    if spec.identified_by == "task":
        return lambda move: ("task", move.task)
    if spec.gives is not None:
        given = ("gives", spec.gives)
        return lambda move: given
    if spec.identified_by == "item":
        kind = spec.kind
        return lambda move: (kind, move.item)
    raise InternalError(f"no burst channel for {spec.kind.value!r}: give its row a FIFO or a name")


#: Per move kind, the channel a move of it occupies in a burst (from `model.MOVES`).
BURST_KEYS: dict[MoveKind, Callable[[Move], object]] = {
    kind: _burst_key(spec) for kind, spec in MOVES.items()
}


def burst_compatible(moves: Sequence[Move]) -> bool:
    """Stimuli that can arrive together: one per channel and per task or item. A
    drop or reconnect empties both FIFOs, so it shares a burst with no move that
    takes a FIFO's head (the order inside the burst would decide whether the head
    is still there)."""
    specs = [MOVES[move.kind] for move in moves if move.kind in MOVES]
    if any(spec.actor is Actor.NETWORK for spec in specs) and any(
        spec.takes is not None for spec in specs
    ):
        return False
    keys: set[object] = set()
    for move in moves:
        key_of = BURST_KEYS.get(move.kind)
        if key_of is None:
            raise InternalError(f"no burst channel for the move kind {move.kind.value!r}")
        key = key_of(move)
        if key in keys:
            return False
        keys.add(key)
    return True


# -- the harness ----------------------------------------------------------------------


class Lockstep:
    """One run of an implementation against the model, for one config."""

    def __init__(
        self,
        config: Config,
        factory: AdapterFactory,
        scheduler: Scheduler | None = None,
    ) -> None:
        self.config = config
        self.model = model_side(config)
        self.loop = new_loop(scheduler if scheduler is not None else Fifo())
        self.steps: list[Step] = []
        self.violations: dict[Invariant, FoundViolation] = {}
        #: Model moves this run stood for: stimuli plus the internal moves between.
        self.model_moves = 0
        with self.loop.running():
            self.adapter = factory(config)
        start = initial_state(config)
        self.state = start
        self.observation = self._settle(self.model.closure(start))

    @classmethod
    def replay(
        cls,
        config: Config,
        steps: Iterable[Step],
        factory: AdapterFactory,
    ) -> Lockstep:
        """A fresh run through `steps` (raises Mismatch or NotEnabled like `apply`)."""
        run = cls(config, factory)
        for step in steps:
            run.apply(step)
        return run

    @classmethod
    def replay_moves(
        cls,
        config: Config,
        moves: Iterable[Move],
        factory: AdapterFactory,
    ) -> Lockstep:
        """Replay a model trace (the explorer's or z3's `Move` tuples); its WAKE and
        RESUME moves the implementation makes on its own (see `trace_steps`)."""
        return cls.replay(config, trace_steps(config, moves), factory)

    def enabled(self) -> list[Move]:
        """The stimuli the model allows now."""
        return self.model.stimuli(self.state)

    def step(self, move: Move, schedule: Schedule | str = "") -> None:
        self.apply(Step((move,), _schedule(schedule)))

    def apply(self, step: Step) -> int:
        """Give the step's stimuli, run the loop with its schedule, compare; the
        number of model moves (stimuli and internal moves) the step stood for."""
        enabled = self.enabled()
        for move in step.moves:
            if move not in enabled:
                raise NotEnabled(
                    f"{move.label()} is not enabled after {format_steps(self.steps) or 'the start'}"
                )
        if len(step.moves) > 1 and not burst_compatible(step.moves):
            raise NotEnabled(f"{step} cannot arrive together")
        self.steps.append(step)
        with self.loop.running():
            for move in step.moves:
                try:
                    stimulate(self.adapter, move)
                except Exception as error:  # the implementation has no such move now
                    raise Mismatch(
                        self.steps, f"the implementation cannot take {move.label()}: {error!r}"
                    ) from error
        if len(step.moves) == 1:
            expected = self.model.closure(self.model.after(self.state, step.moves[0]))
        else:
            expected = self.model.after_burst(self.state, step.moves)
        self.observation = self._settle(expected, step.schedule)
        taken = len(step.moves) + expected[self.state]
        self.model_moves += taken
        return taken

    def close(self) -> None:
        with self.loop.running():
            self.adapter.close()
        self.loop.run_until_blocked()
        self.loop.close()

    # -- comparing ------------------------------------------------------------------

    def _settle(self, expected: dict[State, int], schedule: Schedule | None = None) -> Observation:
        if schedule is not None and schedule.choices:
            previous = self.loop.scheduler
            self.loop.scheduler = Replay(schedule)
            try:
                self.loop.run_until_blocked()
            finally:
                self.loop.scheduler = previous
        else:
            self.loop.run_until_blocked()
        errors = self.adapter.errors()
        if errors:
            raise Mismatch(self.steps, "the implementation raised: " + "; ".join(errors))
        observation = self.adapter.observe()
        try:
            got = abstract(observation, self.state)
        except ValueError as error:
            raise Mismatch(self.steps, f"no model state for the implementation: {error}") from None
        got = matching(got, expected)
        if got not in expected:
            raise Mismatch(self.steps, explain(got, expected))
        stuck = self.model.internal(got)
        if stuck:
            raise Mismatch(
                self.steps,
                "the implementation stopped where the model goes on: "
                + ", ".join(move.label() for move in stuck),
            )
        self.state = self.model.canonical(got)
        self._check_invariants(observation, got)
        return observation

    def _check_invariants(self, observation: Observation, state: State) -> None:
        found = impl_violations(observation, self.config)
        for invariant in Invariant:
            impl = found.get(invariant)
            model = check(state, self.config, invariant)
            if (impl is None) != (model is None) or (
                impl is not None and model is not None and impl.item != model.item
            ):
                raise Mismatch(
                    self.steps,
                    f"{invariant.value}: the implementation's check says "
                    f"{impl.reason if impl else 'holds'}, the model's says "
                    f"{model.describe() if model else 'holds'}",
                )
            if impl is not None and invariant not in self.violations:
                site = None if impl.task is None else self.config.call(impl.task).site
                self.violations[invariant] = FoundViolation(
                    invariant, impl.item, impl.task, site, impl.reason, tuple(self.steps)
                )


def _schedule(schedule: Schedule | str) -> Schedule:
    return schedule if isinstance(schedule, Schedule) else Schedule.parse(schedule)


# -- explaining a mismatch ----------------------------------------------------------------


def explain(got: State, expected: Iterable[State]) -> str:
    """What differs between the implementation's state and the nearest model state."""
    best = min(expected, key=lambda state: (len(_differences(got, state)), repr(state)))
    lines = [
        f"{name}: model {want}, implementation {have}"
        for name, want, have in _differences(got, best)
    ]
    return "the implementation's state is not the model's:\n    " + "\n    ".join(lines)


def _differences(got: State, want: State) -> list[tuple[str, str, str]]:
    found: list[tuple[str, str, str]] = []
    for field in attrs.fields(State):
        mine, theirs = getattr(got, field.name), getattr(want, field.name)
        if mine == theirs:
            continue
        if field.name == "tasks" and len(mine) == len(theirs):
            for index, (have, need) in enumerate(zip(mine, theirs, strict=True)):
                for task_field in attrs.fields(Task):
                    a, b = getattr(have, task_field.name), getattr(need, task_field.name)
                    if a != b:
                        found.append((f"T{index}.{task_field.name}", _show(b), _show(a)))
            continue
        found.append((field.name, _show(theirs), _show(mine)))
    return found


def _show(value: object) -> str:
    if isinstance(value, Op):
        where = f" after {value.after or 'the head'}" if value.kind is OpKind.CREATE else ""
        return f"{value.kind.value} {value.item}{where} (T{value.task})"
    if isinstance(value, Event):
        who = "model" if value.task is None else f"T{value.task}"
        return f"'{value.item} {value.kind.value}' ({who})"
    if isinstance(value, Lock):
        owner = "free" if value.owner is None else f"T{value.owner}"
        waiting = "".join(f", then T{task}" for task in value.waiters)
        return owner + waiting
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, frozenset):
        return "{" + ", ".join(sorted(_show(v) for v in value)) + "}"
    if isinstance(value, tuple):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if value is None:
        return "none"
    return str(value)
