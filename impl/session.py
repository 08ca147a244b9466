"""The provider session: a mirror of the server conversation, and the push.

`RealtimeSession` is the locked session of the real frameworks (`MIRROR_DIFF`):
under its own asyncio.Lock it diffs the requested context against the mirror as
it is at that moment, sends one op per change and waits for every ack. The
mirror changes only when an event comes back, never when an op is sent: that is
what lets a snapshot taken while a push waits miss the push's items.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Iterable

from impl.chat_context import ChatContext, ChatItem, CreateItem, DiffOp, diff
from impl.clock import Clock, SystemClock
from impl.probe import Phase, TracedLock, current_push, set_phase
from impl.transport import (
    CREATE,
    DELETE,
    AckKey,
    ClientOp,
    CreateOp,
    DeleteOp,
    ErrorEvent,
    ItemAdded,
    ItemDeleted,
    ServerEvent,
    Transport,
    ack_key,
)

log = logging.getLogger("impl.session")

DEFAULT_ACK_TIMEOUT = 5.0


class RealtimeError(Exception):
    """A push did not complete: its acks did not all come back in time."""


class SessionBase:
    """What both sessions share: the mirror, the event loop of the socket, ack waits."""

    def __init__(
        self,
        transport: Transport,
        *,
        clock: Clock | None = None,
        ack_timeout: float = DEFAULT_ACK_TIMEOUT,
        initial: Iterable[ChatItem] = (),
    ) -> None:
        self._transport = transport
        self._clock: Clock = clock if clock is not None else SystemClock()
        self.ack_timeout = ack_timeout
        self._mirror = ChatContext(initial)
        self._event_ids = itertools.count(1)
        self._recv_task: asyncio.Task[None] | None = None
        #: Every op the server rejected, in order (the real sessions log a warning).
        self.rejected: list[ClientOp] = []
        self._init_pushes()

    def _init_pushes(self) -> None:
        """Set up the subclass's own bookkeeping of pushes and their ops."""
        raise NotImplementedError

    # -- lifecycle -------------------------------------------------------------

    def start(self) -> None:
        """Start reading events; call once, inside the running loop."""
        if self._recv_task is None:
            self._recv_task = asyncio.get_running_loop().create_task(
                self._recv_loop(), name="session-recv"
            )

    async def aclose(self) -> None:
        task, self._recv_task = self._recv_task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # -- the mirror ------------------------------------------------------------

    @property
    def chat_ctx(self) -> ChatContext:
        """A private copy of the mirror (what a snapshot site builds its request from)."""
        return self._mirror.copy()

    def mirror_ids(self) -> tuple[str, ...]:
        return self._mirror.ids()

    async def _recv_loop(self) -> None:
        while True:
            event = await self._transport.recv()
            self._on_event(event)

    def _on_event(self, event: ServerEvent) -> None:
        """Apply one event to the mirror and resolve the ack it answers."""
        if isinstance(event, ItemAdded):
            if event.item.id not in self._mirror:
                self._mirror.insert_after(event.item, event.previous_id)
            self._on_ack((CREATE, event.item.id), True)
        elif isinstance(event, ItemDeleted):
            self._mirror.discard(event.item_id)
            self._on_ack((DELETE, event.item_id), True)
        else:
            self._on_error(event)

    def _on_ack(self, key: AckKey, ok: bool) -> None:
        raise NotImplementedError

    def _on_error(self, event: ErrorEvent) -> None:
        raise NotImplementedError

    # -- sending and waiting ------------------------------------------------------

    def _op(self, change: DiffOp) -> ClientOp:
        event_id = f"evt_{next(self._event_ids)}"
        if isinstance(change, CreateItem):
            return CreateOp(event_id, change.item, change.previous_id)
        return DeleteOp(event_id, change.item_id)

    def _send(self, op: ClientOp) -> None:
        self._transport.send(op)

    def _send_changes(
        self, chat_ctx: ChatContext, changes: list[DiffOp]
    ) -> dict[AckKey, asyncio.Future[bool]]:
        """Send one op per change, each registered with its ack future before it
        goes out, and return the futures: no await in here."""
        loop = asyncio.get_running_loop()
        futures: dict[AckKey, asyncio.Future[bool]] = {}
        for change in changes:
            op = self._op(change)
            future: asyncio.Future[bool] = loop.create_future()
            self._register(op, future)
            futures[ack_key(op)] = future
            self._send(op)
        record = current_push()
        if record is not None:
            record.on_diff(chat_ctx.ids(), futures)
        return futures

    def _register(self, op: ClientOp, future: asyncio.Future[bool]) -> None:
        """Keep `op`, about to be sent, and the future its ack will resolve."""
        raise NotImplementedError

    async def _await_acks(self, futures: dict[AckKey, asyncio.Future[bool]]) -> None:
        """Wait for every future, or raise RealtimeError when the clock says time is up."""
        set_phase(Phase.WAIT_ACKS)
        acks = asyncio.gather(*futures.values())
        # When the push is abandoned (its task cancelled, the session closed), the
        # gathering future may end with an error no one awaits any more.
        acks.add_done_callback(_consume_outcome)
        try:
            await self._clock.wait_for(acks, self.ack_timeout)
        except TimeoutError:
            raise RealtimeError("update_chat_ctx timed out.") from None


