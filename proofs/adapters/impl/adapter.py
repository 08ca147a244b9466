"""The first adapter: ackguard's own implementation (`impl/`) over the shared stand-in.

Item ids of the scenario become chat items of the kind their site makes (a user
message for a user turn, a function call output for a tool push, a function call
for an item the model creates), unstamped: the step that makes an item in the
model stamps its creation time (`born` for a `before-call` move, else the site's
call or snapshot in `impl.AgentActivity`). The session and activity classes are parameters
so that tests can run deliberately wrong implementations (mutants) through the
same harness. `StandInTransport` is the wire bridge: impl's `Transport` over
the stand-in, with a receive loop that waits for each delivered event.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from impl.activity import AgentActivity
from impl.chat_context import (
    ChatContext,
    ChatItem,
    ChatMessage,
    FunctionCall,
    FunctionCallOutput,
    stamped,
)
from impl.policy import POLICIES, Policy, SessionKind
from impl.probe import Phase, PushRecord, TracedLock
from impl.session import RealtimeSession
from impl.three_way import ThreeWaySession
from impl.transport import (
    ClientOp,
    CreateOp,
    DeleteOp,
    ErrorEvent,
    ItemAdded,
    ItemDeleted,
    ServerEvent,
)
from model import Call, Config, EventKind, OpKind, Pc
from proofs.engines.conformance import (
    AdapterFactory,
    FrameworkView,
    LockView,
    OpView,
    SiteTasks,
    StandIn,
    TaskView,
    WireOp,
    compose,
)
from proofs.errors import UnsupportedConfig

SessionFactory = Callable[..., RealtimeSession | ThreeWaySession]
ActivityFactory = Callable[..., AgentActivity]


def make_item(item_id: str, site: str | None) -> ChatItem:
    """The chat item a scenario's id stands for, shaped by the site that adds it."""
    if site == "user-turn":
        return ChatMessage(item_id, "user", f"text of {item_id}")
    if site in ("tool-outputs", "interrupted-tool-outputs"):
        return FunctionCallOutput(item_id, call_id=f"call_{item_id}", output=f"result {item_id}")
    if site == "model":
        return FunctionCall(item_id, call_id=f"call_{item_id}", name="lookup")
    if site in ("spoken-message", "replacement"):
        return ChatMessage(item_id, "assistant", f"text of {item_id}")
    return ChatMessage(item_id, "user" if item_id.startswith("msg") else "assistant", item_id)


class StandInTransport:
    """impl's `Transport` over the shared stand-in (the client end of its socket)."""

    def __init__(self, server: StandIn) -> None:
        self.server = server
        server.on_deliver = self._wake
        #: Every op ever sent, by event id (a three-way session names its outstanding ops so).
        self.sent: dict[str, WireOp] = {}
        self._receiver: asyncio.Future[None] | None = None

    def send(self, op: ClientOp) -> None:
        origin = asyncio.current_task()
        if isinstance(op, CreateOp):
            wire = WireOp(OpKind.CREATE, op.item.id, op.previous_id, op.item, origin, op)
        else:
            wire = WireOp(OpKind.DELETE, op.item_id, origin=origin, message=op)
        self.sent[op.event_id] = wire
        self.server.send(wire)

    async def recv(self) -> ServerEvent:
        while not self.server.delivered:
            receiver: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._receiver = receiver
            try:
                await receiver
            finally:
                self._receiver = None
        event = self.server.take()
        if event.kind is EventKind.ADDED:
            assert isinstance(event.payload, ChatItem)
            return ItemAdded(event.payload, event.after)
        if event.kind is EventKind.DELETED:
            return ItemDeleted(event.item)
        assert event.answers is not None
        answered = event.answers.message
        assert isinstance(answered, CreateOp | DeleteOp)
        return ErrorEvent(answered.event_id, event.reason)

    def _wake(self) -> None:
        if self._receiver is not None and not self._receiver.done():
            self._receiver.set_result(None)


