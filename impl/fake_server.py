"""A fake provider server whose every delivery the test controls, on virtual time.

Nothing moves by itself: an op reaches the server when the test calls
`deliver_to_server` (or `reject_next`), an event reaches the client when it
calls `deliver_to_client`, the model creates an item when it calls
`model_creates`, and an ack wait times out when it calls `clock.fire(task)`.
The server applies ops exactly as the model's server does: a duplicate create,
a create after an unknown item and a delete of an unknown item are answered by
an error event; a create after None goes to the head; the model's own items go
to the tail.

The server also records what it observed, for the harness's invariant checks:
the deletes sent (and whether the client had seen the item acknowledged then),
the items that ever reached it, those a delete removed, and re-creations.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterable
from typing import TypeVar

from attrs import frozen

from impl.chat_context import ChatContext, ChatItem
from impl.transport import (
    ClientOp,
    DeleteOp,
    ErrorEvent,
    ItemAdded,
    ItemDeleted,
    ServerEvent,
)

T = TypeVar("T")

#: Who sent an op: the asyncio task that was running when it was sent.
Origin = object


@frozen
class SentOp:
    op: ClientOp
    origin: Origin | None


@frozen
class SentEvent:
    event: ServerEvent
    #: The op this event answers (None: an item the model created).
    answers: SentOp | None


class _Timer:
    def __init__(self, owner: Origin | None, waiter: asyncio.Future[object]) -> None:
        self.owner = owner
        self.waiter = waiter
        self.fired = False


class VirtualClock:
    """Timeouts that fire only when the test fires them."""

    def __init__(self) -> None:
        self._armed: list[_Timer] = []

    async def wait_for(self, waiter: asyncio.Future[T], seconds: float) -> T:
        del seconds  # virtual time: only `fire` ends the wait early
        timer = _Timer(asyncio.current_task(), waiter)  # type: ignore[arg-type]
        self._armed.append(timer)
        try:
            return await waiter
        except asyncio.CancelledError:
            if timer.fired:
                raise TimeoutError("virtual timeout fired") from None
            raise
        finally:
            self._armed.remove(timer)

    def armed(self) -> tuple[Origin | None, ...]:
        """The tasks whose waits are armed, in the order they started waiting."""
        return tuple(timer.owner for timer in self._armed)

    def fire(self, owner: Origin) -> None:
        """Let the wait of task `owner` time out now (it raises when it next runs)."""
        for timer in self._armed:
            if timer.owner is owner and not timer.fired:
                timer.fired = True
                timer.waiter.cancel()
                return
        raise LookupError("no ack wait is armed for that task")


class FakeTransport:
    """The client end of the fake socket (a `Transport`)."""

    def __init__(self, server: FakeServer) -> None:
        self._server = server

    def send(self, op: ClientOp) -> None:
        self._server._receive_op(op)

    async def recv(self) -> ServerEvent:
        return await self._server._next_for_client()


class FakeServer:
    """The provider's server with every delivery in the test's hands (module docstring)."""

    def __init__(self, items: Iterable[ChatItem] = ()) -> None:
        self.conversation = ChatContext(items)
        self.clock = VirtualClock()
        self.transport = FakeTransport(self)
        #: Ops sent by the client, not yet applied by the server.
        self.to_server: deque[SentOp] = deque()
        #: Events emitted by the server, not yet delivered to the client.
        self.to_client: deque[SentEvent] = deque()
        #: Events delivered, not yet taken by the client's receive loop.
        self._inbox: deque[SentEvent] = deque()
        self._receiver: asyncio.Future[None] | None = None
        # -- observations ----------------------------------------------------
        initial = frozenset(self.conversation.ids())
        #: Items the client has seen acknowledged (the start, then each "added" it took).
        self.acked: set[str] = set(initial)
        self.reached: set[str] = set(initial)
        self.removed: set[str] = set()
        #: (sender, item, whether the client had seen the item acknowledged when sent)
        self.deletes_sent: list[tuple[Origin | None, str, bool]] = []
        #: Items whose create was refused because the item it was to follow had
        #: been deleted: pushed, yet never to arrive.
        self.refused: set[str] = set()
        #: (sender, item): creates applied for an item a delete had removed.
        self.recreated: list[tuple[Origin | None, str]] = []
        #: How many items the model created.
        self.created = 0
        #: Every op ever sent, by event id.
        self.sent: dict[str, SentOp] = {}

    # -- what the test reads -------------------------------------------------------

    def server_ids(self) -> tuple[str, ...]:
        return self.conversation.ids()

    def events_in_flight(self) -> tuple[SentEvent, ...]:
        """Events not yet applied by the client: delivered-but-untaken ones first."""
        return (*self._inbox, *self.to_client)

    def quiet(self) -> bool:
        return not self.to_server and not self.to_client and not self._inbox

    # -- the client side ------------------------------------------------------------

    def _receive_op(self, op: ClientOp) -> None:
        origin: Origin | None = _current_task()
        if isinstance(op, DeleteOp):
            self.deletes_sent.append((origin, op.item_id, op.item_id in self.acked))
        sent = SentOp(op, origin)
        self.sent[op.event_id] = sent
        self.to_server.append(sent)

    async def _next_for_client(self) -> ServerEvent:
        while not self._inbox:
            receiver: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._receiver = receiver
            try:
                await receiver
            finally:
                self._receiver = None
        sent = self._inbox.popleft()
        if isinstance(sent.event, ItemAdded):
            self.acked.add(sent.event.item.id)
        return sent.event

    # -- the test's controls --------------------------------------------------------

    def deliver_to_server(self) -> None:
        """The server applies the next op (or rejects it, as the real one would)."""
        sent = self.to_server.popleft()
        op = sent.op
        if isinstance(op, DeleteOp):
            if op.item_id not in self.conversation:
                self._emit(ErrorEvent(op.event_id, f"item {op.item_id} not found"), sent)
                return
            self.conversation.discard(op.item_id)
            self.removed.add(op.item_id)
            self._emit(ItemDeleted(op.item_id), sent)
            return
        item = op.item
        if item.id in self.conversation:
            self._emit(ErrorEvent(op.event_id, f"item {item.id} already exists"), sent)
            return
        if op.previous_id is not None and op.previous_id not in self.conversation:
            if op.previous_id in self.removed:
                self.refused.add(item.id)
            self._emit(ErrorEvent(op.event_id, f"previous item {op.previous_id} not found"), sent)
            return
        self.conversation.insert_after(item, op.previous_id)
        self.reached.add(item.id)
        if item.id in self.removed:
            self.recreated.append((sent.origin, item.id))
        self._emit(ItemAdded(item, op.previous_id), sent)

    def reject_next(self) -> None:
        """The server rejects the next op whatever it is."""
        sent = self.to_server.popleft()
        self._emit(ErrorEvent(sent.op.event_id, "rejected"), sent)

    def deliver_to_client(self) -> None:
        """Hand the next event to the client; its receive loop applies it when it runs."""
        self._inbox.append(self.to_client.popleft())
        if self._receiver is not None and not self._receiver.done():
            self._receiver.set_result(None)

    def model_creates(self, item: ChatItem) -> None:
        """The model adds an item of its own at the tail of the conversation."""
        ids = self.conversation.ids()
        previous = ids[-1] if ids else None
        self.conversation.insert_after(item, previous)
        self.reached.add(item.id)
        self.created += 1
        self.to_client.append(SentEvent(ItemAdded(item, previous), None))

    def _emit(self, event: ServerEvent, answers: SentOp) -> None:
        self.to_client.append(SentEvent(event, answers))


def _current_task() -> Origin | None:
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None
