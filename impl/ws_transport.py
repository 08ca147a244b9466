"""The client end of a real websocket, as a `Transport`, speaking the item events
of the OpenAI realtime protocol as JSON.

`RealtimeSession`, `ThreeWaySession` and the activity run over it unchanged:
`send` never waits (a writer task drains a queue, so the ops of one push go out
in order, with no await between them in the session), and `recv` returns the
item events in the order the server emitted them, skipping the rest
(`session.created`, and anything else a real server says).

Like the fake server, it records what the harness needs to judge invariant 1
from the client side: the items the session has seen acknowledged, and each
delete sent with its sender and whether its item was acknowledged then.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from impl.chat_context import ChatItem, ChatMessage, FunctionCall, FunctionCallOutput
from impl.transport import (
    ClientOp,
    CreateOp,
    DeleteOp,
    ErrorEvent,
    ItemAdded,
    ItemDeleted,
    ServerEvent,
)

JSON = dict[str, Any]

#: `previous_item_id` meaning "at the head of the conversation".
ROOT = "root"

#: Who sent an op: the asyncio task that was running when it was sent.
Origin = object


class ProtocolError(Exception):
    """The server said something this client cannot read."""


# -- the JSON of items, ops and events --------------------------------------------------


def item_to_json(item: ChatItem) -> JSON:
    if isinstance(item, ChatMessage):
        part = "output_text" if item.role == "assistant" else "input_text"
        return {
            "id": item.id,
            "type": "message",
            "role": item.role,
            "content": [{"type": part, "text": item.text}],
        }
    if isinstance(item, FunctionCall):
        return {
            "id": item.id,
            "type": "function_call",
            "call_id": item.call_id,
            "name": item.name,
            "arguments": item.arguments,
        }
    return {
        "id": item.id,
        "type": "function_call_output",
        "call_id": item.call_id,
        "output": item.output,
    }


def item_from_json(data: JSON) -> ChatItem:
    """The inverse of `item_to_json`; also reads older servers' `text` and audio
    `transcript` content parts."""
    try:
        kind = data["type"]
        item_id = str(data["id"])
        if kind == "message":
            role = data["role"]
            if role not in ("user", "assistant", "system"):
                raise ProtocolError(f"unknown role {role!r}")
            text = "".join(
                str(part.get("text", part.get("transcript", "")) or "")
                for part in data.get("content", ())
            )
            return ChatMessage(item_id, role, text)
        if kind == "function_call":
            return FunctionCall(
                item_id, str(data["call_id"]), str(data["name"]), str(data["arguments"])
            )
        if kind == "function_call_output":
            return FunctionCallOutput(item_id, str(data["call_id"]), str(data["output"]))
    except (KeyError, TypeError, AttributeError) as error:
        raise ProtocolError(f"malformed item {data!r}") from error
    raise ProtocolError(f"unknown item type {kind!r}")


def op_to_json(op: ClientOp) -> JSON:
    if isinstance(op, CreateOp):
        return {
            "type": "conversation.item.create",
            "event_id": op.event_id,
            "previous_item_id": ROOT if op.previous_id is None else op.previous_id,
            "item": item_to_json(op.item),
        }
    return {"type": "conversation.item.delete", "event_id": op.event_id, "item_id": op.item_id}


def event_from_json(data: JSON) -> ServerEvent | None:
    """The item event in `data`, or None for an event the sessions do not read."""
    kind = data.get("type")
    try:
        if kind in ("conversation.item.added", "conversation.item.created"):
            previous = data.get("previous_item_id")
            return ItemAdded(
                item_from_json(data["item"]),
                None if previous in (None, ROOT) else str(previous),
            )
        if kind == "conversation.item.deleted":
            return ItemDeleted(str(data["item_id"]))
        if kind == "error":
            error = data.get("error") or {}
            return ErrorEvent(str(error.get("event_id") or ""), str(error.get("message", "")))
    except (KeyError, TypeError, AttributeError) as error:
        raise ProtocolError(f"malformed {kind} event") from error
    return None


# -- the transport -------------------------------------------------------------------------


class WebSocketTransport:
    """One realtime connection (a `Transport`); open it with `connect`."""

    def __init__(self, ws: ClientConnection, session_id: str, *, trace: int = 0) -> None:
        self._ws = ws
        self.session_id = session_id
        self._outgoing: asyncio.Queue[str] = asyncio.Queue()
        self._writer = asyncio.get_running_loop().create_task(
            self._write_loop(), name="ws-transport-write"
        )
        self._closed = False
        self._watches: dict[str, list[asyncio.Future[ChatItem]]] = {}
        # -- observations -------------------------------------------------------------
        #: Items the session has seen acknowledged ("added" events handed to it).
        self.acked: set[str] = set()
        #: (sender, item, whether the session had seen the item acknowledged when sent)
        self.deletes_sent: list[tuple[Origin | None, str, bool]] = []
        #: (sender, item) for each create sent.
        self.creates_sent: list[tuple[Origin | None, str]] = []
        #: Called with each op as it is handed to `send` (to time it, say).
        self.on_send: list[Callable[[ClientOp], None]] = []
        #: Called with each item event as `recv` hands it to the session.
        self.on_recv: list[Callable[[ServerEvent], None]] = []
        #: Ops handed to `send`, and item events handed out by `recv`.
        self.sent = 0
        self.received = 0
        #: The last `trace` ops and events, as readable lines (0: keep none).
        self.trace: deque[str] = deque(maxlen=trace)
        self._t0 = time.perf_counter()

    @classmethod
    async def connect(
        cls, url: str, *, open_timeout: float = 5.0, trace: int = 0
    ) -> WebSocketTransport:
        """Open a connection and wait for the server's `session.created`."""
        ws = await connect(
            url,
            compression=None,
            proxy=None,
            ping_interval=None,
            open_timeout=open_timeout,
            close_timeout=1.0,
            max_queue=None,
        )
        try:
            async with asyncio.timeout(open_timeout):
                first = json.loads(await ws.recv())
            if first.get("type") != "session.created":
                raise ProtocolError(f"expected session.created, got {first.get('type')!r}")
            session_id = str(first["session"]["id"])
        except BaseException:
            await ws.close()
            raise
        return cls(ws, session_id, trace=trace)

    # -- Transport ------------------------------------------------------------------------

    def send(self, op: ClientOp) -> None:
        """Queue `op` behind every op sent before it; never waits."""
        if self._closed:
            raise ConnectionError("the transport is closed")
        if isinstance(op, DeleteOp):
            self.deletes_sent.append((_current_task(), op.item_id, op.item_id in self.acked))
        else:
            self.creates_sent.append((_current_task(), op.item.id))
        self.sent += 1
        for listener in self.on_send:
            listener(op)
        self._note("->", op)
        self._outgoing.put_nowait(json.dumps(op_to_json(op)))

    async def recv(self) -> ServerEvent:
        """The next item event; raises ConnectionClosed when the socket closes."""
        while True:
            data = json.loads(await self._ws.recv())
            if not isinstance(data, dict):
                raise ProtocolError("an event is not a JSON object")
            event = event_from_json(data)
            if event is None:
                continue
            self.received += 1
            self._note("<-", event)
            if isinstance(event, ItemAdded):
                self.acked.add(event.item.id)
                for future in self._watches.pop(event.item.id, ()):
                    if not future.done():
                        future.set_result(event.item)
            for listener in self.on_recv:
                listener(event)
            return event

    # -- for harnesses ------------------------------------------------------------------

    def watch(self, item_id: str) -> asyncio.Future[ChatItem]:
        """A future resolved when an "added" event for `item_id` is handed to the
        session (its mirror has the item by the time an awaiting task runs)."""
        future: asyncio.Future[ChatItem] = asyncio.get_running_loop().create_future()
        self._watches.setdefault(item_id, []).append(future)
        return future

    async def drained(self, expected: int) -> None:
        """Wait until `recv` has handed out `expected` item events in all.

        The loopback server answers every op with exactly one event, so with
        `expected` = ops sent + items the model added, nothing is in flight.
        """
        if self.received >= expected:
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def count(_: ServerEvent) -> None:
            if self.received >= expected and not done.done():
                done.set_result(None)

        self.on_recv.append(count)
        try:
            await done
        finally:
            self.on_recv.remove(count)

    async def aclose(self) -> None:
        """Stop writing and close the socket; idempotent. Close the session first."""
        self._closed = True
        self._writer.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
            await self._writer
        await self._ws.close()
        for futures in self._watches.values():
            for future in futures:
                future.cancel()
        self._watches.clear()

    async def _write_loop(self) -> None:
        while True:
            text = await self._outgoing.get()
            await self._ws.send(text)

    def _note(self, direction: str, what: object) -> None:
        if self.trace.maxlen:
            elapsed = (time.perf_counter() - self._t0) * 1000
            task = _current_task()
            name = task.get_name() if isinstance(task, asyncio.Task) else "-"
            self.trace.append(f"{elapsed:9.3f} ms {direction} {_describe(what)} [{name}]")


def _describe(what: object) -> str:
    if isinstance(what, CreateOp):
        return f"create {what.item.id} after {what.previous_id or 'root'} ({what.event_id})"
    if isinstance(what, DeleteOp):
        return f"delete {what.item_id} ({what.event_id})"
    if isinstance(what, ItemAdded):
        return f"added {what.item.id} after {what.previous_id or 'root'}"
    if isinstance(what, ItemDeleted):
        return f"deleted {what.item_id}"
    if isinstance(what, ErrorEvent):
        return f"error for {what.event_id}: {what.message}"
    return repr(what)


def _current_task() -> Origin | None:
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None
