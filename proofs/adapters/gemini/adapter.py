"""livekit-plugins-google's real Gemini Live `RealtimeSession` in lockstep with the
model, over a stand-in transport.

The real session is built by its own `RealtimeModel.session()`; only the
`genai` client it makes is replaced, by `StandInClient`, whose `aio.live.connect` opens
a `StandInLive` session talking to the shared append-only stand-in server. So
the session's own connect task connects, its own update queues client events
on its own channel, and its own send task sends them: every turn part (the
item's text, which is its id) becomes one append op. What the real class does
is what is checked: its diff against its known state (the mirror), the known
state set to the request in the step that queues, the request kept back while
no session is active.

Every model move is one step of the real class: a call is a push through its
real `update_chat_ctx`; the server applying an append is the stand-in's;
Gemini's server echoes nothing and has no per-op error, so an "added" echo
and a rejection reach the session as nothing; the model's own item arrives as
a server turn whose input transcription is the item's id, complete at once,
which the session's own receive loop turns into a user message of its known
state (under an id of its own making, which the adapter maps back by its
text). A disconnect loses what is in flight and breaks the session's socket, so
its receive loop fails and its own connect task leaves its connection's block,
whose close of the dead socket waits (`StandInClient.connect`): that is the
drop window, where the session still treats the connection as active and a
push queues its appends on the fresh channel (they are in flight from then on,
as the model's `to_server` has them). The drop's second disconnect lets the
close finish: the connect task gives the session up and tries again (at once:
the harness's only clock is the ack clock); the connect is that attempt
succeeding, on a new server session that starts empty, to which the session
sends its known state (the request kept back meanwhile, if any), then what
its channel queued in the window.

A queued event names no sender on the wire: the adapter records which push
task queued each one (the session's `_send_client_event`, wrapped on the
instance without changing it), and an append's anchor is the item before it
in that push's request (what the real diff computes and the wire drops).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import SimpleNamespace
from typing import Any

import attrs
from google.genai import types
from livekit.agents import llm
from livekit.agents.types import APIConnectOptions
from livekit.plugins.google.realtime import realtime_api

from model import EventKind, OpKind, SessionShape
from model.state import Dropped
from proofs.adapters.duplex.agent import RealSessionFramework
from proofs.engines.conformance import AdapterFactory, FrameworkView, WireOp, compose


class StandInLive:
    """A connected Gemini Live session (the `genai` `AsyncSession` the real class uses)."""

    def __init__(self, framework: GeminiFramework) -> None:
        self.framework = framework
        self.closed = False
        self.dropped = False
        #: What the server says next, and a wake-up for the session's receive loop.
        self.inbox: deque[Any] = deque()
        self.arrived = asyncio.Event()

    def say(self, message: Any) -> None:
        self.inbox.append(message)
        self.arrived.set()

    async def send_client_content(self, *, turns: Any = None, turn_complete: bool = True) -> None:
        ids = [part.text for turn in turns or () for part in turn.parts or () if part.text]
        self.framework.sent(ids)

    async def send_tool_response(self, **kwargs: Any) -> None:
        raise RuntimeError("the scenarios' items are messages: no tool response is expected")

    async def send_realtime_input(self, **kwargs: Any) -> None:
        return None

    async def receive(self) -> AsyncIterator[Any]:
        while True:
            while self.inbox and not self.closed:
                yield self.inbox.popleft()
            if self.dropped or self.closed:  # as a closed websocket: it raises
                raise ConnectionError("the connection dropped" if self.dropped else "closed")
            self.arrived.clear()
            await self.arrived.wait()

    def drop(self) -> None:
        """The socket breaks: the session's receive loop fails as on a closed socket."""
        self.dropped = True
        self.arrived.set()

    async def close(self) -> None:
        self.closed = True
        self.arrived.set()


