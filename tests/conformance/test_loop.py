"""The controlled event loop and its schedules."""

from __future__ import annotations

import asyncio
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from model import SCENARIOS_BY_NAME, VARIANTS_BY_NAME
from proofs.adapters.impl import impl_adapter
from proofs.engines.conformance.lockstep import Lockstep
from proofs.engines.conformance.loop import LoopError, Replay, Schedule, new_loop
from proofs.engines.conformance.steps import Step, format_steps, parse_steps
from tests.conformance.conftest import own


@given(st.lists(st.integers(0, 20), max_size=10))
def test_a_schedule_prints_and_parses_back(choices: list[int]) -> None:
    schedule = Schedule(tuple(choices))
    assert Schedule.parse(str(schedule)) == schedule


@pytest.mark.parametrize("text", ["1..2", "a", "-1", "1.x"])
def test_a_bad_schedule_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="schedule"):
        Schedule.parse(text)


def test_fifo_is_asyncio_order_and_a_choice_reorders_one_batch() -> None:
    def run(schedule: Schedule) -> list[str]:
        loop = new_loop(Replay(schedule))
        loop.log = []
        order: list[str] = []

        async def worker(name: str) -> None:
            order.append(name + "1")
            await asyncio.sleep(0)
            order.append(name + "2")

        with loop.running():
            for name in "ab":
                loop.create_task(worker(name), name=name)
        loop.run_until_blocked()
        return order

    assert run(Schedule()) == ["a1", "b1", "a2", "b2"]
    assert run(Schedule((1,))) == ["b1", "a1", "b2", "a2"]
    assert run(Schedule((0, 1))) == ["a1", "b1", "b2", "a2"]


def test_the_loop_has_no_timers() -> None:
    loop = new_loop()

    async def sleeper() -> None:
        await asyncio.sleep(1)

    with loop.running():
        loop.create_task(sleeper())
    with pytest.raises(LoopError, match="no timers"):
        loop.run_until_blocked()


def test_a_random_schedule_replays_exactly() -> None:
    """Run bursts with random choices, then replay the recorded schedule: the same
    callbacks run in the same order and the implementation ends in the same state."""
    config = own(VARIANTS_BY_NAME["three-way"], SCENARIOS_BY_NAME["cleanup-during-tool-push"])
    rng = random.Random(7)
    recorded: list[Step] = []
    first = Lockstep(config, impl_adapter)
    first.loop.log = []
    plan = parse_steps("call T1 + call T0; server-apply T1 out1 + client-apply T0 asst1")
    for index, planned in enumerate(plan):
        if index == 1:
            planned = Step(
                tuple(m for m in first.enabled() if m.kind.value.startswith("server"))[:1]
            )
        scheduler = Replay([rng.randrange(4) for _ in range(8)])
        first.loop.scheduler = scheduler
        first.apply(planned)
        recorded.append(Step(planned.moves, scheduler.schedule))
    text = format_steps(recorded)
    second = Lockstep(config, impl_adapter)
    second.loop.log = []
    for step in parse_steps(text):
        second.apply(step)
    assert first.loop.choice_points > 0 and second.loop.log == first.loop.log
    assert second.state == first.state and second.observation == first.observation
