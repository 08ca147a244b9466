"""The conformance adapter for the callback-session example.

ackguard's harness drives this adapter with the model's stimuli and compares
what it reports with the model after every step. The environment (the server,
both FIFOs, the model's own items, ack timeouts) is ackguard's shared stand-in
server; `fake_server.py` is the small bridge that speaks the example's wire to
it. What is left to write for your own code is three jobs, each marked below:

1. **Drive**: start each site call as its own asyncio task (`call`), take the
   application's copy (`copy`), let the local context learn a server item
   (`learn`).
2. **Watch**: record what the model tracks and your code does not keep:
   which object a push diffed and whether it was the live history then, each
   push's snapshot (`WatchedSession`, a subclass, so the production class
   carries no probes).
3. **Translate**: report your side in the model's vocabulary
   (`FrameworkView`): item ids of the scenario, task numbers, phases.

The phases are read off the code's own state instead of being recorded: a task
queued at the agent's gate waits for the activity lock, one queued at the
session's gate waits for the provider lock, one with a sync under way waits
for acks. That works only when every task is blocked, which is exactly when
the harness looks.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

from examples.callback_session.agent import VoiceAgent
from examples.callback_session.fake_server import AcmeWire
from examples.callback_session.session import (
    AckKey,
    AckTimeout,
    CallbackSession,
    Conversation,
    Gate,
    Item,
    Sync,
)
from model import Config, OpKind, Pc
from proofs.engines.conformance import (
    Adapter,
    AdapterFactory,
    FrameworkView,
    LockView,
    SiteTasks,
    StandIn,
    TaskView,
    compose,
)

#: Who sent an op: the asyncio task that was running when the session sent it.
Origin = asyncio.Task[Any] | None

#: The catalog sites this agent has; a scenario that calls another cannot run.
SITES = frozenset(
    {"user-turn", "tool-outputs", "interrupted-tool-outputs", "replacement", "cleanup"}
)

_ROLES = {
    "user-turn": "user",
    "tool-outputs": "tool",
    "interrupted-tool-outputs": "tool",
    "replacement": "assistant",
}


class UnsupportedSite(ValueError):
    """The scenario calls a site this agent does not have."""


class WatchedSession(CallbackSession):
    """The production session, recording per task what the harness needs to see."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: The live history object of the agent (set by the adapter).
        self.live: Callable[[], Conversation] = Conversation
        self.snapshots: dict[Origin, tuple[Conversation, tuple[str, ...]]] = {}
        self.reads: dict[Origin, tuple[tuple[str, ...], bool]] = {}
        self.syncs: dict[Origin, Sync] = {}
        self.failed: set[Origin] = set()

    @property
    def conversation(self) -> Conversation:
        taken = super().conversation
        self.snapshots[asyncio.current_task()] = (taken, taken.keys())
        return taken

    def _start(self, context: Conversation) -> Sync:
        me = asyncio.current_task()
        self.reads[me] = (context.keys(), context is self.live())
        sync = super()._start(context)
        self.syncs[me] = sync
        return sync

    async def sync(self, context: Conversation) -> None:
        try:
            await super().sync(context)
        except AckTimeout:
            self.failed.add(asyncio.current_task())
            raise


#: Builds the agent under test; tests pass a deliberately broken subclass.
AgentFactory = Callable[[CallbackSession, Conversation], VoiceAgent]


