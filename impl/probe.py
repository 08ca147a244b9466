"""Read-only instrumentation for the conformance harness, kept small.

The activity and the sessions record, for each push, where it is waiting (its
*phase*, one value per real await, named as the model's program counter), its
requested context, its base and its pending acks; each lock records who holds it
and who waits for it. Nothing here changes behaviour: removing every probe call
leaves the same awaits in the same places.
"""

from __future__ import annotations

import asyncio
import contextvars
import enum
from collections.abc import Callable
from types import TracebackType

from impl.chat_context import ChatContext
from impl.transport import AckKey


class Phase(enum.Enum):
    IDLE = "idle"
    #: The application holds its copy of the local context (replacement only).
    COPIED = "copied"
    WAIT_ACTIVITY = "wait-activity-lock"
    WAIT_PROVIDER = "wait-provider-lock"
    WAIT_ACKS = "wait-acks"
    DONE = "done"
    #: The push raised RealtimeError: its ack wait timed out.
    FAILED = "failed"
    #: The push task was cancelled (not a model phase: the model never cancels).
    CANCELLED = "cancelled"


class PushRecord:
    """One call of a site, as the harness sees it."""

    def __init__(self, site: str, live_context: Callable[[], ChatContext]) -> None:
        self.site = site
        self.phase = Phase.IDLE
        self.task: asyncio.Task[None] | None = asyncio.current_task()
        #: The ids of the application's copy (caller-copy sites).
        self.copy: tuple[str, ...] | None = None
        #: The object the push hands the session; read when the session diffs.
        self.request: ChatContext | None = None
        self.base: frozenset[str] = frozenset()
        #: The ids the session read when it diffed, and whether it read the live
        #: local context object then.
        self.read: tuple[str, ...] | None = None
        self.bound_at_read = False
        #: The acks this push waits for, by (kind, item id).
        self.acks: dict[AckKey, asyncio.Future[bool]] = {}
        self._live_context = live_context

    def pending(self) -> frozenset[AckKey]:
        return frozenset(key for key, future in self.acks.items() if not future.done())

    def bound(self) -> bool:
        """Whether the request is the live local context object (as of the diff once diffed)."""
        if self.read is not None:
            return self.bound_at_read
        return self.request is not None and self.request is self._live_context()

    def on_diff(self, read: tuple[str, ...], acks: dict[AckKey, asyncio.Future[bool]]) -> None:
        self.bound_at_read = self.request is not None and self.request is self._live_context()
        self.read = read
        self.acks = acks


#: The push the current task is running, for the session to fill in.
CURRENT_PUSH: contextvars.ContextVar[PushRecord | None] = contextvars.ContextVar(
    "ackguard_current_push", default=None
)


def current_push() -> PushRecord | None:
    return CURRENT_PUSH.get()


def set_phase(phase: Phase) -> None:
    record = CURRENT_PUSH.get()
    if record is not None:
        record.phase = phase


class TracedLock:
    """An asyncio.Lock that knows which task holds it and which tasks wait, in order.

    Acquiring a free lock does not yield, exactly as asyncio.Lock: the waiter
    list entry made before the attempt is gone before anyone can look.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = asyncio.Lock()
        self.holder: asyncio.Task[object] | None = None
        #: Tasks blocked in acquire, first first. After a release the first of them
        #: has been handed the lock but has not run yet.
        self.waiting: list[asyncio.Task[object] | None] = []

    def locked(self) -> bool:
        return self._lock.locked()

    async def acquire(self) -> None:
        me: asyncio.Task[object] | None = asyncio.current_task()
        self.waiting.append(me)
        try:
            await self._lock.acquire()
        finally:
            self.waiting.remove(me)
        self.holder = me

    def release(self) -> None:
        self.holder = None
        self._lock.release()

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()
