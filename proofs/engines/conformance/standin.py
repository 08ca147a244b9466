"""The shared stand-in server: the environment half of every conformance adapter.

It holds the conversation and both FIFOs of one websocket and applies ops as
the model's server does: a duplicate create, a create after an unknown item and
a delete of an unknown item are answered by an error event (a create refused
because the item it was to follow had been deleted is recorded); a create
after None goes to the head; the model's own items go to the tail. An
append-only stand-in (`appends=True`, for the creates-only session shapes) puts
every create at the tail, as such a server has no anchor or id to check. Nothing
moves by itself: the harness applies, rejects and delivers one at a time, and
fires ack timeouts on a virtual clock, per task.

A framework plugs in through a small wire. Its sends become `WireOp`s (kind,
item id, anchor, payload, origin task, and the framework's own message), and
`deliver_next` moves the head event to the client's side and calls the
`on_deliver` hook the adapter supplies; the framework takes it with `take` when
it really receives it (impl's receive loop, the example's callback in the next
loop iteration, livekit's session at once). Until then the event is still in
flight, as in the model, and an "added" counts as acknowledged only once taken.

Ids here are the framework's own (the wire's); `view` names them in the
model's words through the adapter's `name` and `who`.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from attrs import field, frozen

from model import EventKind, OpKind
from proofs.engines.conformance.adapter import EventView, OpView, ServerView

T = TypeVar("T")


@frozen
class WireOp:
    """One op a framework sent, as the stand-in keeps it."""

    kind: OpKind
    item: str
    #: For a create: the item it goes after (None: the head).
    after: str | None = None
    #: For a create: the framework's item object, handed back in its "added" event.
    payload: object = None
    #: The task that sent it (`asyncio.current_task()` at the send).
    origin: object = None
    #: The framework's own message, for its bridge to answer (an error names it).
    message: object = field(default=None, eq=False)


@frozen
class WireEvent:
    """One event the server emitted: added, deleted, or rejected (an error)."""

    kind: EventKind
    item: str
    after: str | None = None
    payload: object = None
    #: The op it answers (None: an item the model created).
    answers: WireOp | None = None
    #: For an error: why (the real servers' text is free-form).
    reason: str = ""
    #: For an error: the create was refused because the id is on the server already
    #: (the model's `Event.duplicate`, which a session may treat apart).
    duplicate: bool = False


class AckClock:
    """Ack timeouts on virtual time: a wait ends early only when `fire` says so.

    Any session whose clock is `async wait_for(waiter, seconds)` can use it.
    """

    def __init__(self) -> None:
        self._armed: list[_Timer] = []

    async def wait_for(self, waiter: asyncio.Future[T], seconds: float) -> T:
        del seconds  # virtual time: only `fire` ends the wait early
        timer = _Timer(asyncio.current_task(), waiter)
        self._armed.append(timer)
        try:
            return await waiter
        except asyncio.CancelledError:
            if timer.fired:
                raise TimeoutError("virtual timeout fired") from None
            raise
        finally:
            self._armed.remove(timer)

    def armed(self) -> tuple[object, ...]:
        """The tasks whose waits are armed, in the order they started waiting."""
        return tuple(timer.owner for timer in self._armed)

    def fire(self, owner: object) -> None:
        """Let the wait of task `owner` time out now (it raises when it next runs)."""
        for timer in self._armed:
            if timer.owner is owner and not timer.fired:
                timer.fired = True
                timer.waiter.cancel()
                return
        raise LookupError("no ack wait is armed for that task")


class _Timer:
    def __init__(self, owner: object, waiter: asyncio.Future[Any]) -> None:
        self.owner = owner
        self.waiter = waiter
        self.fired = False


class StandIn:
    """The server end of one run: conversation, FIFOs, clock and what it observed."""

    def __init__(
        self,
        items: Iterable[tuple[str, object]] = (),
        on_deliver: Callable[[], None] | None = None,
        *,
        appends: bool = False,
    ) -> None:
        #: The server conversation: (id, payload), in order.
        self.conversation: list[tuple[str, object]] = list(items)
        self.on_deliver = on_deliver
        #: An append-only server (the creates-only shapes): a create goes at the tail
        #: whatever its anchor, even for an id the conversation holds already.
        self.appends = appends
        self.clock = AckClock()
        self.to_server: deque[WireOp] = deque()
        self.to_client: deque[WireEvent] = deque()
        #: Events delivered to the client side that it has not taken yet.
        self.delivered: deque[WireEvent] = deque()
        initial = {item for item, _ in self.conversation}
        #: Items the client has seen acknowledged (the start, then each "added" taken).
        self.acked: set[str] = set(initial)
        self.reached: set[str] = set(initial)
        #: Items a create was sent for, and those on the server at the start or by the model.
        self.sent: set[str] = set(initial)
        self.removed: set[str] = set()
        #: (origin, item, whether the client had seen the item acknowledged then)
        self.deletes_sent: list[tuple[object, str, bool]] = []
        #: Creates refused because the item they were to follow had been deleted.
        self.refused: set[str] = set()
        #: (origin, item): creates applied for an item a delete had removed.
        self.recreated: list[tuple[object, str]] = []
        #: Items a delete had removed that a rebuild put back.
        self.rebuilt: set[str] = set()
        self.created = 0

    # -- the wire, as the framework's bridge uses it -----------------------------------

    def send(self, op: WireOp) -> None:
        """An op leaves the client (never waits, as on a socket with a writer task)."""
        if op.kind is OpKind.DELETE:
            self.deletes_sent.append((op.origin, op.item, op.item in self.acked))
        else:
            self.sent.add(op.item)
        self.to_server.append(op)

    def take(self, *, acknowledge: bool = True) -> WireEvent:
        """The client receives the next delivered event (it is no longer in flight);
        `acknowledge=False` for a client that has no handler for it (an append-only
        session told of its own append), so its item counts as acknowledged no more."""
        event = self.delivered.popleft()
        if event.kind is EventKind.ADDED and acknowledge:
            self.acked.add(event.item)
        return event

    def ids(self) -> tuple[str, ...]:
        return tuple(item for item, _ in self.conversation)

    def quiet(self) -> bool:
        return not self.to_server and not self.to_client and not self.delivered

    # -- the environment's moves ------------------------------------------------------

    def apply_next(self) -> None:
        """The server applies the next op, or answers it with an error as the real one would."""
        op = self.to_server.popleft()
        ids = self.ids()
        if op.kind is OpKind.DELETE:
            if op.item not in ids:
                self._reject(op, f"item {op.item} not found")
                return
            del self.conversation[ids.index(op.item)]
            self.removed.add(op.item)
            self.to_client.append(WireEvent(EventKind.DELETED, op.item, answers=op))
            return
        if self.appends:
            self._place(op, len(ids))
            return
        if op.item in ids:
            self._reject(op, f"item {op.item} already exists", duplicate=True)
            return
        if op.after is not None and op.after not in ids:
            if op.after in self.removed:
                self.refused.add(op.item)
            self._reject(op, f"previous item {op.after} not found")
            return
        self._place(op, 0 if op.after is None else ids.index(op.after) + 1)

    def _place(self, op: WireOp, at: int) -> None:
        self.conversation.insert(at, (op.item, op.payload))
        self.reached.add(op.item)
        if op.item in self.removed:
            self.recreated.append((op.origin, op.item))
        self.to_client.append(WireEvent(EventKind.ADDED, op.item, op.after, op.payload, op))

    def reject_next(self) -> None:
        """The server rejects the next op, whatever it is."""
        self._reject(self.to_server.popleft(), "rejected")

    def deliver_next(self) -> None:
        """The next event reaches the client side; the framework takes it when it receives."""
        if self.on_deliver is None:
            raise RuntimeError("no delivery hook: the adapter's bridge sets `on_deliver`")
        self.delivered.append(self.to_client.popleft())
        self.on_deliver()

    def model_creates(self, item: str, payload: object = None) -> None:
        """The model adds an item of its own at the tail of the conversation."""
        ids = self.ids()
        after = ids[-1] if ids else None
        self.conversation.append((item, payload))
        self.reached.add(item)
        self.sent.add(item)
        self.created += 1
        self.to_client.append(WireEvent(EventKind.ADDED, item, after, payload))

    def drop(self) -> None:
        """The connection drops: every op and event in flight is lost."""
        self.to_server.clear()
        self.to_client.clear()
        self.delivered.clear()

    def rebuild(self, items: Iterable[tuple[str, object]]) -> None:
        """A new server session holds `items` (what the client sent it on connect)."""
        self.conversation = list(items)
        ids = set(self.ids())
        self.reached |= ids
        self.sent |= ids
        self.rebuilt |= ids & self.removed

    def _reject(self, op: WireOp, reason: str, duplicate: bool = False) -> None:
        event = WireEvent(
            EventKind.REJECTED, op.item, answers=op, reason=reason, duplicate=duplicate
        )
        self.to_client.append(event)

    # -- the server's half of an Observation -------------------------------------------

    def view(
        self,
        name: Callable[[str], str | None],
        who: Callable[[object], int | None],
        anchor: Callable[[WireOp | WireEvent], str | None] | None = None,
    ) -> ServerView:
        """What the server holds and observed, in the model's ids and task numbers.

        `name` maps a wire id to the model's (None: an item outside the scenario,
        left out everywhere); `who` maps an origin to its call; `anchor` says which
        model item a create or an "added" event goes after (by default: the name
        of the item it was sent or created after).
        """
        if anchor is None:
            anchor = _named_after(name)

        def op_view(op: WireOp) -> OpView | None:
            item = name(op.item)
            if item is None:
                return None
            after = anchor(op) if op.kind is OpKind.CREATE else None
            return OpView(op.kind, item, after, who(op.origin))

        def event_view(event: WireEvent) -> EventView | None:
            item = name(event.item)
            if item is None:
                return None
            task = None if event.answers is None else who(event.answers.origin)
            if event.kind is EventKind.REJECTED:
                assert event.answers is not None
                return EventView(
                    event.kind, item, op=event.answers.kind, task=task, duplicate=event.duplicate
                )
            if event.kind is EventKind.DELETED:
                return EventView(event.kind, item, task=task)
            return EventView(event.kind, item, anchor(event), task=task)

        def named(items: Iterable[str]) -> frozenset[str]:
            return frozenset(found for found in map(name, items) if found is not None)

        ops = (op_view(op) for op in self.to_server)
        events = (event_view(event) for event in (*self.delivered, *self.to_client))
        deletes = ((who(origin), name(item), acked) for origin, item, acked in self.deletes_sent)
        recreated = ((who(origin), name(item)) for origin, item in self.recreated)
        return ServerView(
            server=tuple(found for found in map(name, self.ids()) if found is not None),
            to_server=tuple(op for op in ops if op is not None),
            to_client=tuple(event for event in events if event is not None),
            created=self.created,
            acked=named(self.acked),
            reached=named(self.reached),
            removed=named(self.removed),
            deletes_sent=frozenset(
                (task, item, acked)
                for task, item, acked in deletes
                if task is not None and item is not None
            ),
            refused=named(self.refused),
            recreated=frozenset(
                (task, item) for task, item in recreated if task is not None and item is not None
            ),
            sent=named(self.sent),
            rebuilt=named(self.rebuilt),
        )


def _named_after(
    name: Callable[[str], str | None],
) -> Callable[[WireOp | WireEvent], str | None]:
    def after(wire: WireOp | WireEvent) -> str | None:
        return None if wire.after is None else name(wire.after)

    return after