class AcmeAdapter(SiteTasks):
    """The example agent's side of one run over the stand-in, for one model config."""

    def __init__(
        self,
        config: Config,
        *,
        agent_factory: AgentFactory = VoiceAgent,
        session_class: type[WatchedSession] = WatchedSession,
    ) -> None:
        super().__init__()
        self.config = config
        scenario = config.scenario
        unsupported = sorted({call.site for call in scenario.calls} - SITES)
        if unsupported:
            raise UnsupportedSite(
                f"scenario {scenario.name!r} calls {', '.join(unsupported)}, which the example "
                f"agent does not have; leave it out with "
                f"conformance_test_case(..., sites={sorted(SITES)!r})"
            )
        # -- the scenario's ids become items; server-made ones get the server's keys
        self.items: dict[str, Item] = {key: Item(key, "user", key) for key in scenario.items()}
        for call in scenario.calls:
            for key in call.adds:
                self.items[key] = Item(key, _ROLES.get(call.site, "assistant"), f"text of {key}")
        #: Model id of each key the server assigned.
        self.names: dict[str, str] = {}
        self.keys: dict[str, str] = {}
        self._server_keys = itertools.count(1)
        self.server = StandIn((key, self.items[key]) for key in scenario.server)
        self.session = session_class(
            AcmeWire(self.server),
            timer=self.server.clock,
            history=[self.items[key] for key in scenario.server],
        )
        self.agent = agent_factory(
            self.session, Conversation(self.items[key] for key in scenario.initial_local)
        )
        self.session.live = lambda: self.agent.history
        # -- per call: the application's copy, the object it pushes, its base
        self.copies: dict[int, tuple[Conversation, tuple[str, ...]]] = {}
        self.requests: dict[int, Conversation] = {}
        self.bases: dict[int, frozenset[str]] = {}
        self.learned: set[str] = set()

    # -- 1. drive ----------------------------------------------------------------------

    def copy(self, task: int) -> None:
        copied = self.agent.history.copy()
        self.copies[task] = (copied, copied.keys())

    def call(self, task: int) -> None:
        self.start(task, self._site(task))

    async def _site(self, task: int) -> None:
        """What the application and the framework do for one call of a site."""
        call = self.config.call(task)
        adds = [self.items[key] for key in call.adds]
        agent = self.agent
        if call.site == "user-turn":
            (message,) = adds
            await agent.on_user_text(message)
        elif call.site in ("tool-outputs", "interrupted-tool-outputs"):
            await agent.on_tool_results(adds)
        elif call.site == "replacement":
            if task not in self.copies:
                self.copy(task)  # the application copies as it calls
            edited, seen = self.copies[task]
            for key in call.drops:
                edited.discard(key)
            for item in adds:
                edited.upsert(item)
            self.requests[task] = edited
            self.bases[task] = frozenset(seen) | frozenset(call.drops)
            await agent.replace_history(edited)
        elif call.site == "cleanup":
            self.requests[task] = agent.history
            self.bases[task] = frozenset(agent.history.keys()) | frozenset(call.drops)
            await agent.drop_unplayed(call.drops)

    def server_item(self, item: str) -> tuple[str, object]:
        """The model's item gets a key the server assigns (`srv-1`, ...)."""
        key = f"srv-{next(self._server_keys)}"
        self.names[key] = item
        self.keys[item] = key
        return key, Item(key, "assistant", f"function call {item}")

    def learn(self, item: str) -> None:
        key = self.keys[item]
        self.agent.learn(Item(key, "assistant", f"function call {item}"))
        self.learned.add(item)

    # -- 2 and 3. watch and translate ---------------------------------------------------

    def observe(self) -> FrameworkView:
        return FrameworkView(
            mirror=self._ids(self.session.mirror_keys()),
            local=self._ids(self.agent.history.keys()),
            activity_lock=self._lock(self.agent.sync_gate),
            provider_lock=self._lock(self.session.gate),
            tasks=tuple(self._task(index) for index in range(len(self.config.scenario.calls))),
            learned=frozenset(self.learned),
        )

    def name(self, wire_id: str) -> str:
        return self.names.get(wire_id, wire_id)

    def _ids(self, keys: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(self.name(key) for key in keys)

    def _who(self, origin: Origin) -> int:
        found = self.who(origin)
        assert found is not None
        return found

    def _ack(self, ack: AckKey) -> tuple[OpKind, str]:
        return (OpKind(ack[0]), self.name(ack[1]))

    def _lock(self, gate: Gate) -> LockView:
        holder = None if gate.owner is None else self._who(gate.owner)
        return LockView(holder, tuple(self._who(task) for task in gate.waiting()))

    def _task(self, index: int) -> TaskView:
        task = self.tasks.get(index)
        copy = self.copies.get(index)
        seen = None if copy is None else self._ids(copy[1])
        if task is None:
            return TaskView(Pc.COPIED if copy is not None else Pc.IDLE, copy=seen)
        session = self.session
        request = self.requests.get(index)
        base = self.bases.get(index, frozenset())
        snapshot = session.snapshots.get(task)
        if snapshot is not None:
            request, snapped = snapshot
            base = frozenset(snapped)
        read = session.reads.get(task)
        sync = session.syncs.get(task)
        pending: frozenset[tuple[OpKind, str]] = frozenset()
        if task.done():
            phase = Pc.FAILED if task in session.failed else Pc.DONE
        elif task in self.agent.sync_gate.waiting():
            phase = Pc.WAIT_ACTIVITY
        elif task in session.gate.waiting():
            phase = Pc.WAIT_PROVIDER
        elif sync is not None and not sync.done.done():
            phase = Pc.WAIT_ACKS
            pending = frozenset(self._ack(ack) for ack in sync.pending)
        else:
            raise RuntimeError(
                f"T{index} is blocked where the model has no await: find the await it waits "
                "at and compare with the step boundaries in docs/model.md"
            )
        return TaskView(
            phase=phase,
            copy=seen,
            request=None if request is None else self._ids(request.keys()),
            request_is_live=request is not None and request is self.agent.history,
            read=None if read is None else self._ids(read[0]),
            bound_at_read=read is not None and read[1],
            base=frozenset(self._ids(tuple(base))),
            pending=pending,
        )


def acme_adapter(config: Config) -> Adapter:
    """The factory the harness calls for each run: the example as shipped."""
    return compose(AcmeAdapter)(config)


def acme_factory(
    agent_factory: AgentFactory = VoiceAgent,
    session_class: type[WatchedSession] = WatchedSession,
) -> AdapterFactory:
    """A factory running other agent or session classes (the tests' mutants)."""

    return compose(
        lambda config: AcmeAdapter(config, agent_factory=agent_factory, session_class=session_class)
    )
