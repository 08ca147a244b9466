"""The first adapter: ackguard's own implementation (`impl/`) over the fake server.

Item ids of the scenario become chat items of the kind their site makes (a user
message for a user turn, a function call output for a tool push, a function call
for an item the model creates). The session and activity classes are parameters
so that tests can run deliberately wrong implementations (mutants) through the
same harness.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from impl.activity import AgentActivity
from impl.chat_context import ChatContext, ChatItem, ChatMessage, FunctionCall, FunctionCallOutput
from impl.fake_server import FakeServer, SentEvent, SentOp
from impl.policy import POLICIES, Policy, SessionKind
from impl.probe import Phase, PushRecord, TracedLock
from impl.session import RealtimeSession
from impl.three_way import ThreeWaySession
from impl.transport import CreateOp, DeleteOp, ErrorEvent, ItemAdded, ItemDeleted
from model import Config, EventKind, OpKind, Pc
from proofs.engines.conformance.adapter import (
    Adapter,
    AdapterFactory,
    EventView,
    LockView,
    Observation,
    OpView,
    TaskView,
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


class ImplAdapter:
    """Drives `impl.AgentActivity` and a provider session over `impl.FakeServer`."""

    def __init__(
        self,
        config: Config,
        *,
        session_factory: SessionFactory | None = None,
        activity_factory: ActivityFactory | None = None,
        policy: Policy | None = None,
    ) -> None:
        self.config = config
        if policy is None:
            if config.variant.name not in POLICIES:
                raise UnsupportedConfig(f"impl has no policy named {config.variant.name!r}")
            policy = POLICIES[config.variant.name]
        self.policy = policy
        scenario = config.scenario
        self.items: dict[str, ChatItem] = {}
        for item_id in scenario.items():
            self.items[item_id] = make_item(item_id, None)
        for call in scenario.calls:
            for item_id in call.adds:
                self.items[item_id] = make_item(item_id, call.site)
        for item_id in scenario.server_pool:
            self.items[item_id] = make_item(item_id, "model")
        self.server = FakeServer(self.items[i] for i in scenario.server)
        if session_factory is None:
            session_factory = (
                ThreeWaySession if policy.session is SessionKind.THREE_WAY else RealtimeSession
            )
        self.session = session_factory(
            self.server.transport,
            clock=self.server.clock,
            initial=[self.items[i] for i in scenario.server],
        )
        self.session.start()
        make_activity = activity_factory if activity_factory is not None else AgentActivity
        self.activity = make_activity(
            self.session,
            policy=policy,
            chat_ctx=ChatContext(self.items[i] for i in scenario.initial_local),
        )
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self._index: dict[object, int] = {}
        self.copies: dict[int, ChatContext] = {}
        self.learned: set[str] = set()

    @classmethod
    def factory(
        cls,
        *,
        session_factory: SessionFactory | None = None,
        activity_factory: ActivityFactory | None = None,
    ) -> AdapterFactory:
        def build(config: Config) -> Adapter:
            return cls(config, session_factory=session_factory, activity_factory=activity_factory)

        return build

    # -- stimuli ----------------------------------------------------------------------

    def copy(self, task: int) -> None:
        self.copies[task] = self.activity.chat_ctx.copy()

    def call(self, task: int) -> None:
        started = asyncio.get_running_loop().create_task(self._site_call(task), name=f"T{task}")
        self.tasks[task] = started
        self._index[started] = task

    async def _site_call(self, task: int) -> None:
        call = self.config.call(task)
        adds = tuple(self.items[item] for item in call.adds)
        activity = self.activity
        site = call.site
        if site == "replacement":
            # the application: its copy (taken now unless it took it earlier), edited
            ctx = self.copies.pop(task, None)
            if ctx is None:
                ctx = activity.chat_ctx.copy()
            for item_id in call.drops:
                ctx.remove(item_id)
            for item in adds:
                ctx.upsert(item)
            await activity.update_chat_ctx(ctx)
        elif site == "user-turn" and len(adds) == 1 and isinstance(adds[0], ChatMessage):
            await activity.generate_reply(adds[0])
        elif site == "spoken-message" and len(adds) == 1 and isinstance(adds[0], ChatMessage):
            await activity.commit_spoken(adds[0])
        elif site == "tool-outputs":
            await activity.push_tool_outputs(_outputs(adds))
        elif site == "interrupted-tool-outputs":
            await activity.push_interrupted_tool_outputs(_outputs(adds))
        elif site == "cleanup" and not adds:
            await activity.cleanup_interrupted(call.drops)
        else:
            raise UnsupportedConfig(f"impl has no site {site!r} taking {call}")

    def server_apply(self) -> None:
        self.server.deliver_to_server()

    def server_reject(self) -> None:
        self.server.reject_next()

    def client_apply(self) -> None:
        self.server.deliver_to_client()

    def model_creates(self, item: str) -> None:
        self.server.model_creates(self.items[item])

    def learn(self, item: str) -> None:
        self.activity.learn(self.items[item])
        self.learned.add(item)

    def timeout(self, task: int) -> None:
        self.server.clock.fire(self.tasks[task])

    # -- reading ----------------------------------------------------------------------

    def observe(self) -> Observation:
        server = self.server
        session = self.session
        outstanding: tuple[OpView, ...] = ()
        gone: frozenset[str] = frozenset()
        if isinstance(session, ThreeWaySession):
            outstanding = tuple(self._op(server.sent[op.event_id]) for op in session.outstanding())
            gone = session.gone()
        provider = session.lock if isinstance(session, RealtimeSession) else None
        return Observation(
            server=server.server_ids(),
            mirror=session.mirror_ids(),
            local=self.activity.chat_ctx.ids(),
            to_server=tuple(self._op(sent) for sent in server.to_server),
            to_client=tuple(self._event(sent) for sent in server.events_in_flight()),
            activity_lock=self._lock(self.activity.lock),
            provider_lock=self._lock(provider) if provider is not None else LockView(),
            tasks=tuple(self._task(index) for index in range(len(self.config.scenario.calls))),
            created=server.created,
            learned=frozenset(self.learned),
            outstanding=outstanding,
            gone=gone,
            acked=frozenset(server.acked),
            reached=frozenset(server.reached),
            removed=frozenset(server.removed),
            deletes_sent=frozenset(
                (self._who(origin), item, acked) for origin, item, acked in server.deletes_sent
            ),
            refused=frozenset(server.refused),
            recreated=frozenset((self._who(origin), item) for origin, item in server.recreated),
        )

    def errors(self) -> list[str]:
        found = []
        for index, task in sorted(self.tasks.items()):
            if task.done() and not task.cancelled() and task.exception() is not None:
                found.append(f"T{index}: {task.exception()!r}")
        return found

    def close(self) -> None:
        for task in self.tasks.values():
            if not task.done():
                task.cancel()
        recv = getattr(self.session, "_recv_task", None)
        if isinstance(recv, asyncio.Task) and not recv.done():
            recv.cancel()

    def _who(self, origin: object) -> int:
        try:
            return self._index[origin]
        except (KeyError, TypeError):
            raise RuntimeError(f"an op was sent outside any site call ({origin!r})") from None

    def _op(self, sent: SentOp) -> OpView:
        op = sent.op
        if isinstance(op, CreateOp):
            return OpView(OpKind.CREATE, op.item.id, op.previous_id, self._who(sent.origin))
        return OpView(OpKind.DELETE, op.item_id, None, self._who(sent.origin))

    def _event(self, sent: SentEvent) -> EventView:
        event = sent.event
        task = None if sent.answers is None else self._who(sent.answers.origin)
        if isinstance(event, ItemAdded):
            return EventView(EventKind.ADDED, event.item.id, event.previous_id, task=task)
        if isinstance(event, ItemDeleted):
            return EventView(EventKind.DELETED, event.item_id, task=task)
        assert isinstance(event, ErrorEvent) and sent.answers is not None
        op = sent.answers.op
        if isinstance(op, DeleteOp):
            return EventView(EventKind.REJECTED, op.item_id, op=OpKind.DELETE, task=task)
        return EventView(EventKind.REJECTED, op.item.id, op=OpKind.CREATE, task=task)

    def _lock(self, lock: TracedLock) -> LockView:
        holder = None if lock.holder is None else self._who(lock.holder)
        return LockView(holder, tuple(self._who(task) for task in lock.waiting))

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


def _outputs(items: tuple[ChatItem, ...]) -> tuple[FunctionCallOutput, ...]:
    outputs = tuple(item for item in items if isinstance(item, FunctionCallOutput))
    if len(outputs) != len(items):
        raise UnsupportedConfig("a tool-output site adds function call outputs only")
    return outputs


def impl_adapter(config: Config) -> Adapter:
    """The default factory: the implementation as shipped, under the variant's policy."""
    return ImplAdapter(config)
