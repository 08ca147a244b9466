"""The one stand-in: a realtime model whose session has OpenAI's push semantics.

livekit-agents runs for real around it. The session keeps its mirror in
livekit-agents' own `RemoteChatContext`, which changes only when an event comes
back from the server; `update_chat_ctx` holds the session's own asyncio.Lock
across the diff (livekit-agents' own `llm.utils.compute_chat_ctx_diff`), the
sends and the wait for every ack, and raises `llm.RealtimeError` when that wait
times out, as the OpenAI realtime session does. What the session does *not* do
is talk to anyone: ops go to ackguard's shared stand-in server
(`proofs.engines.conformance.StandIn`, seen through `StandInServer` in
livekit's types), which applies them, emits events and hands them to the
client only when the harness says so, and the ack timeout is its virtual
clock, which the harness fires.

Written for ackguard from the behaviour described in
`shared/reference/livekit-agents.md`; no livekit-agents code is copied here.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from livekit import rtc
from livekit.agents import NOT_GIVEN, NotGivenOr, llm
from livekit.agents.llm.remote_chat_context import RemoteChatContext
from livekit.agents.voice.generation import remove_instructions

from impl.probe import TracedLock
from model import EventKind as WireEventKind
from model import OpKind as WireKind
from model.state import RESPONSE
from proofs.engines.conformance import AckClock, StandIn, WireEvent, WireOp

log = logging.getLogger("ackguard.livekit.standin")

OpKind = Literal["create", "delete", "cancel"]
EventKind = Literal["added", "deleted", "error", "done"]
AckKey = tuple[OpKind, str]


@dataclass(frozen=True)
class CancelSender:
    """Who sent a cancel: the scenario call whose generation it interrupts (a
    cancel is sent before that call's push exists, so no push task names it)."""

    call: int


@dataclass
class SentOp:
    """One `conversation.item.create` or `.delete` the session sent."""

    kind: OpKind
    item_id: str
    event_id: str
    #: The asyncio task that sent it (the push's task).
    origin: asyncio.Task[Any] | CancelSender | None
    item: llm.ChatItem | None = None
    #: For a create: the item it goes after (None: the head).
    previous_id: str | None = None
    #: For a create: the ids of the whole request it came from, in order.
    request: tuple[str, ...] = ()


@dataclass
class SentEvent:
    """One server event on its way to the client."""

    kind: EventKind
    item_id: str
    #: The op it answers; None for an item the model created.
    answers: SentOp | None
    item: llm.ChatItem | None = None
    previous_id: str | None = None


class StandInServer:
    """The shared stand-in server (`proofs.engines.conformance.StandIn`) in livekit's types.

    The conversation, both FIFOs, the rules by which ops are applied or refused,
    the model's items at the tail and every record the invariant checks read
    are the shared stand-in's; this bridge keeps livekit's own records beside
    it: each op as the session sent it (`SentOp`) and each event as a
    `SentEvent` carrying a livekit chat item. The session applies an event the
    moment the harness delivers it (`next_event`).
    """

    def __init__(self, items: list[llm.ChatItem]) -> None:
        self.shared = StandIn(((item.id, item) for item in items), on_deliver=_at_once)

    # -- the shared stand-in's state, as livekit's records ----------------------------

    @property
    def conversation(self) -> list[llm.ChatItem]:
        return [_chat_item(payload) for _, payload in self.shared.conversation]

    @property
    def to_server(self) -> list[SentOp]:
        return [_sent(op) for op in self.shared.to_server]

    @property
    def to_client(self) -> list[SentEvent]:
        return [_event(event) for event in self.shared.to_client]

    def ids(self) -> tuple[str, ...]:
        return self.shared.ids()

    #: What the invariant checks read (acked, reached, removed, refused, recreated)
    #: is on `shared`; deletes are read here too, by the stand-in's own tests.
    @property
    def deletes_sent(self) -> list[tuple[object, str, bool]]:
        return self.shared.deletes_sent

    # -- the wire and the environment's moves -------------------------------------------

    def receive(self, op: SentOp) -> None:
        kind = WireKind.CREATE if op.kind == "create" else WireKind.DELETE
        self.shared.send(WireOp(kind, op.item_id, op.previous_id, op.item, op.origin, op))

    def cancel(self, op: SentOp) -> None:
        """A cancel of the response under way leaves the client, behind every op before it.

        The shared stand-in knows only item ops, so the bridge keeps the cancel in its
        FIFO itself, as `model.OpKind.CANCEL`, and answers it in `apply_next`."""
        self.shared.to_server.append(
            WireOp(WireKind.CANCEL, op.item_id, origin=op.origin, message=op)
        )

    def apply_next(self) -> None:
        """Apply the next op in flight, or answer it with an error as the real server
        would; a cancel ends the response and is answered by a done event."""
        head = self.shared.to_server[0] if self.shared.to_server else None
        if head is not None and head.kind is WireKind.CANCEL:
            self.shared.to_server.popleft()
            self.shared.to_client.append(WireEvent(WireEventKind.DONE, head.item, answers=head))
            return
        self.shared.apply_next()

    def reject_next(self) -> None:
        self.shared.reject_next()

    def model_creates(self, item: llm.ChatItem) -> None:
        """The model adds an item of its own at the tail (an assistant turn, a function call)."""
        self.shared.model_creates(item.id, item)

    def next_event(self) -> SentEvent:
        self.shared.deliver_next()
        return _event(self.shared.take())


def _at_once() -> None:
    """livekit's session takes each event when the harness delivers it (`deliver`)."""


def _chat_item(payload: object) -> llm.ChatItem:
    return cast(llm.ChatItem, payload)  # the bridge put only chat items in


def _sent(op: WireOp) -> SentOp:
    assert isinstance(op.message, SentOp)
    return op.message


_EVENT_KINDS: dict[WireEventKind, EventKind] = {
    WireEventKind.ADDED: "added",
    WireEventKind.DELETED: "deleted",
    WireEventKind.REJECTED: "error",
    WireEventKind.DONE: "done",
}


def _event(event: WireEvent) -> SentEvent:
    answers = None if event.answers is None else _sent(event.answers)
    item = None if event.payload is None else _chat_item(event.payload)
    return SentEvent(_EVENT_KINDS[event.kind], event.item, answers, item, event.after)


class Probe:
    """Hooks the harness sets to see where each push is; the session only calls them."""

    def on_mirror_read(self, mirror: llm.ChatContext) -> None:
        """A task copied the mirror (`session.chat_ctx`)."""

    def on_push(self, request: llm.ChatContext) -> None:
        """A task called `update_chat_ctx(request)`."""

    def on_diff(self, request: llm.ChatContext, pending: dict[AckKey, asyncio.Future[Any]]) -> None:
        """The push holds the provider lock and has diffed and sent; it waits for `pending`."""

    def on_return(self, failed: bool) -> None:
        """The push returns (or raises RealtimeError when `failed`)."""


class Stream:
    """An async iterable the harness feeds and closes (a generation's streams)."""

    def __init__(self) -> None:
        self._items: deque[Any] = deque()
        self._closed = False
        self._waiter: asyncio.Future[None] | None = None

    def push(self, item: Any) -> None:
        self._items.append(item)
        self._wake()

    def close(self) -> None:
        self._closed = True
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Any]:
        while True:
            while not self._items:
                if self._closed:
                    return
                self._waiter = asyncio.get_running_loop().create_future()
                await self._waiter
            yield self._items.popleft()


