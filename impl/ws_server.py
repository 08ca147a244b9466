"""A loopback websocket server that speaks the item events of the OpenAI realtime
protocol, with a settable per-message latency, so the sessions can be measured
over a real socket instead of the step-by-step fake.

What it answers, per connection (one conversation each, like a realtime session):

- on connect: `session.created` with the conversation's id;
- `conversation.item.create` (`previous_item_id`: an id, `"root"` for the head,
  absent for the tail) -> `conversation.item.added` (or `conversation.item.created`
  with `legacy_created`, as older servers do);
- `conversation.item.delete` -> `conversation.item.deleted`;
- a duplicate id (`item_create_duplicate_item_id`), an unknown predecessor, an
  unknown id to delete, an unknown event type or a random rejection -> `error`
  whose `error.event_id` is the client's `event_id`;
- `add_item`: the model adds an item of its own at the tail
  (`conversation.item.added` answering no request).

Latency: every message, in each direction, is held for `latency ± jitter`
(uniform, from a per-connection RNG seeded from `seed`), and never overtakes an
earlier message of the same direction: one websocket is one ordered stream, so
a slow message holds up those behind it. An ack round trip is therefore about
twice the latency.

It binds 127.0.0.1 on a free port only. Every loop ends when its connection
closes, and the whole server closes itself after `max_lifetime` seconds, so a
forgotten server cannot outlive its run.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import random
from types import TracebackType
from typing import Any, Self

from attrs import define, field, frozen
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

log = logging.getLogger("impl.ws_server")

JSON = dict[str, Any]

HOST = "127.0.0.1"
ROOT = "root"

ADDED = "conversation.item.added"
CREATED = "conversation.item.created"
DELETED = "conversation.item.deleted"

DUPLICATE_ID = "item_create_duplicate_item_id"
UNKNOWN_PREVIOUS = "item_create_invalid_previous_item_id"
UNKNOWN_ITEM = "item_delete_invalid_item_id"
UNKNOWN_EVENT = "invalid_event_type"
INVALID_JSON = "invalid_json"
REJECTED = "server_rejected"


@frozen
class ServerSettings:
    """How the server behaves; times in seconds."""

    #: One-way delay of every message, each direction.
    latency: float = 0.0
    #: Each message's delay is `latency` plus a uniform draw in [-jitter, +jitter].
    jitter: float = 0.0
    seed: int = 0
    #: Probability that the server rejects an op it could apply (an `error` event).
    reject_probability: float = 0.0
    #: Answer creates with `conversation.item.created`, as older servers do.
    legacy_created: bool = False
    #: The server closes itself after this long (None: only when closed).
    max_lifetime: float | None = 600.0

    def __attrs_post_init__(self) -> None:
        if self.latency < 0 or self.jitter < 0:
            raise ValueError("latency and jitter must not be negative")
        if not 0.0 <= self.reject_probability <= 1.0:
            raise ValueError("reject_probability must be within [0, 1]")


@define
class Conversation:
    """One connection's server conversation, and what the harness may read of it."""

    session_id: str
    #: The items, in order, as the client sent them (JSON objects with an `id`).
    items: list[JSON] = field(factory=list)
    #: Every item that was ever on this conversation.
    reached: set[str] = field(factory=set)
    #: Items a delete removed.
    removed: set[str] = field(factory=set)
    #: Items whose create was refused because the item it was to follow had been
    #: deleted: pushed, yet never to arrive (they count as pushed for invariant 2).
    refused: set[str] = field(factory=set)
    #: Items a create brought back after a delete had removed them.
    recreated: list[str] = field(factory=list)
    #: Client events received, and of those applied or rejected.
    received: int = 0
    handled: int = 0
    #: Events scheduled for the client, and of those written to the socket.
    emitted: int = 0
    written: int = 0
    rejected: int = 0
    #: Items the model added on its own.
    model_items: int = 0
    closed: bool = False

    def ids(self) -> tuple[str, ...]:
        return tuple(str(item["id"]) for item in self.items)

    def quiet(self) -> bool:
        """Nothing received is waiting to be applied, nothing emitted is waiting to go out."""
        return self.handled == self.received and self.written == self.emitted

    def _index(self, item_id: str) -> int | None:
        for position, item in enumerate(self.items):
            if item["id"] == item_id:
                return position
        return None


