"""A gated mode of the loopback websocket server: nothing moves unless the harness says so.

`impl.ws_server` delivers every message after its latency. Here nothing is
delivered by itself, in either direction. What a client sends is read off the
socket into the connection's `to_server` FIFO and waits there; what the server
emits waits in `to_client`. The harness releases one delivery at a time:

- `apply_next`: the server handles the next client event (an item op through
  `impl.ws_server`'s own protocol code, with the same errors, or a session or
  response event below);
- `reject_next`: the server answers the next client event with an `error`
  carrying its `event_id`, whatever it is;
- `deliver_next`: the next server event is written to the socket;
- `create_item`: the model adds an item of its own at the tail, inside a
  response the server starts unasked (`response.created` first);
- `drop`: the server closes the connection abruptly (code 1011), as a
  provider that fails does; the client decides whether to reconnect;
- an ack timeout is no server move: the server just never answers, and the
  harness fires the client's timer (see `docs/livekit.md`).

It speaks enough of the OpenAI realtime protocol for a full session:
`session.update` is answered by `session.updated`, and `response.create` by the
next scripted `Response` (or an empty one): `response.created` (with the
request's metadata, so the client knows which request it answers), then for
each output `response.output_item.added`, `conversation.item.added` (the item
is on the conversation from here), for a message `response.content_part.added`
and `response.output_text.delta`/`.done`, for a function call
`response.function_call_arguments.delta`/`.done`, then
`response.output_item.done`, and `response.done`. A response scripted as held
stays open after its outputs are added (a message's text held back, a
function call complete; no `response.done`) until
`finish_response` or the client's `response.cancel` (then `response.done` with
status `cancelled`, recorded in `answers` as the answer to that cancel, so a
harness can gate the two as one op and its event).

It binds 127.0.0.1 on a free port only and closes itself after `max_lifetime`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections import deque
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import websockets.version
from attrs import field, frozen
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from impl.ws_server import (
    HOST,
    REJECTED,
    Conversation,
    Listener,
    ServerSettings,
    _Connection,
)

JSON = dict[str, Any]

#: Client events that are item ops (the model's ops); everything else is session traffic.
ITEM_OPS = frozenset({"conversation.item.create", "conversation.item.delete"})
#: Server events that answer item ops or add items (the model's events).
ITEM_EVENTS = frozenset(
    {"conversation.item.added", "conversation.item.created", "conversation.item.deleted"}
)


@frozen
class Message:
    """An assistant message a response carries; `text` is what it says."""

    item_id: str
    text: str


@frozen
class Call:
    """A function call a response carries."""

    item_id: str
    call_id: str
    name: str
    arguments: str = "{}"


Output = Message | Call


@frozen
class Response:
    """A scripted answer to one `response.create`.

    `held`: the response stays open once its outputs are added (a message's text
    is never streamed; a call is complete), until `finish_response` or the
    client's cancel.
    """

    outputs: tuple[Output, ...] = ()
    held: bool = False
    #: The harness's own name for it, kept with the response id it got (`started`).
    tag: str | None = None


def is_item_op(event: JSON) -> bool:
    """Whether a client event is an item op (the model's op), not session traffic."""
    return event.get("type") in ITEM_OPS


def is_item_event(event: JSON) -> bool:
    """Whether a server event answers an item op or adds an item (the model's event)."""
    return event.get("type") in ITEM_EVENTS or (
        event.get("type") == "error"
        and str(event.get("error", {}).get("event_id") or "").startswith("chat_ctx_")
    )


@frozen
class Delete:
    """A delete the server received: its event id, its item, whether the client had
    been delivered that item's "added" event when it sent the delete."""

    event_id: str | None
    item_id: str
    acked: bool


@frozen
class _Open:
    """The response under way (outputs added, not done)."""

    response_id: str
    outputs: list[Output] = field(factory=list)


#: The websockets majors `one_write` is tested on (`pyproject.toml` bounds the
#: dependency to them).
WEBSOCKETS_TESTED = "15, 16 and 17"


def one_write(
    ws: ServerConnection,
) -> tuple[Callable[[], AbstractAsyncContextManager[None]], Callable[[bytes], None]]:
    """The connection's own path for one message, which `deliver_together` takes for
    several: `send_context()` writes on exit everything its Sans-I/O protocol's
    `send_text` queued inside. websockets has no public call that writes several
    messages at once (`send` writes and drains each), so this reads two attributes
    its documentation does not promise, and says so plainly when they are gone."""
    send_context = getattr(ws, "send_context", None)
    send_text = getattr(getattr(ws, "protocol", None), "send_text", None)
    if not (callable(send_context) and callable(send_text)):
        raise RuntimeError(
            f"websockets {websockets.version.version} has no send_context() or "
            "protocol.send_text on its server connection; deliver_together writes "
            f"through them and is tested on websockets {WEBSOCKETS_TESTED} (docs/livekit.md)"
        )
    return send_context, send_text


class GatedConnection(_Connection):
    """One connection's conversation and both FIFOs; the harness moves everything."""

    def __init__(self, server: GatedServer, ws: ServerConnection, conversation: Conversation):
        super().__init__(server, ws, conversation)  # type: ignore[arg-type]
        self.responses = server.responses
        #: Client events read off the socket and not handled yet, in order.
        self.to_server: deque[JSON] = deque()
        #: Server events emitted and not written yet, in order.
        self.to_client: deque[JSON] = deque()
        #: Item ids whose "added" event has been written to the client.
        self.acked: set[str] = set()
        #: Every item delete received, in order.
        self.deletes: list[Delete] = []
        #: The event id of the create that put each item on the conversation.
        self.created_by: dict[str, str | None] = {}
        #: Events written, in order (for tests and for reading a run back).
        self.written_log: list[JSON] = []
        self._ids = itertools.count(1)
        self._open: _Open | None = None
        #: Each response started, by response id: its script (None: started unasked).
        self.started: dict[str, Response | None] = {}
        self._handling: str | None = None
        #: The client event each server event answers, by server event id, where the
        #: harness needs to know: a `response.done` ending a response the client's
        #: `response.cancel` asked to end maps to that cancel's event id.
        self.answers: dict[str, str | None] = {}
        self._received = asyncio.Event()

    # -- the socket: read everything at once, write only what the harness releases ------

    async def run(self) -> None:
        try:
            self.emit({"type": "session.created", "session": {"id": self.conversation.session_id}})
            async for message in self.ws:
                text = message if isinstance(message, str) else message.decode()
                self.conversation.received += 1
                try:
                    event = json.loads(text)
                except ValueError:
                    event = {"type": "invalid", "raw": text}
                if not isinstance(event, dict):
                    event = {"type": "invalid", "raw": text}
                if event.get("type") == "conversation.item.delete":
                    item_id = str(event.get("item_id"))
                    self.deletes.append(
                        Delete(event.get("event_id"), item_id, item_id in self.acked)
                    )
                self.to_server.append(event)
                self._received.set()
        except ConnectionClosed:
            pass
        finally:
            self.conversation.closed = True

    def emit(self, event: JSON) -> None:
        event = {"event_id": f"event_srv_{next(self._server_event_ids)}", **event}
        self.conversation.emitted += 1
        self.to_client.append(event)

    async def deliver_next(self) -> JSON:
        """Write the next server event to the client."""
        event = self.to_client.popleft()
        if event.get("type") in ("conversation.item.added", "conversation.item.created"):
            self.acked.add(str(event["item"]["id"]))
        await self.ws.send(json.dumps(event))
        self.conversation.written += 1
        self.written_log.append(event)
        return event

    async def deliver_together(self, count: int) -> list[JSON]:
        """Write the next `count` server events in one write to the socket, as a
        network that coalesces them delivers them: the client reads them in one go,
        with no turn of its own loop between them."""
        if not 0 < count <= len(self.to_client):
            raise ValueError(f"{count} events asked for, {len(self.to_client)} waiting")
        send_context, send_text = one_write(self.ws)
        events = [self.to_client.popleft() for _ in range(count)]
        frames = [json.dumps(event).encode() for event in events]
        async with send_context():
            for event, frame in zip(events, frames, strict=True):
                if event.get("type") in ("conversation.item.added", "conversation.item.created"):
                    self.acked.add(str(event["item"]["id"]))
                send_text(frame)
        self.conversation.written += count
        self.written_log.extend(events)
        return events

    # -- handling client events ---------------------------------------------------------

    def item_ops(self) -> int:
        """How many item ops wait in the client-to-server FIFO."""
        return sum(1 for event in self.to_server if is_item_op(event))

    def apply_session_traffic(self) -> None:
        """Handle every client event ahead of the first item op, and nothing else."""
        while self.to_server and not is_item_op(self.to_server[0]):
            self.apply_next()

    def apply_next(self) -> JSON:
        """Handle the next client event as the server would; the event handled."""
        event = self.to_server.popleft()
        self.conversation.handled += 1
        kind = event.get("type")
        if kind in ITEM_OPS:
            self._handling = event.get("event_id")
            try:
                self.handle(json.dumps(event))
            finally:
                self._handling = None
        elif kind == "session.update":
            self.emit({"type": "session.updated", "session": event.get("session", {})})
        elif kind == "response.create":
            self._respond(event)
        elif kind == "response.cancel":
            self._cancel(event)
        else:
            # anything else a real session sends (tool updates are session.update too;
            # audio buffer events) is accepted without an answer, as the real server
            # answers none that this client waits for
            pass
        return event

    def reject_next(self) -> JSON:
        """Answer the next client event with an error naming its `event_id`."""
        event = self.to_server.popleft()
        self.conversation.handled += 1
        self.conversation.rejected += 1
        self.error(event.get("event_id"), REJECTED, "the server rejected this event")
        return event

    def _insert(self, item: JSON, position: int) -> None:
        self.created_by[str(item["id"])] = self._handling
        super()._insert(item, position)

    # -- responses ------------------------------------------------------------------------

    def _respond(self, request: JSON) -> None:
        script = self.responses.popleft() if self.responses else Response()
        metadata = (request.get("response") or {}).get("metadata")
        self._start(metadata, script)
        for output in script.outputs:
            # a held response's calls complete (the tool runs); its messages' text waits
            self._add_output(output, stream=not script.held or isinstance(output, Call))
        if not script.held:
            self.finish_response()

    def _start(self, metadata: object, script: Response | None = None) -> None:
        if self._open is not None:
            self.finish_response("cancelled")
        response_id = f"resp_{next(self._ids)}"
        self.started[response_id] = script
        self._open = _Open(response_id)
        self.emit(
            {
                "type": "response.created",
                "response": {
                    "id": response_id,
                    "object": "realtime.response",
                    "status": "in_progress",
                    "metadata": metadata,
                    "output": [],
                },
            }
        )

    def _add_output(self, output: Output, *, stream: bool) -> None:
        assert self._open is not None
        index = len(self._open.outputs)
        self._open.outputs.append(output)
        base = {"response_id": self._open.response_id, "output_index": index}
        self.emit({"type": "response.output_item.added", **base, "item": _in_progress(output)})
        self.model_adds(_item_json(output, done=False))
        if isinstance(output, Message):
            part = {**base, "item_id": output.item_id, "content_index": 0}
            self.emit(
                {
                    "type": "response.content_part.added",
                    **part,
                    "part": {"type": "text", "text": ""},
                }
            )
            if stream:
                self._end_output(output)
        elif stream:
            self._end_output(output)

    def _end_output(self, output: Output) -> None:
        assert self._open is not None
        index = self._open.outputs.index(output)
        base = {"response_id": self._open.response_id, "output_index": index}
        if isinstance(output, Message):
            part = {**base, "item_id": output.item_id, "content_index": 0}
            self.emit({"type": "response.output_text.delta", **part, "delta": output.text})
            self.emit({"type": "response.output_text.done", **part, "text": output.text})
        else:
            call = {**base, "item_id": output.item_id, "call_id": output.call_id}
            self.emit(
                {
                    "type": "response.function_call_arguments.delta",
                    **call,
                    "delta": output.arguments,
                }
            )
            self.emit(
                {
                    "type": "response.function_call_arguments.done",
                    **call,
                    "arguments": output.arguments,
                }
            )
        self.emit(
            {"type": "response.output_item.done", **base, "item": _item_json(output, done=True)}
        )

    def start_response(self) -> None:
        """A response the server starts unasked (as after server-side turn detection)."""
        self._start(None)

    def create_item(self, output: Output) -> None:
        """The model adds `output` at the tail, in the open response (one starts unasked)."""
        if self._open is None:
            self.start_response()
        self._add_output(output, stream=False)

    def end_output(self, item_id: str) -> None:
        """The open response finishes one of its outputs (text, or a call's arguments)."""
        assert self._open is not None
        for output in self._open.outputs:
            if output.item_id == item_id:
                self._end_output(output)
                return
        raise LookupError(f"no output {item_id!r} in the open response")

    def finish_response(self, status: str = "completed") -> None:
        """End the open response with `response.done`."""
        if self._open is None:
            return
        response, self._open = self._open, None
        self.emit(
            {
                "type": "response.done",
                "response": {
                    "id": response.response_id,
                    "object": "realtime.response",
                    "status": status,
                    "output": [_item_json(output, done=True) for output in response.outputs],
                    "usage": None,
                },
            }
        )

    def _cancel(self, event: JSON) -> None:
        """End the open response; its `response.done` answers this cancel. With none
        open nothing is emitted (the real server answers with an error that the
        client waits for nothing on)."""
        if self._open is not None:
            self.finish_response("cancelled")
            self.answers[str(self.to_client[-1]["event_id"])] = event.get("event_id")

    @property
    def responding(self) -> bool:
        return self._open is not None

    async def drop(self) -> None:
        """Close the connection abruptly, as a failing server does."""
        await self.ws.close(code=1011, reason="dropped by the harness")


def _in_progress(output: Output) -> JSON:
    item = _item_json(output, done=False)
    item["status"] = "in_progress"
    return item


def _item_json(output: Output, *, done: bool) -> JSON:
    if isinstance(output, Message):
        content = [{"type": "output_text", "text": output.text}] if done else []
        return {
            "id": output.item_id,
            "object": "realtime.item",
            "type": "message",
            "role": "assistant",
            "status": "completed" if done else "in_progress",
            "content": content,
        }
    return {
        "id": output.item_id,
        "object": "realtime.item",
        "type": "function_call",
        "status": "completed" if done else "in_progress",
        "call_id": output.call_id,
        "name": output.name,
        "arguments": output.arguments if done else "",
    }


class GatedServer(Listener):
    """The gated server; use as `async with GatedServer() as server:`."""

    _quiet_close = True

    def __init__(self, *, max_lifetime: float | None = 600.0) -> None:
        super().__init__(ServerSettings(max_lifetime=max_lifetime))
        #: Scripted answers to the next `response.create`s, shared by every connection.
        self.responses: deque[Response] = deque()
        #: Every connection, in the order the clients connected.
        self.connections: list[GatedConnection] = []
        self.conversations: dict[str, Conversation] = {}
        self._session_ids = itertools.count(1)
        self._tasks: set[asyncio.Task[None]] = set()
        self.on_connect: Callable[[GatedConnection], None] | None = None

    @property
    def base_url(self) -> str:
        """What the OpenAI plugin's `RealtimeModel(base_url=...)` takes."""
        return f"http://{HOST}:{self.port}/v1"

    @property
    def current(self) -> GatedConnection:
        """The latest connection."""
        if not self.connections:
            raise LookupError("no client has connected")
        return self.connections[-1]

    async def _handle(self, ws: ServerConnection) -> None:
        session_id = f"sess_{next(self._session_ids)}"
        conversation = Conversation(session_id)
        self.conversations[session_id] = conversation
        connection = GatedConnection(self, ws, conversation)
        self.connections.append(connection)
        if self.on_connect is not None:
            self.on_connect(connection)
        await connection.run()


__all__ = [
    "ITEM_EVENTS",
    "ITEM_OPS",
    "Call",
    "Delete",
    "GatedConnection",
    "GatedServer",
    "Message",
    "Output",
    "Response",
    "is_item_event",
    "is_item_op",
]
