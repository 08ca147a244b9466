"""Lockstep driven by Hypothesis: a `RuleBasedStateMachine` per config.

One rule per stimulus (`call_T0`, `server_apply`, `timeout_T1`, ...), enabled
exactly when the model allows that move; Hypothesis picks the sequence and
shrinks a failure to a short list of steps, printed as runnable code:

    state = Conformance_unlocked_overlapping_push()
    state.call_T0()
    state.call_T1()
    state.server_apply()
    state.client_apply()
    state.teardown()

In scheduler mode every rule also takes `together` (give this stimulus with the
next ones, before the loop runs: a burst) and `schedule` (the choices of the
event loop while it then runs, as a dotted string; empty is asyncio's FIFO). A
schedule shrinks toward FIFO and replays exactly.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from model import MOVES, STIMULI, Config, Move, MoveKind, MoveSpec
from proofs.engines.conformance.adapter import AdapterFactory
from proofs.engines.conformance.lockstep import Lockstep, burst_compatible
from proofs.engines.conformance.loop import Schedule
from proofs.engines.conformance.steps import Step, format_steps
from proofs.errors import InternalError

#: The most stimuli given together in one burst.
MAX_BURST = 3

#: Schedules as Hypothesis draws them: a few small choices, shrinking to FIFO.
SCHEDULES: st.SearchStrategy[str] = st.lists(st.integers(0, 3), max_size=6).map(
    lambda choices: str(Schedule(tuple(choices)))
)


def machine_settings(examples: int, steps: int = 14) -> settings:
    """Deterministic settings for CI. The `explain` phase is off: it traces every
    line of every shrink attempt and costs ten times the shrinking itself."""
    return settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        database=None,
        derandomize=True,
        report_multiple_bugs=False,
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )


_STIMULI = tuple(kind for kind in MoveKind if kind in STIMULI)


def _targets(spec: MoveSpec) -> str:
    """Whether a stimulus gets one rule per task, per item, or one rule ('none').

    From the move's row: a move that names its task is split per task; one that
    names only an item is split per item, unless it appends to a FIFO (the
    model's next item: the state fixes which one, so one rule is exact).
    """
    if spec.names_task and spec.identified_by == "task":
        return "task"
    if spec.names_item and not spec.names_task and spec.gives is None:
        return "item"
    return "none"


#: Per stimulus kind, how `conformance_machine` splits its rules (from `model.MOVES`).
RULE_TARGETS: dict[MoveKind, str] = {kind: _targets(MOVES[kind]) for kind in _STIMULI}


class ConformanceMachine(RuleBasedStateMachine):
    """Base class; `conformance_machine` makes one subclass per config."""

    config: Config
    factory: AdapterFactory
    #: Fail on an invariant the implementation breaks (not only on a mismatch).
    fail_on_violation: bool = False

    def __init__(self) -> None:
        super().__init__()
        self.run = Lockstep(self.config, type(self).factory)
        self.burst: list[Move] = []

    def _matching(self, kind: MoveKind, task: int | None, item: str | None) -> list[Move]:
        """Enabled moves of this kind (for this task or item) that can join the burst:
        on channels of their own, and all of them possible together in the model in
        some order (two `before-call` steps may each disable the other)."""
        return [
            move
            for move in self.run.enabled()
            if move.kind is kind
            and (task is None or move.task == task)
            and (item is None or move.item == item)
            and move not in self.burst
            and burst_compatible([*self.burst, move])
            and (
                not self.burst
                or bool(self.run.model.after_burst(self.run.state, [*self.burst, move]))
            )
        ]

    def _give(self, move: Move, together: bool, schedule: str) -> None:
        self.burst.append(move)
        if together and len(self.burst) < MAX_BURST:
            return
        self._flush(Schedule.parse(schedule))

    def _flush(self, schedule: Schedule) -> None:
        step = Step(tuple(self.burst), schedule)
        self.burst = []
        self.run.apply(step)
        if self.fail_on_violation and self.run.violations:
            found = min(self.run.violations.values(), key=lambda v: len(v.steps))
            raise AssertionError(
                f"the implementation breaks {found.invariant.value}: {found.reason}\n"
                f"  steps: {format_steps(found.steps)}"
            )

    @precondition(lambda self: not any(self._matching(k, None, None) for k in _STIMULI))
    @rule()
    def finished(self) -> None:
        """Nothing more can be given now: run what was given together, if anything
        (and let Hypothesis always have a rule to run)."""
        if self.burst:
            self._flush(Schedule())

    def teardown(self) -> None:
        try:
            if self.burst:
                self._flush(Schedule())
        finally:
            self.run.close()


def conformance_machine(
    config: Config,
    factory: AdapterFactory,
    *,
    scheduled: bool = False,
    fail_on_violation: bool = False,
) -> type[ConformanceMachine]:
    """A state machine class for `config`; run it with `run_state_machine_as_test`
    or expose `.TestCase` to pytest.

    A stimulus that names a task or an item gets one rule per task or item
    (`call_T0`, `learn_call1`), so that every rule's precondition says exactly
    when its move is enabled and Hypothesis never draws a step it must discard.
    """
    tasks = range(len(config.scenario.calls))
    name = "Conformance_" + re.sub(r"\W", "_", f"{config.variant.name}_{config.scenario.name}")
    namespace: dict[str, Any] = {
        "config": config,
        "factory": staticmethod(factory),
        "fail_on_violation": fail_on_violation,
    }
    strategies: dict[str, st.SearchStrategy[Any]] = {}
    if scheduled:
        strategies["together"] = st.booleans()
        strategies["schedule"] = SCHEDULES
    for kind in _STIMULI:
        base = kind.value.replace("-", "_")
        split = RULE_TARGETS.get(kind)
        if split == "task":
            targets: list[tuple[str, int | None, str | None]] = [
                (f"{base}_T{task}", task, None) for task in tasks
            ]
        elif split == "item":
            targets = [
                (f"{base}_{_ident(item)}", None, item) for item in config.scenario.server_pool
            ]
        elif split == "none":
            targets = [(base, None, None)]
        else:
            raise InternalError(f"the machine has no rule split for the stimulus {kind.value!r}")
        for method, task, item in targets:
            # the strategies are keyword arguments only; mypy cannot see that in a dict
            make_rule: Callable[[Callable[..., None]], Callable[..., None]]
            make_rule = rule(**strategies)  # type: ignore[call-overload]
            namespace[method] = precondition(_has(kind, task, item))(
                make_rule(_body(kind, method, task, item))
            )
    return type(name, (ConformanceMachine,), namespace)


def _ident(text: str) -> str:
    return re.sub(r"\W", "_", text)


def _has(
    kind: MoveKind, task: int | None, item: str | None
) -> Callable[[ConformanceMachine], bool]:
    def has(self: ConformanceMachine) -> bool:
        return bool(self._matching(kind, task, item))

    return has


def _body(kind: MoveKind, name: str, task: int | None, item: str | None) -> Callable[..., None]:
    def body(self: ConformanceMachine, together: bool = False, schedule: str = "") -> None:
        self._give(self._matching(kind, task, item)[0], together, schedule)

    body.__name__ = name
    body.__qualname__ = name
    return body