def _consume_outcome(future: asyncio.Future[list[bool]]) -> None:
    """Mark a finished future's error as seen, so that asyncio does not log it."""
    if not future.cancelled():
        future.exception()


class RealtimeSession(SessionBase):
    """The locked, mirror-diffing session (`MIRROR_DIFF`)."""

    def _init_pushes(self) -> None:
        self.lock = TracedLock("provider")
        self._acks: dict[AckKey, asyncio.Future[bool]] = {}
        #: Each op sent and not yet answered, by event id, to answer an error event.
        self._sent: dict[str, ClientOp] = {}
        #: The ack future of each sent event id, while its push still waits.
        self._by_event: dict[str, asyncio.Future[bool]] = {}

    async def update_chat_ctx(
        self, chat_ctx: ChatContext, *, base: frozenset[str] | None = None
    ) -> None:
        """Push `chat_ctx`: diff it against the mirror, send, wait for every ack.

        `chat_ctx` is read only once the lock is held, so a caller that hands
        over its live local context pushes what it holds then. `base` is
        ignored: a two-way diff cannot use it. Raises RealtimeError on timeout;
        the ops stay in flight. A rejected op is logged and does not fail it.
        """
        del base
        set_phase(Phase.WAIT_PROVIDER)
        async with self.lock:
            futures = self._diff_and_send(chat_ctx)
            if not futures:
                return
            try:
                await self._await_acks(futures)
            finally:
                self._forget(futures)

    def _diff_and_send(self, chat_ctx: ChatContext) -> dict[AckKey, asyncio.Future[bool]]:
        """Diff, send, and register one ack future per op: no await in here."""
        return self._send_changes(chat_ctx, diff(self._mirror, chat_ctx))

    def _register(self, op: ClientOp, future: asyncio.Future[bool]) -> None:
        self._acks[ack_key(op)] = future
        self._sent[op.event_id] = op
        self._by_event[op.event_id] = future

    def _forget(self, futures: dict[AckKey, asyncio.Future[bool]]) -> None:
        """The push is over (done, timed out or cancelled): drop its ack futures."""
        mine = set(map(id, futures.values()))
        for event_id in [e for e, f in self._by_event.items() if id(f) in mine]:
            del self._by_event[event_id]
        for key, future in futures.items():
            if self._acks.get(key) is future:
                del self._acks[key]
            if not future.done():
                future.cancel()

    def _on_ack(self, key: AckKey, ok: bool) -> None:
        for event_id in [event_id for event_id, op in self._sent.items() if ack_key(op) == key]:
            del self._sent[event_id]
        future = self._acks.pop(key, None)
        if future is not None and not future.done():
            future.set_result(ok)

    def _on_error(self, event: ErrorEvent) -> None:
        # an error answers one sent event id: it resolves that op's own future, and
        # only while its push still waits (a timed-out push's late rejection must not
        # settle a later push's op on the same item, as the real session's per-push
        # event-id futures ensure)
        op = self._sent.pop(event.event_id, None)
        log.warning("the server rejected %s: %s", op, event.message)
        if op is not None:
            self.rejected.append(op)
        future = self._by_event.pop(event.event_id, None)
        if future is None or future.done():
            return
        if op is not None and self._acks.get(ack_key(op)) is future:
            del self._acks[ack_key(op)]
        future.set_result(False)
