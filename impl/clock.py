"""How a session waits for acks with a timeout.

The ack timeout is the one place where time matters. A `Clock` decides when a
wait gives up, so tests run on virtual time (`impl.fake_server.VirtualClock`:
a timeout fires when the test says so, never by sleeping) and production on
the event loop's clock.
"""

from __future__ import annotations

import asyncio
from typing import Protocol, TypeVar

T = TypeVar("T")


class Clock(Protocol):
    async def wait_for(self, waiter: asyncio.Future[T], seconds: float) -> T:
        """Await `waiter`; on timeout cancel it and raise TimeoutError."""
        ...


class SystemClock:
    """Real time, through the running loop's timers."""

    async def wait_for(self, waiter: asyncio.Future[T], seconds: float) -> T:
        return await asyncio.wait_for(waiter, seconds)