class SiteFramework(SiteTasks):
    """The agent side of every adapter over impl's activity: the scenario's items,
    the variant's policy, the site drivers and the push tasks' views. A subclass
    builds the provider session under it and `self.activity` over that."""

    activity: AgentActivity

    def __init__(self, config: Config, *, policy: Policy | None = None) -> None:
        super().__init__()
        self.config = config
        if policy is None:
            if config.variant.name not in POLICIES:
                raise UnsupportedConfig(f"impl has no policy named {config.variant.name!r}")
            policy = POLICIES[config.variant.name]
        self.policy = policy
        scenario = config.scenario
        unknown = sorted({call.site for call in scenario.calls} - set(SITE_DRIVERS))
        if unknown:
            raise UnsupportedConfig(
                f"impl has no site {unknown[0]!r}; it drives {', '.join(SITE_DRIVERS)}"
            )
        self.items: dict[str, ChatItem] = {}
        for item_id in scenario.items():
            self.items[item_id] = make_item(item_id, None)
        for call in scenario.calls:
            for item_id in call.adds:
                self.items[item_id] = make_item(item_id, call.site)
        for item_id in scenario.server_pool:
            self.items[item_id] = make_item(item_id, "model")
        self.copies: dict[int, ChatContext] = {}
        self.learned: set[str] = set()

    # -- the application and the sites ------------------------------------------------

    def copy(self, task: int) -> None:
        self.copies[task] = self.activity.chat_ctx.copy()

    def born(self, task: int) -> None:
        """The model's `before-call`: call `task`'s items are made now (its tools
        return, its playout starts), so they carry this moment's creation time;
        the call keeps it."""
        for item_id in self.config.call(task).adds:
            self.items[item_id] = stamped(self.items[item_id])

    def call(self, task: int) -> None:
        self.start(task, self._site_call(task))

    async def _site_call(self, task: int) -> None:
        call = self.config.call(task)
        adds = tuple(self.items[item] for item in call.adds)
        await SITE_DRIVERS[call.site](self, task, call, adds)

    async def _replacement(self, task: int, call: Call, adds: tuple[ChatItem, ...]) -> None:
        # the application: its copy (taken now unless it took it earlier), edited
        ctx = self.copies.pop(task, None)
        if ctx is None:
            ctx = self.activity.chat_ctx.copy()
        for item_id in call.drops:
            ctx.remove(item_id)
        for item in adds:
            # made by the application at its call, appended to its copy
            ctx.append(stamped(item))
        await self.activity.update_chat_ctx(ctx)

    async def _user_turn(self, task: int, call: Call, adds: tuple[ChatItem, ...]) -> None:
        await self.activity.generate_reply(_one_message(call, adds))

    async def _spoken_message(self, task: int, call: Call, adds: tuple[ChatItem, ...]) -> None:
        await self.activity.commit_spoken(_one_message(call, adds))

    async def _tool_outputs(self, task: int, call: Call, adds: tuple[ChatItem, ...]) -> None:
        await self.activity.push_tool_outputs(_outputs(adds))

    async def _interrupted_tool_outputs(
        self, task: int, call: Call, adds: tuple[ChatItem, ...]
    ) -> None:
        await self.activity.push_interrupted_tool_outputs(_outputs(adds))

    async def _cleanup(self, task: int, call: Call, adds: tuple[ChatItem, ...]) -> None:
        if adds:
            raise UnsupportedConfig(f"impl's cleanup adds nothing, not {call.adds}")
        await self.activity.cleanup_interrupted(call.drops)

    def learn(self, item: str) -> None:
        self.activity.learn(self.items[item])
        self.learned.add(item)

    def server_item(self, item: str) -> tuple[str, object]:
        return item, self.items[item]

    def _index(self, origin: object) -> int:
        found = self.who(origin)
        assert found is not None
        return found

    def _lock(self, lock: TracedLock) -> LockView:
        holder = None if lock.holder is None else self._index(lock.holder)
        return LockView(holder, tuple(self._index(task) for task in lock.waiting))

    def _task(self, index: int) -> TaskView:
        record = self._record(index)
        if record is None:
            copy = self.copies.get(index)
            if copy is None:
                return TaskView(Pc.IDLE)
            return TaskView(Pc.COPIED, copy=copy.copied_from)
        if record.phase is Phase.CANCELLED:
            raise RuntimeError(f"T{index} was cancelled: the model never cancels a push")
        request = record.request
        return TaskView(
            phase=Pc(record.phase.value),
            copy=record.copy,
            request=None if request is None else request.ids(),
            request_is_live=request is not None and request is self.activity.chat_ctx,
            read=record.read,
            bound_at_read=record.bound_at_read,
            base=record.base,
            pending=frozenset((OpKind(kind), item) for kind, item in record.pending()),
        )

    def _record(self, index: int) -> PushRecord | None:
        task = self.tasks.get(index)
        if task is None:
            return None
        for record in self.activity.pushes:
            if record.task is task:
                return record
        return None


