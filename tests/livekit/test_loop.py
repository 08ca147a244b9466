"""The virtual-time loop: livekit's timers wait until the harness moves time on."""

from __future__ import annotations

import asyncio

from proofs.engines.conformance.virtual_time import new_virtual_loop


def test_timers_fire_only_when_time_is_advanced() -> None:
    loop = new_virtual_loop()
    fired: list[str] = []
    with loop.running():
        loop.call_later(5.0, fired.append, "five")
        cancelled = loop.call_later(1.0, fired.append, "cancelled")
        cancelled.cancel()
    loop.run_until_blocked()
    assert fired == [] and loop.pending_timers() == [5.0]
    assert loop.advance(4.0) == 0
    assert loop.advance(1.0) == 1
    loop.run_until_blocked()
    assert fired == ["five"] and loop.pending_timers() == []
    loop.close()


def test_a_sleeping_task_blocks_until_time_moves() -> None:
    loop = new_virtual_loop()

    async def nap() -> str:
        await asyncio.sleep(2.0)
        return "woke"

    with loop.running():
        task = loop.create_task(nap())
    loop.run_until_blocked()
    assert not task.done()
    loop.advance(2.0)
    loop.run_until_blocked()
    assert task.result() == "woke"
    loop.close()
