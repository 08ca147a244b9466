"""`Follow` runs on the loop its caller makes, and `shutdown` needs no more of a loop
than `SteppedLoop`: the conformance loop and the plugin's socket loop both do."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from model import SCENARIOS_BY_NAME, VARIANTS_BY_NAME, Config
from proofs.adapters.livekit.socket_loop import new_socket_loop
from proofs.engines.conformance.adapter import Adapter
from proofs.engines.conformance.follow import Follow, SteppedLoop, shutdown
from proofs.engines.conformance.virtual_time import new_virtual_loop

LOOPS: dict[str, Callable[[], SteppedLoop]] = {
    "virtual-time": new_virtual_loop,
    "socket": new_socket_loop,
}
_SCENARIO = SCENARIOS_BY_NAME["overlapping-push"]
CONFIG = Config(VARIANTS_BY_NAME["lock5"], _SCENARIO, _SCENARIO.environment)


@pytest.mark.parametrize("make", LOOPS.values(), ids=list(LOOPS))
def test_shutdown_cancels_what_still_waits_and_closes_the_loop(
    make: Callable[[], SteppedLoop],
) -> None:
    loop = make()
    unwound: list[str] = []

    async def waits_forever() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            unwound.append("finally")

    with loop.running():
        task = asyncio.get_running_loop().create_task(waits_forever())
    loop.run_until_blocked()
    assert not task.done()
    shutdown(loop)
    assert task.cancelled() and unwound == ["finally"]
    assert isinstance(loop, asyncio.AbstractEventLoop) and loop.is_closed()


@pytest.mark.parametrize("make", LOOPS.values(), ids=list(LOOPS))
def test_follow_builds_its_adapter_on_the_loop_it_is_given_and_shuts_it_down_on_failure(
    make: Callable[[], SteppedLoop],
) -> None:
    made: list[SteppedLoop] = []
    seen: list[object] = []

    def loop() -> SteppedLoop:
        made.append(make())
        return made[-1]

    def build(config: Config) -> Adapter:
        seen.append(asyncio.get_running_loop())
        raise RuntimeError("no adapter")

    with pytest.raises(RuntimeError, match="no adapter"):
        Follow(CONFIG, build, loop=loop)
    assert len(made) == len(seen) == 1 and seen[0] is made[0]
    assert isinstance(made[0], asyncio.AbstractEventLoop) and made[0].is_closed()