class StandInClient:
    """The `genai` client of the real session: `aio.live.connect` opens a `StandInLive`."""

    def __init__(self, framework: GeminiFramework) -> None:
        self.framework = framework
        self.aio = SimpleNamespace(live=self, aclose=self._aclose)

    @asynccontextmanager
    async def connect(self, *, model: str, config: Any) -> AsyncIterator[StandInLive]:
        framework = self.framework
        if framework.live is not None:  # a reconnect: it opens when the harness says
            framework.reopen = asyncio.Event()
            await framework.reopen.wait()
            framework.server.rebuild(())  # a new server session starts empty
        live = StandInLive(framework)
        framework.live = live
        try:
            yield live
        finally:
            if live.dropped:
                # closing a dead socket waits for a close handshake that never comes:
                # the session's connect task leaves this block, and gives the session
                # up, only when the harness's second disconnect says (the drop window)
                framework.closing = asyncio.Event()
                await framework.closing.wait()

    async def _aclose(self) -> None:
        return None


class GeminiFramework(RealSessionFramework):
    """The real Gemini Live `RealtimeSession` under impl's sites."""

    shapes = ("gemini",)
    what = "livekit-plugins-google's Gemini Live RealtimeSession"

    def build(self, shape: SessionShape) -> Any:
        self.live: StandInLive | None = None
        #: The push task of each chat-context event queued and not yet sent, in order.
        self.queued: deque[object] = deque()
        #: Whether the connect's own send of the known state has been seen.
        self.connected_once = False
        self.unexpected: list[str] = []
        #: Set while the session waits to reconnect; the harness's connect sets it.
        self.reopen: asyncio.Event | None = None
        #: Set while the connect task closes a dropped connection (the drop window);
        #: the harness's second disconnect sets it.
        self.closing: asyncio.Event | None = None
        self.server.on_deliver = self._deliver
        model = realtime_api.RealtimeModel(api_key="unused", conn_options=_NoWait())
        # the session makes its genai client as it starts; it gets the stand-in instead
        # (a real client costs 0.2 s to build and is never used)
        made = realtime_api.GenAIClient  # type: ignore[attr-defined]
        realtime_api.GenAIClient = lambda **options: StandInClient(self)  # type: ignore[attr-defined,assignment]
        try:
            session = model.session()
        finally:
            realtime_api.GenAIClient = made  # type: ignore[attr-defined]
        assert isinstance(session, realtime_api.RealtimeSession)
        session._chat_ctx = llm.ChatContext([self.livekit[i] for i in self.config.scenario.server])
        queue = session._send_client_event

        def recorded(event: Any) -> None:
            if isinstance(event, realtime_api._ChatCtxContent | realtime_api._ChatCtxToolResponse):
                # sent once queued: the channel is the socket writer's queue, and a drop
                # loses what is in it as it loses what is on the wire
                self.server.sent |= {self._named(item) for item in event.item_ids}
                if self.in_window():
                    # the fresh channel waits for the next connection: its appends are
                    # in flight from now on, and its send task's later send is this one
                    self._stage(event, asyncio.current_task())
                else:
                    self.queued.append(asyncio.current_task())
            queue(event)

        session._send_client_event = recorded  # type: ignore[method-assign]
        return session

    def kept(self) -> tuple[str, ...] | None:
        pending = self.real._pending_chat_ctx
        return None if pending is None else tuple(self.model_id(item) for item in pending.items)

    def sent(self, ids: list[str]) -> None:
        """The real session sent a turn naming `ids`: on connect its known state
        (the server conversation at the start), else one push's appends."""
        if asyncio.current_task() is self.real._main_atask:
            if self.connected_once:  # a reconnect: the new server session gets these
                self.server.rebuild([*self.server.conversation, *self._items(ids)])
                return
            if tuple(ids) != self.config.scenario.server:
                self.unexpected.append(f"a connect sent {ids}, not the server's items")
            self.connected_once = True
            return
        if not self.queued:
            self.unexpected.append(f"a turn {ids} was sent that no push queued")
            return
        origin = self.queued.popleft()
        if origin is _STAGED:  # queued in the drop window: in flight since then
            return
        self._send(ids, origin)

    def _send(self, ids: list[str], origin: object) -> None:
        request = self.requests.get(origin, ())
        for item in ids:
            position = request.index(item) if item in request else 0
            after = request[position - 1] if position else None
            self.server.send(WireOp(OpKind.CREATE, item, after, self.livekit[item], origin))

    def in_window(self) -> bool:
        """Whether the session has seen its receive loop fail and still treats the
        dropped connection as active (`Dropped.UNNOTICED` in the model)."""
        return (
            self.live is not None
            and self.live.dropped
            and self.real._active_session is not None
            and self.real._session_should_close.is_set()
        )

    def _stage(self, event: Any, origin: object) -> None:
        """An append queued in the drop window, in flight in the order it was queued;
        the next connection's send task sends it, which `sent` then passes over."""
        texts = [part.text for turn in getattr(event, "turns", None) or () for part in turn.parts]
        self._send([text for text in texts if text], origin)
        self.queued.append(_STAGED)

    def _named(self, wire_id: str) -> str:
        for name, item in self.livekit.items():
            if item.id == wire_id:
                return name
        raise RuntimeError(f"the session queued {wire_id!r}, which no scenario item is")

    def _items(self, ids: list[str]) -> list[tuple[str, object]]:
        return [(item, self.livekit[item]) for item in ids]

    # -- the connection (`Reconnecting`) ---------------------------------------------

    def disconnect(self) -> None:
        """Every op and event in flight is lost, and the session's socket breaks; the
        second disconnect of a drop lets the session's connect task close it."""
        if self.live is None:
            raise RuntimeError("no session is connected")
        if self.live.dropped:
            if self.closing is None or self.closing.is_set():
                raise RuntimeError("the session is not closing a dropped connection")
            self.closing.set()
            return
        self.server.drop()
        self.live.drop()

    def connect(self) -> None:
        """The session's next connect attempt succeeds (it is waiting for it)."""
        if self.reopen is None or self.reopen.is_set():
            raise RuntimeError("the session is not waiting to connect")
        self.reopen.set()

    def observe(self) -> FrameworkView:
        view = super().observe()
        active = self.real._active_session is not None
        connected: bool | Dropped = active
        if active and self.live is not None and self.live.dropped:
            connected = Dropped.UNNOTICED
        # `FrameworkView.connected` is typed bool, older than the window's third value;
        # the abstraction copies it into `State.connected` (`bool | Dropped`) as it is
        changes: dict[str, Any] = {"connected": connected, "kept": self.kept()}
        return attrs.evolve(view, **changes)

    def _deliver(self) -> None:
        event = self.server.delivered[0]
        if event.kind is EventKind.ADDED and event.answers is None:
            # the model's item: a turn whose input transcription is its id, complete at once
            self.server.take()
            if self.live is None:
                raise RuntimeError("the model's item arrived with no session connected")
            self.live.say(
                types.LiveServerMessage(
                    server_content=types.LiveServerContent(
                        input_transcription=types.Transcription(text=event.item),
                        turn_complete=True,
                    )
                )
            )
            return
        # Gemini's server neither echoes an append nor answers one with an error
        self.server.take(acknowledge=event.kind is not EventKind.ADDED)

    def errors(self) -> list[str]:
        found = [*super().errors(), *self.unexpected]
        if self.real._session_lock.locked():
            found.append("the session lock is held with every task blocked")
        main = self.real._main_atask
        if main.done() and not main.cancelled() and main.exception() is not None:
            found.append(f"the connect task raised {main.exception()!r}")
        return found

    def close(self) -> None:
        super().close()
        self.real._main_atask.cancel()
        self.real._msg_ch.close()
        if self.live is not None:
            self.live.closed = True
            self.live.arrived.set()


#: `GeminiFramework.queued`'s mark for an append the drop window put in flight already.
_STAGED = object()


class _NoWait(APIConnectOptions):
    """Retries at once: the harness's only clock is the ack clock, and a reconnect
    happens when the harness says (`GeminiFramework.connect`)."""

    def __init__(self) -> None:
        super().__init__(max_retry=1_000_000, retry_interval=0)

    def _interval_for_retry(self, num_retries: int) -> float:
        return 0.0


#: The adapter factory the registry names `gemini`.
gemini_adapter_factory: AdapterFactory = compose(GeminiFramework)