class _Link:
    """One direction of one connection: order-preserving, each message delayed."""

    def __init__(self, settings: ServerSettings, rng: random.Random) -> None:
        self._settings = settings
        self._rng = rng
        self._last_due = 0.0
        self.queue: asyncio.Queue[tuple[float, str]] = asyncio.Queue()

    def put(self, text: str) -> None:
        loop = asyncio.get_running_loop()
        delay = self._settings.latency
        if self._settings.jitter:
            delay += self._rng.uniform(-self._settings.jitter, self._settings.jitter)
        due = max(self._last_due, loop.time() + max(0.0, delay))
        self._last_due = due
        self.queue.put_nowait((due, text))

    async def get(self) -> str:
        due, text = await self.queue.get()
        delay = due - asyncio.get_running_loop().time()
        if delay > 0:
            await asyncio.sleep(delay)
        return text


class _Connection:
    def __init__(self, server: LoopbackServer, ws: ServerConnection, conversation: Conversation):
        self.ws = ws
        self.conversation = conversation
        rng = random.Random(f"{server.settings.seed}/{conversation.session_id}")
        self._settings = server.settings
        self._rng = rng
        self.inbound = _Link(server.settings, rng)
        self.outbound = _Link(server.settings, rng)
        self._server_event_ids = itertools.count(1)

    # -- the three loops of a connection: each ends when the socket closes ----------

    async def run(self) -> None:
        applier = asyncio.create_task(self._apply_loop(), name="ws-server-apply")
        writer = asyncio.create_task(self._write_loop(), name="ws-server-write")
        try:
            self.emit({"type": "session.created", "session": {"id": self.conversation.session_id}})
            async for message in self.ws:
                self.conversation.received += 1
                self.inbound.put(message if isinstance(message, str) else message.decode())
        except ConnectionClosed:
            pass
        finally:
            self.conversation.closed = True
            for task in (applier, writer):
                task.cancel()
            for task in (applier, writer):
                with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                    await task

    async def _apply_loop(self) -> None:
        while True:
            text = await self.inbound.get()
            try:
                self.handle(text)
            finally:
                self.conversation.handled += 1

    async def _write_loop(self) -> None:
        while True:
            text = await self.outbound.get()
            await self.ws.send(text)
            self.conversation.written += 1

    # -- the protocol -----------------------------------------------------------------

    def emit(self, event: JSON) -> None:
        event = {"event_id": f"event_srv_{next(self._server_event_ids)}", **event}
        self.conversation.emitted += 1
        self.outbound.put(json.dumps(event))

    def error(self, client_event_id: str | None, code: str, message: str) -> None:
        self.emit(
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "code": code,
                    "message": message,
                    "param": None,
                    "event_id": client_event_id,
                },
            }
        )

    def handle(self, text: str) -> None:
        try:
            event = json.loads(text)
        except ValueError:
            self.error(None, INVALID_JSON, "the event is not valid JSON")
            return
        if not isinstance(event, dict):
            self.error(None, INVALID_JSON, "the event is not a JSON object")
            return
        event_id = event.get("event_id")
        kind = event.get("type")
        if kind == "conversation.item.create":
            self._create(event_id, event)
        elif kind == "conversation.item.delete":
            self._delete(event_id, event)
        else:
            self.error(event_id, UNKNOWN_EVENT, f"unsupported event type {kind!r}")

    def _reject(self, event_id: str | None) -> bool:
        if self._settings.reject_probability and self._rng.random() < (
            self._settings.reject_probability
        ):
            self.conversation.rejected += 1
            self.error(event_id, REJECTED, "the server rejected this event")
            return True
        return False

    def _create(self, event_id: str | None, event: JSON) -> None:
        conversation = self.conversation
        item = event.get("item")
        if not isinstance(item, dict):
            self.error(event_id, "missing_required_parameter", "item is required")
            return
        item = dict(item)
        if not item.get("id"):
            item["id"] = f"item_srv_{next(self._server_event_ids)}"
        item_id = str(item["id"])
        previous = event.get("previous_item_id")
        if conversation._index(item_id) is not None:
            self.error(event_id, DUPLICATE_ID, f"Item with id '{item_id}' already exists.")
            return
        if previous is None:
            position = len(conversation.items)
        elif previous == ROOT:
            position = 0
        else:
            found = conversation._index(str(previous))
            if found is None:
                if str(previous) in conversation.removed:
                    conversation.refused.add(item_id)
                self.error(
                    event_id, UNKNOWN_PREVIOUS, f"Previous item with id '{previous}' not found."
                )
                return
            position = found + 1
        if self._reject(event_id):
            return
        self._insert(item, position)

    def _insert(self, item: JSON, position: int) -> None:
        conversation = self.conversation
        item_id = str(item["id"])
        conversation.items.insert(position, item)
        conversation.reached.add(item_id)
        if item_id in conversation.removed:
            conversation.recreated.append(item_id)
        previous = conversation.items[position - 1]["id"] if position else None
        kind = CREATED if self._settings.legacy_created else ADDED
        self.emit({"type": kind, "previous_item_id": previous, "item": item})

    def _delete(self, event_id: str | None, event: JSON) -> None:
        conversation = self.conversation
        item_id = str(event.get("item_id"))
        position = conversation._index(item_id)
        if position is None:
            self.error(event_id, UNKNOWN_ITEM, f"Item with id '{item_id}' not found.")
            return
        if self._reject(event_id):
            return
        del conversation.items[position]
        conversation.removed.add(item_id)
        self.emit({"type": DELETED, "item_id": item_id})

    def model_adds(self, item: JSON) -> None:
        """The model appends an item of its own; the client hears of it unasked."""
        self.conversation.model_items += 1
        if self.conversation._index(str(item["id"])) is not None:
            raise ValueError(f"item {item['id']!r} is already in the conversation")
        self._insert(dict(item), len(self.conversation.items))