@dataclass
class Generation:
    """One response of the model: its messages and function calls, fed by the harness."""

    messages: Stream = field(default_factory=Stream)
    functions: Stream = field(default_factory=Stream)
    user_initiated: bool = True

    def event(self) -> llm.GenerationCreatedEvent:
        return llm.GenerationCreatedEvent(
            message_stream=self.messages,
            function_stream=self.functions,
            user_initiated=self.user_initiated,
        )

    def add_message(self, message_id: str, text: Stream) -> None:
        """A text-only message whose text the harness streams (or holds back)."""
        modalities: asyncio.Future[list[Literal["text", "audio"]]] = (
            asyncio.get_running_loop().create_future()
        )
        modalities.set_result(["text"])
        audio = Stream()
        audio.close()
        self.messages.push(
            llm.MessageGeneration(
                message_id=message_id, text_stream=text, audio_stream=audio, modalities=modalities
            )
        )

    def close(self) -> None:
        self.messages.close()
        self.functions.close()

    @property
    def ended(self) -> bool:
        """Whether the response has ended (both streams closed)."""
        return self.messages._closed and self.functions._closed


def capabilities() -> llm.RealtimeCapabilities:
    """OpenAI's realtime capabilities, with server-side turn detection off (no audio here)."""
    return llm.RealtimeCapabilities(
        message_truncation=True,
        turn_detection=False,
        user_transcription=False,
        auto_tool_reply_generation=False,
        audio_output=False,
        manual_function_calls=True,
        mutable_chat_context=True,
        mutable_instructions=True,
        mutable_tools=True,
        per_response_tool_choice=True,
    )


