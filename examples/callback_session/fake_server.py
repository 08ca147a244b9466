"""The example's wire bridge: its `Connection` over ackguard's shared stand-in server.

The stand-in (`proofs.engines.conformance.StandIn`) is the controlled server:
nothing moves unless the harness says so, and it applies ops as ackguard's
model says a provider server does. This bridge only speaks the example's wire:
it turns each JSON-shaped op the session sends into a `WireOp`, and calls the
session's callback with each event in the next loop iteration after the
harness delivers it, as a connection's reader task would. A timeout given in
the same iteration therefore fires first: the sync fails and the event still
updates the mirror (the model's order: timeout, then client-apply).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from examples.callback_session.session import Item, Message
from model import EventKind, OpKind
from proofs.engines.conformance import StandIn, WireEvent, WireOp


class AcmeWire:
    """The `Connection` the session talks to."""

    def __init__(self, server: StandIn) -> None:
        self.server = server
        server.on_deliver = self._delivered
        self._callback: Callable[[Message], None] | None = None

    def send(self, message: Message) -> None:
        origin = asyncio.current_task()
        if message["type"] == "item.delete":
            op = WireOp(OpKind.DELETE, message["key"], origin=origin, message=message)
        else:
            item = Item.from_wire(message["item"])
            op = WireOp(OpKind.CREATE, item.key, message["after"], item, origin, message)
        self.server.send(op)

    def on_event(self, callback: Callable[[Message], None]) -> None:
        self._callback = callback

    def _delivered(self) -> None:
        callback = self._callback
        if callback is None:
            raise RuntimeError(
                "no session registered a callback with on_event: build the session with "
                "this wire as its connection"
            )
        asyncio.get_running_loop().call_soon(lambda: callback(event_message(self.server.take())))


def event_message(event: WireEvent) -> Message:
    """A stand-in event as the example's server would send it."""
    if event.kind is EventKind.ADDED:
        assert isinstance(event.payload, Item)
        return {"type": "item.created", "item": event.payload.to_wire(), "after": event.after}
    if event.kind is EventKind.DELETED:
        return {"type": "item.deleted", "key": event.item}
    assert event.answers is not None and isinstance(event.answers.message, dict)
    return {"type": "error", "op_id": event.answers.message["op_id"], "message": event.reason}