class ImplFramework(SiteFramework):
    """Drives `impl.AgentActivity` and a provider session over the shared stand-in."""

    def __init__(
        self,
        config: Config,
        *,
        session_factory: SessionFactory | None = None,
        activity_factory: ActivityFactory | None = None,
        policy: Policy | None = None,
    ) -> None:
        if config.shape.name not in IMPLEMENTED_SHAPES:
            raise UnsupportedConfig(
                f"impl implements the {' and '.join(IMPLEMENTED_SHAPES)} session shapes, "
                f"not {config.shape.name}"
            )
        if config.reconnects():
            raise UnsupportedConfig("impl's sessions have no reconnect; drop the reconnects option")
        super().__init__(config, policy=policy)
        scenario = config.scenario
        self.server = StandIn((i, self.items[i]) for i in scenario.server)
        self.transport = StandInTransport(self.server)
        if session_factory is None:
            session_factory = (
                ThreeWaySession if self.policy.session is SessionKind.THREE_WAY else RealtimeSession
            )
        self.session = session_factory(
            self.transport,
            clock=self.server.clock,
            initial=[self.items[i] for i in scenario.server],
        )
        self.session.start()
        make_activity = activity_factory if activity_factory is not None else AgentActivity
        self.activity = make_activity(
            self.session,
            policy=self.policy,
            chat_ctx=ChatContext(self.items[i] for i in scenario.initial_local),
        )

    # -- reading ----------------------------------------------------------------------

    def observe(self) -> FrameworkView:
        session = self.session
        outstanding: tuple[OpView, ...] = ()
        gone: frozenset[str] = frozenset()
        if isinstance(session, ThreeWaySession):
            outstanding = tuple(
                self._op(self.transport.sent[op.event_id]) for op in session.outstanding()
            )
            gone = session.gone()
        provider = session.lock if isinstance(session, RealtimeSession) else None
        return FrameworkView(
            mirror=session.mirror_ids(),
            local=self.activity.chat_ctx.ids(),
            activity_lock=self._lock(self.activity.lock),
            provider_lock=self._lock(provider) if provider is not None else LockView(),
            tasks=tuple(self._task(index) for index in range(len(self.config.scenario.calls))),
            learned=frozenset(self.learned),
            outstanding=outstanding,
            gone=gone,
        )

    def close(self) -> None:
        super().close()
        recv = getattr(self.session, "_recv_task", None)
        if isinstance(recv, asyncio.Task) and not recv.done():
            recv.cancel()

    def _op(self, sent: WireOp) -> OpView:
        return OpView(sent.kind, sent.item, sent.after, self._index(sent.origin))

    @classmethod
    def factory(
        cls,
        *,
        session_factory: SessionFactory | None = None,
        activity_factory: ActivityFactory | None = None,
    ) -> AdapterFactory:
        """An adapter factory running other session or activity classes (the mutants)."""
        return compose(
            lambda config: cls(
                config, session_factory=session_factory, activity_factory=activity_factory
            )
        )


#: The name the tests and docs know it by.
ImplAdapter = ImplFramework

#: The session shapes (`model.SHAPES`) impl implements: `RealtimeSession` is the
#: openai shape, `ThreeWaySession` the three-way one.
IMPLEMENTED_SHAPES: tuple[str, ...] = ("openai", "three-way")


#: How the adapter calls each site of the catalog in `impl.AgentActivity`; a
#: scenario that calls another is refused when the adapter is built.
SITE_DRIVERS: dict[
    str, Callable[[SiteFramework, int, Call, tuple[ChatItem, ...]], Coroutine[Any, Any, None]]
] = {
    "user-turn": SiteFramework._user_turn,
    "tool-outputs": SiteFramework._tool_outputs,
    "interrupted-tool-outputs": SiteFramework._interrupted_tool_outputs,
    "replacement": SiteFramework._replacement,
    "cleanup": SiteFramework._cleanup,
    "spoken-message": SiteFramework._spoken_message,
}


def _one_message(call: Call, adds: tuple[ChatItem, ...]) -> ChatMessage:
    if len(adds) != 1 or not isinstance(adds[0], ChatMessage):
        raise UnsupportedConfig(f"impl's {call.site} adds exactly one message, not {call.adds}")
    return adds[0]


def _outputs(items: tuple[ChatItem, ...]) -> tuple[FunctionCallOutput, ...]:
    outputs = tuple(item for item in items if isinstance(item, FunctionCallOutput))
    if len(outputs) != len(items):
        raise UnsupportedConfig("a tool-output site adds function call outputs only")
    return outputs


#: The default factory: the implementation as shipped, under the variant's policy.
impl_adapter: AdapterFactory = compose(ImplFramework)