class Listener:
    """What both loopback servers share: listening on 127.0.0.1 on a port the system
    picks, the lifetime watchdog, and `async with`. A subclass gives `_handle`."""

    #: `aclose` swallows an error from the server's final wait (the gated server
    #: closes under connections the harness may have left half-released).
    _quiet_close = False

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self._server: Server | None = None
        self._watchdog: asyncio.TimerHandle | None = None

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the server is not started")
        return int(next(iter(self._server.sockets)).getsockname()[1])

    @property
    def url(self) -> str:
        return f"ws://{HOST}:{self.port}"

    async def _handle(self, ws: ServerConnection) -> None:
        raise NotImplementedError

    async def start(self) -> None:
        """Bind 127.0.0.1 on a port the system picks, and start serving."""
        self._server = await serve(
            self._handle,
            HOST,
            0,
            compression=None,
            ping_interval=None,
            close_timeout=1.0,
            max_queue=None,
        )
        if self.settings.max_lifetime is not None:
            loop = asyncio.get_running_loop()
            self._watchdog = loop.call_later(self.settings.max_lifetime, self._expire)

    def _expire(self) -> None:
        log.warning("the loopback server reached its lifetime; closing it")
        if self._server is not None:
            self._server.close()

    async def aclose(self) -> None:
        """Close every connection and stop listening; idempotent."""
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        server, self._server = self._server, None
        if server is not None:
            server.close()
            if self._quiet_close:
                with contextlib.suppress(Exception):
                    await server.wait_closed()
            else:
                await server.wait_closed()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()


class LoopbackServer(Listener):
    """The server; use as `async with LoopbackServer(settings) as server:`."""

    def __init__(self, settings: ServerSettings | None = None) -> None:
        super().__init__(settings if settings is not None else ServerSettings())
        #: Every conversation, open or closed, by session id, in connection order.
        self.conversations: dict[str, Conversation] = {}
        self._connections: dict[str, _Connection] = {}
        self._session_ids = itertools.count(1)

    def add_item(self, session_id: str, item: JSON) -> None:
        """The model adds `item` at the tail of conversation `session_id`."""
        connection = self._connections.get(session_id)
        if connection is None:
            raise LookupError(f"no open connection for session {session_id!r}")
        connection.model_adds(item)

    async def _handle(self, ws: ServerConnection) -> None:
        session_id = f"sess_{next(self._session_ids)}"
        conversation = Conversation(session_id)
        self.conversations[session_id] = conversation
        connection = _Connection(self, ws, conversation)
        self._connections[session_id] = connection
        try:
            await connection.run()
        finally:
            del self._connections[session_id]