class StandInSession(llm.RealtimeSession):  # type: ignore[type-arg]
    """A realtime session with the OpenAI session's push semantics and no network."""

    def __init__(self, model: StandInModel) -> None:
        super().__init__(model)
        self.server = model.server
        self.clock = model.clock
        self.probe: Probe = Probe()
        self._mirror = RemoteChatContext()
        previous: str | None = None
        for item in self.server.conversation:
            self._mirror.insert(previous, item.model_copy())
            previous = item.id
        self.lock = TracedLock("provider")
        self._create_futs: dict[str, asyncio.Future[None]] = {}
        self._delete_futs: dict[str, asyncio.Future[None]] = {}
        self._event_futs: dict[str, asyncio.Future[None]] = {}
        self._event_ids = itertools.count(1)
        self._tools = llm.ToolContext.empty()
        #: Generations the harness scripted for the next `generate_reply` calls.
        self.replies: deque[Generation] = deque()
        #: Every generation handed out (scripted or the default empty one).
        self.generations: list[Generation] = []
        #: Ops the server rejected, as the OpenAI session logs them.
        self.rejected: list[SentOp] = []
        #: Where the interrupted generation ends on the server's done event
        #: (`InterruptionEnd.ON_DONE_EVENT`), the call the next cancel interrupts;
        #: None: `interrupt` sends nothing, and the harness ends the response itself.
        self.interrupting: int | None = None
        #: Told the call whose done event the session has applied (its response ended).
        self.on_done: Callable[[int], None] | None = None

    # -- the mirror ---------------------------------------------------------------

    @property
    def chat_ctx(self) -> llm.ChatContext:
        ctx = self._mirror.to_chat_ctx()
        self.probe.on_mirror_read(ctx)
        return ctx

    def mirror_items(self) -> list[llm.ChatItem]:
        """The mirror, for the harness (not a snapshot: the probe is not told)."""
        return list(self._mirror.to_chat_ctx().items)

    def mirror_ids(self) -> tuple[str, ...]:
        return tuple(item.id for item in self.mirror_items())

    @property
    def tools(self) -> llm.ToolContext:
        return self._tools

    # -- the push -----------------------------------------------------------------

    async def update_chat_ctx(self, chat_ctx: llm.ChatContext) -> None:
        """Diff against the mirror under the session lock, send, wait for every ack."""
        self.probe.on_push(chat_ctx)
        failed = False
        try:
            async with self.lock:
                request = chat_ctx.copy(exclude_handoff=True, exclude_config_update=True)
                remove_instructions(request)
                ops = self._diff(request)
                waits: dict[AckKey, asyncio.Future[Any]] = {}
                loop = asyncio.get_running_loop()
                for op in ops:
                    future: asyncio.Future[None] = loop.create_future()
                    (self._delete_futs if op.kind == "delete" else self._create_futs)[
                        op.item_id
                    ] = future
                    self._event_futs[op.event_id] = future
                    waits[(op.kind, op.item_id)] = future
                    self.server.receive(op)
                self.probe.on_diff(chat_ctx, waits)
                if not ops:
                    return
                try:
                    results = await self.clock.wait_for(
                        asyncio.gather(*waits.values(), return_exceptions=True), 5.0
                    )
                except TimeoutError:
                    failed = True
                    raise llm.RealtimeError("update_chat_ctx timed out.") from None
                finally:
                    for op in ops:
                        self._event_futs.pop(op.event_id, None)
                        futs = self._delete_futs if op.kind == "delete" else self._create_futs
                        futs.pop(op.item_id, None)
                rejected = [r for r in results if isinstance(r, BaseException)]
                if rejected:
                    log.warning("the server rejected part of a chat context update: %s", rejected)
        finally:
            self.probe.on_return(failed)

    def _diff(self, request: llm.ChatContext) -> list[SentOp]:
        """One op per change, in the OpenAI session's order: deletes, creates, updates."""
        remote = self._mirror.to_chat_ctx()
        remote_ids = {item.id for item in remote.items}
        # an empty message that exists remotely stands for an audio item never synced down
        request = llm.ChatContext(
            [
                item
                for item in request.items
                if item.type != "message" or item.content or item.id in remote_ids
            ]
        )
        diff = llm.utils.compute_chat_ctx_diff(remote, request)
        task = asyncio.current_task()
        ids = tuple(item.id for item in request.items)
        ops: list[SentOp] = []

        def delete(item_id: str) -> None:
            ops.append(SentOp("delete", item_id, self._event_id(), task))

        def create(previous_id: str | None, item_id: str) -> None:
            item = request.get_by_id(item_id)
            assert item is not None
            ops.append(
                SentOp(
                    "create",
                    item_id,
                    self._event_id(),
                    task,
                    item.model_copy(),
                    previous_id,
                    ids,
                )
            )

        for item_id in diff.to_remove:
            delete(item_id)
        for previous_id, item_id in diff.to_create:
            create(previous_id, item_id)
        for previous_id, item_id in diff.to_update:
            old = remote.get_by_id(item_id)
            if old is not None and old.type == "message" and not old.content:
                continue
            delete(item_id)
            create(previous_id, item_id)
        return ops

    def _event_id(self) -> str:
        return f"evt_{next(self._event_ids)}"

    # -- events from the server ----------------------------------------------------------

    def deliver(self) -> None:
        """The next server event reaches the client: apply it to the mirror, resolve its ack."""
        event = self.server.next_event()
        if event.kind == "added":
            assert event.item is not None
            previous = event.previous_id
            if previous is not None and self._mirror.get(previous) is None:
                previous = self._mirror.tail_id
            item = event.item.model_copy()
            try:
                self._mirror.insert(previous, item)
                self.emit("remote_item_added", llm.RemoteItemAddedEvent(previous, item))
            except ValueError as error:
                log.warning("could not insert %s: %s", event.item_id, error)
            self._resolve(self._create_futs.pop(event.item_id, None))
        elif event.kind == "deleted":
            try:
                self._mirror.delete(event.item_id)
            except ValueError as error:
                log.warning("could not delete %s: %s", event.item_id, error)
            self._resolve(self._delete_futs.pop(event.item_id, None))
        elif event.kind == "done":
            op = event.answers
            assert op is not None and isinstance(op.origin, CancelSender)
            if self.on_done is not None:
                self.on_done(op.origin.call)
        else:
            op = event.answers
            assert op is not None
            self.rejected.append(op)
            future = self._event_futs.pop(op.event_id, None)
            if future is not None and not future.done():
                future.set_exception(llm.RealtimeError(f"rejected {op.kind} {op.item_id}"))

    @staticmethod
    def _resolve(future: asyncio.Future[None] | None) -> None:
        if future is not None and not future.done():
            future.set_result(None)

    # -- responses -------------------------------------------------------------------------

    def generate_reply(
        self,
        *,
        instructions: NotGivenOr[str] = NOT_GIVEN,
        tool_choice: NotGivenOr[llm.ToolChoice] = NOT_GIVEN,
        tools: NotGivenOr[list[llm.Tool]] = NOT_GIVEN,
    ) -> asyncio.Future[llm.GenerationCreatedEvent]:
        """The next scripted generation, or an empty one (the model says nothing)."""
        if self.replies:
            generation = self.replies.popleft()
        else:
            generation = Generation()
            generation.close()
        self.generations.append(generation)
        future: asyncio.Future[llm.GenerationCreatedEvent] = (
            asyncio.get_running_loop().create_future()
        )
        future.set_result(generation.event())
        return future

    def start_generation(self, generation: Generation) -> None:
        """A response the server starts on its own (as after server-side turn detection)."""
        generation.user_initiated = False
        self.generations.append(generation)
        self.emit("generation_created", generation.event())

    # -- the rest of the session: nothing to do without a network -------------------------

    async def update_instructions(self, instructions: str) -> None:
        return None

    async def update_tools(self, tools: list[llm.Tool]) -> None:
        self._tools = llm.ToolContext(tools)

    def update_options(self, *, tool_choice: NotGivenOr[llm.ToolChoice | None] = NOT_GIVEN) -> None:
        return None

    def push_audio(self, frame: rtc.AudioFrame) -> None:
        return None

    def push_video(self, frame: rtc.VideoFrame) -> None:
        return None

    def commit_audio(self) -> None:
        return None

    def clear_audio(self) -> None:
        return None

    def interrupt(self) -> None:
        """Cancel the response under way, as the OpenAI session sends `response.cancel`.

        Only the first cancel of an interruption is sent: livekit interrupts the
        session twice (the activity's `interrupt`, then the generation task), and the
        server answers the second with nothing the session waits for."""
        call, self.interrupting = self.interrupting, None
        if call is not None:
            self.server.cancel(SentOp("cancel", RESPONSE, self._event_id(), CancelSender(call)))

    def truncate(
        self,
        *,
        message_id: str,
        modalities: list[Literal["text", "audio"]],
        audio_end_ms: int,
        audio_transcript: NotGivenOr[str] = NOT_GIVEN,
    ) -> None:
        return None

    async def aclose(self) -> None:
        return None


class StandInModel(llm.RealtimeModel):
    """The realtime model handed to `AgentSession(llm=...)`; its sessions share one server."""

    def __init__(self, server: StandInServer, clock: AckClock | None = None) -> None:
        super().__init__(capabilities=capabilities())
        self.server = server
        self.clock = clock if clock is not None else server.shared.clock
        self.sessions: list[StandInSession] = []
        self.on_session: Callable[[StandInSession], None] | None = None

    def session(self, *, turn_detection_disabled: bool = False) -> StandInSession:
        session = StandInSession(self)
        self.sessions.append(session)
        if self.on_session is not None:
            self.on_session(session)
        return session

    async def aclose(self) -> None:
        return None
