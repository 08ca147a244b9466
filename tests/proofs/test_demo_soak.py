"""A short soak over the loopback socket: randomized overlapping rounds under
every environment option at once. three-way keeps everything; unlocked, on the
same plan, does not."""

from __future__ import annotations

import asyncio
import random

import pytest

from impl.ws_server import LoopbackServer, ServerSettings
from model.environment import ALL
from proofs.adapters.impl.demo import Agent, Tally, plan_round, quiet_impl_logs, round_window

LATENCY, JITTER = 0.002, 0.002


async def _soak(variant: str, rounds: int, connections: int) -> Tally:
    settings = ServerSettings(latency=LATENCY, jitter=JITTER, seed=5, reject_probability=0.05)
    window = round_window(LATENCY, JITTER)
    tally = Tally(variant, ALL.name)

    async def connection(number: int) -> None:
        rng = random.Random(f"soak/{number}")
        agent = await Agent.open(server, variant, trace=200)
        agent.ack_timeouts = (0.004, 5.0)
        agent.rng = random.Random(number)
        try:
            for index in range(1, rounds + 1):
                plan = plan_round(rng, index, ALL, window, overlapping_pair=True)
                await agent.play(plan, window=window)
        finally:
            await agent.aclose()
        tally.add(agent, rounds)

    with quiet_impl_logs():
        async with LoopbackServer(settings) as server:
            await asyncio.gather(*(connection(n) for n in range(connections)))
    return tally


@pytest.mark.parametrize("variant", ["three-way", "unlocked"])
def test_a_short_soak_under_every_option(variant: str) -> None:
    tally = asyncio.run(asyncio.wait_for(_soak(variant, rounds=5, connections=4), 60))
    assert tally.pushes >= 40
    if variant == "three-way":
        assert (tally.lost, tally.unintended, tally.resurrected) == (0, 0, 0), "\n".join(
            line for finding in tally.findings for line in finding.describe()
        )
    else:
        assert tally.unintended > 0
