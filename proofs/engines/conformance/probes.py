"""Seeing inside code that has no probes of its own, without changing what it does.

Released frameworks keep no record of which task holds a lock or which call
a push belongs to. Two ways to see it anyway, usable with any asyncio code:

* `HolderLock`, an `asyncio.Lock` subclass to swap in for the framework's own
  before anything takes it: it also records its holder and its waiters, with
  the same awaits (a free lock is taken without yielding);
* `site_frame`, the frame of the nearest enclosing call of a site function on
  the Python stack (an await chain is on the stack while it runs), whose
  locals tell which call of the scenario is running.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Collection
from types import FrameType
from typing import Any, Literal


class HolderLock(asyncio.Lock):
    """An asyncio.Lock that records its holder and its waiters, first first.

    Right after a release asyncio has handed the lock to the first waiter, which
    has not run yet: `holder` is None and that waiter is still first in `waiting`.
    """

    def __init__(self, on_acquire: Callable[[], None] | None = None) -> None:
        super().__init__()
        self.holder: asyncio.Task[Any] | None = None
        self.waiting: list[asyncio.Task[Any] | None] = []
        self._on_acquire = on_acquire

    async def acquire(self) -> Literal[True]:
        if self._on_acquire is not None:
            self._on_acquire()
        me = asyncio.current_task()
        self.waiting.append(me)
        try:
            await super().acquire()
        finally:
            self.waiting.remove(me)
        self.holder = me
        return True

    def release(self) -> None:
        self.holder = None
        super().release()


def site_frame(
    functions: Collection[str], owner: Callable[[object], bool], skip: int = 2
) -> FrameType | None:
    """The nearest frame, `skip` frames above the caller's caller and further up,
    running one of `functions` on an object `owner` accepts (its `self`)."""
    frame: FrameType | None = sys._getframe(skip)
    while frame is not None:
        if frame.f_code.co_name in functions and owner(frame.f_locals.get("self")):
            return frame
        frame = frame.f_back
    return None
