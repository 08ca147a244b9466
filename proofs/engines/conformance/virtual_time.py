"""The harness's controlled loop, plus timers on a virtual clock that stands still.

livekit-agents arms timers of its own (the user-away timer, reply timeouts,
speech delays). The conformance loop (`proofs.engines.conformance.loop`) has none, so
this subclass keeps them in a heap on virtual time. Time moves only when the
harness calls `advance`, and a scenario never does: no livekit timer fires in
a run, so every interleaving comes from the harness's stimuli alone, and a run
is deterministic. `pending_timers` lets a test see that nothing waited on one.
"""

from __future__ import annotations

import asyncio
import contextvars
import heapq
import itertools
from collections.abc import Callable
from typing import Any

from proofs.engines.conformance.loop import ControlledLoop, Scheduler


class VirtualTimeLoop(ControlledLoop):
    """A `ControlledLoop` whose timers fire only when virtual time is advanced."""

    def __init__(self, scheduler: Scheduler | None = None) -> None:
        super().__init__(scheduler)
        self._now = 0.0
        self._timers: list[tuple[float, int, asyncio.TimerHandle]] = []
        self._sequence = itertools.count()

    def time(self) -> float:
        return self._now

    def call_later(  # type: ignore[override]
        self,
        delay: float,
        callback: Callable[..., object],
        *args: Any,
        context: contextvars.Context | None = None,
    ) -> asyncio.TimerHandle:
        return self.call_at(self._now + max(delay, 0.0), callback, *args, context=context)

    def call_at(  # type: ignore[override]
        self,
        when: float,
        callback: Callable[..., object],
        *args: Any,
        context: contextvars.Context | None = None,
    ) -> asyncio.TimerHandle:
        self._check_closed()
        handle = asyncio.TimerHandle(when, callback, args, self, context)
        heapq.heappush(self._timers, (when, next(self._sequence), handle))
        return handle

    def _timer_handle_cancelled(self, handle: asyncio.TimerHandle) -> None:
        """asyncio calls this on cancel; cancelled timers are skipped when due."""

    def pending_timers(self) -> list[float]:
        """When each live timer is due, earliest first (relative to now)."""
        return sorted(
            when - self._now for when, _, handle in self._timers if not handle.cancelled()
        )

    def advance(self, seconds: float) -> int:
        """Move virtual time on, making every timer due by then ready; how many fired."""
        self._now += seconds
        fired = 0
        while self._timers and self._timers[0][0] <= self._now:
            _, _, handle = heapq.heappop(self._timers)
            if handle.cancelled():
                continue
            self.call_soon(handle._run)
            fired += 1
        return fired

    def close(self) -> None:
        super().close()
        self._timers.clear()


def new_virtual_loop(scheduler: Scheduler | None = None) -> VirtualTimeLoop:
    return VirtualTimeLoop(scheduler)  # type: ignore[abstract]
