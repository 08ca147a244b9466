"""A fake Acme server for tests: nothing moves unless the test says so.

It is the `Connection` the session talks to. An op waits in `inbound` until
the test calls `apply_next` (or `reject_next`); an event waits in `outbound`
until it calls `deliver_next`, which calls the session's callback soon (in the
next loop iteration, as a reader task would). It
applies ops as ackguard's model says a provider server does: a create of an
existing key, a create after an unknown item and a delete of an unknown key are
answered by an error event; a create after None goes to the head; the model's
own items go to the tail under keys the server assigns (`srv-1`, ...).

It also records what the invariants need and the session never knows: which
items the client has seen acknowledged, which ever reached the server, which a
delete removed, every delete sent (by which task, and whether its item was
acknowledged then), refused creates and re-creations.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from examples.callback_session.session import Conversation, Item, Message

#: Who sent an op: the asyncio task that was running when the session sent it.
Origin = asyncio.Task[Any] | None


@dataclass(frozen=True)
class Sent:
    message: Message
    origin: Origin


@dataclass(frozen=True)
class Emitted:
    event: Message
    #: The op this event answers; None for an item the model created.
    answers: Sent | None


class FakeAcmeServer:
    def __init__(self, items: Iterable[Item] = ()) -> None:
        self.conversation = Conversation(items)
        #: Ops sent by the client, not yet applied.
        self.inbound: deque[Sent] = deque()
        #: Events emitted, not yet delivered to the client.
        self.outbound: deque[Emitted] = deque()
        #: Events delivered whose callback has not run yet.
        self.delivered: deque[Emitted] = deque()
        self._callback: Callable[[Message], None] | None = None
        self._keys = itertools.count(1)
        start = set(self.conversation.keys())
        self.acked: set[str] = set(start)
        self.reached: set[str] = set(start)
        self.removed: set[str] = set()
        self.deletes_sent: list[tuple[Origin, str, bool]] = []
        self.refused: set[str] = set()
        self.recreated: list[tuple[Origin, str]] = []
        self.created = 0

    # -- the Connection the session sees -------------------------------------------

    def send(self, message: Message) -> None:
        origin = asyncio.current_task()
        if message["type"] == "item.delete":
            key = message["key"]
            self.deletes_sent.append((origin, key, key in self.acked))
        self.inbound.append(Sent(message, origin))

    def on_event(self, callback: Callable[[Message], None]) -> None:
        self._callback = callback

    # -- the test's controls -------------------------------------------------------

    def apply_next(self) -> None:
        """Apply the next op, or answer it with an error as the real server would."""
        sent = self.inbound.popleft()
        message = sent.message
        if message["type"] == "item.delete":
            key = message["key"]
            if key not in self.conversation:
                self._error(sent, f"no item {key}")
                return
            self.conversation.discard(key)
            self.removed.add(key)
            self._emit({"type": "item.deleted", "key": key}, sent)
            return
        item = Item.from_wire(message["item"])
        after = message["after"]
        if item.key in self.conversation:
            self._error(sent, f"item {item.key} exists")
            return
        if after is not None and after not in self.conversation:
            if after in self.removed:
                self.refused.add(item.key)
            self._error(sent, f"no item {after} to follow")
            return
        self.conversation.insert_after(item, after)
        self.reached.add(item.key)
        if item.key in self.removed:
            self.recreated.append((sent.origin, item.key))
        self._emit({"type": "item.created", "item": item.to_wire(), "after": after}, sent)

    def reject_next(self) -> None:
        """Reject the next op, whatever it is."""
        self._error(self.inbound.popleft(), "rejected")

    def deliver_next(self) -> None:
        """Hand the next event to the client; the callback runs in the next loop iteration.

        As a real connection's reader task would call it: a timeout given in the
        same iteration fires first, so the sync fails and the event still
        updates the mirror (the model's order: timeout, then client-apply).
        """
        if self._callback is None:
            raise RuntimeError(
                "no session registered a callback with on_event: build the session with "
                "this server as its connection"
            )
        emitted = self.outbound.popleft()
        self.delivered.append(emitted)
        asyncio.get_running_loop().call_soon(self._call_back, self._callback)

    def in_flight(self) -> tuple[Emitted, ...]:
        """Events the client has not applied yet: delivered ones first."""
        return (*self.delivered, *self.outbound)

    def _call_back(self, callback: Callable[[Message], None]) -> None:
        event = self.delivered.popleft().event
        if event["type"] == "item.created":
            self.acked.add(event["item"]["key"])
        callback(event)

    def model_creates(self, role: str, text: str) -> str:
        """The model adds an item of its own at the tail; returns the key it assigned."""
        keys = self.conversation.keys()
        after = keys[-1] if keys else None
        item = Item(f"srv-{next(self._keys)}", role, text)
        self.conversation.insert_after(item, after)
        self.reached.add(item.key)
        self.created += 1
        self.outbound.append(
            Emitted({"type": "item.created", "item": item.to_wire(), "after": after}, None)
        )
        return item.key

    def item(self, key: str) -> Item:
        return self.conversation.get(key)

    def _error(self, sent: Sent, text: str) -> None:
        self._emit({"type": "error", "op_id": sent.message["op_id"], "message": text}, sent)

    def _emit(self, event: Message, answers: Sent) -> None:
        self.outbound.append(Emitted(event, answers))
