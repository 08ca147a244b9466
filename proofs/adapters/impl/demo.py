"""Randomized conversations with overlapping pushes over a real loopback socket,
judged by the two invariants: the engine of `ackguard demo` and of the soak.

An `Agent` is one realtime connection: the websocket transport, the provider
session the variant uses, the activity with its sites, and the bookkeeping the
invariants need. A *round* is a burst of site calls started at random offsets
within about one ack round trip, so that they overlap; after it the harness
waits until nothing is in flight (at rest) and checks:

- **lost**: items the local context keeps that were pushed (they reached the
  server, or the server refused their create because the item it was to follow
  had been deleted) and are not on it (invariant 2, clause a);
- **unintended deletes**: deletes sent for an item the session had seen
  acknowledged, by a push that did not mean to remove it (invariant 1; the
  transport records each delete with whether its item was acknowledged then);
- **resurrected**: items a delete removed that a later create put back
  (invariant 2, clause b).

An unintended delete whose push also re-creates the item is counted as well (it
is a delete of an acknowledged item) and, apart, as a **move**: the order-aware
mirror diff moves an item whose position differs between the request and the
mirror by deleting and re-creating it, so the item is gone from the server for a
round trip, and the invariant says so.

Everything random comes from one seed; the socket's timing does not, so two runs
with the same seed run the same plan but may interleave differently.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import statistics
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any

from attrs import define, field, frozen

from impl.activity import AgentActivity, PushSession
from impl.chat_context import ChatContext, ChatItem, ChatMessage, FunctionCall, FunctionCallOutput
from impl.policy import POLICIES, Policy, SessionKind
from impl.probe import Phase
from impl.session import RealtimeSession
from impl.three_way import ThreeWaySession
from impl.ws_server import Conversation, LoopbackServer, ServerSettings
from impl.ws_transport import WebSocketTransport, item_to_json
from model.environment import BASE, Environment

#: A model-side action of a round: the model adds an item of its own.
MODEL_ITEM = "model-item"

#: The sites a soak round draws from (the cleanup comes with its never-played item).
SOAK_SITES: tuple[str, ...] = (
    "tool-outputs",
    "interrupted-tool-outputs",
    "user-turn",
    "spoken-message",
    "replacement",
    "cleanup",
)


@frozen
class Action:
    """One thing that happens in a round, `at` seconds after it starts."""

    at: float
    #: A site name, or MODEL_ITEM.
    site: str
    #: The item the call adds (the model's item for MODEL_ITEM; the never-played
    #: item it drops for the cleanup; the note for a replacement).
    item: str
    #: Replacement: when the application copied the local context (<= at).
    copy_at: float | None = None
    #: Replacement: the application also drops one item of its copy, chosen then.
    drop: bool = False
    #: MODEL_ITEM: how long after its "added" event the local context learns it.
    learn_after: float = 0.0

    def describe(self) -> str:
        text = f"{self.at * 1000:6.2f} ms {self.site} {self.item}"
        if self.copy_at is not None:
            text += f" (copy at {self.copy_at * 1000:.2f} ms{', drops one' if self.drop else ''})"
        if self.site == MODEL_ITEM:
            text += f" (learned {self.learn_after * 1000:.2f} ms after its ack)"
        return text


@frozen
class Round:
    index: int
    actions: tuple[Action, ...]
    #: The assistant message of an interrupted generation, on the server and in the
    #: mirror but never in the local context; the round's cleanup drops it.
    never_played: str | None = None

    def describe(self) -> list[str]:
        lines = [f"round {self.index}"]
        if self.never_played:
            lines.append(f"  at rest before: the model said {self.never_played}, never played")
        lines += [f"  {action.describe()}" for action in self.actions]
        return lines


def _item(site: str, item_id: str) -> ChatItem:
    if site in ("tool-outputs", "interrupted-tool-outputs"):
        return FunctionCallOutput(item_id, f"call_{item_id}", '{"result": 42}')
    if site == MODEL_ITEM:
        return FunctionCall(item_id, f"call_{item_id}", "lookup", '{"q": "weather"}')
    role = "user" if site == "user-turn" else "assistant"
    return ChatMessage(item_id, role, f"text of {item_id}")  # type: ignore[arg-type]


_PREFIX = {
    "tool-outputs": "out",
    "interrupted-tool-outputs": "iout",
    "user-turn": "user",
    "spoken-message": "spoken",
    "replacement": "note",
    "cleanup": "asst",
    MODEL_ITEM: "call",
}


def plan_round(
    rng: random.Random,
    index: int,
    environment: Environment,
    window: float,
    *,
    sites: Sequence[str] = SOAK_SITES,
    calls: tuple[int, int] = (2, 5),
    overlapping_pair: bool = False,
) -> Round:
    """A random burst of site calls within `window` seconds.

    With `overlapping_pair` the round opens with the seed's overlapping push: a
    tool output, and a text user turn started while it waits for its ack. A
    cleanup runs first (the interruption it cleans up after starts the round);
    each replacement copies the local context at its call, or, with stale copies,
    at a random earlier moment of the round.
    """
    actions: list[Action] = []
    count = 0

    def new_id(site: str) -> str:
        nonlocal count
        count += 1
        return f"r{index}.{_PREFIX[site]}{count}"

    never_played: str | None = None
    if overlapping_pair:
        actions.append(Action(0.0, "tool-outputs", new_id("tool-outputs")))
        actions.append(Action(0.0, "user-turn", new_id("user-turn")))
    for _ in range(rng.randint(*calls)):
        site = rng.choice(list(sites))
        at = rng.uniform(0.0, window)
        if site == "cleanup":
            if never_played is not None:
                continue
            never_played = new_id("cleanup")
            actions.insert(0, Action(0.0, "cleanup", never_played))
        elif site == "replacement":
            copy_at = rng.uniform(0.0, at) if environment.stale_copies else at
            drop = rng.random() < 0.3
            actions.append(Action(at, site, new_id(site), copy_at=copy_at, drop=drop))
        else:
            actions.append(Action(at, site, new_id(site)))
    if environment.server_items:
        for _ in range(rng.randint(1, 2)):
            learn = rng.uniform(0.0, window)
            actions.append(
                Action(rng.uniform(0.0, window), MODEL_ITEM, new_id(MODEL_ITEM), learn_after=learn)
            )
    first = [a for a in actions if a.at == 0.0]
    rest = sorted((a for a in actions if a.at != 0.0), key=lambda a: a.at)
    return Round(index, (*first, *rest), never_played)


# -- one connection ---------------------------------------------------------------------


class Pipelined:
    """A three-way session whose pushes return once their ops are sent: the site
    may then ask for a reply at once, relying on the socket's order."""

    def __init__(self, session: ThreeWaySession) -> None:
        self._session = session

    @property
    def chat_ctx(self) -> ChatContext:
        return self._session.chat_ctx

    async def update_chat_ctx(
        self, chat_ctx: ChatContext, *, base: frozenset[str] | None = None
    ) -> None:
        await self._session.update_chat_ctx(chat_ctx, base=base, wait=False)


@frozen
class Finding:
    """One invariant breach, with the round and the socket's recent interleaving."""

    kind: str  # "lost", "unintended-delete", "resurrected"
    item: str
    site: str | None
    round: tuple[str, ...]
    trace: tuple[str, ...]

    def describe(self) -> list[str]:
        by = f" (by {self.site})" if self.site else ""
        return [f"{self.kind}: {self.item}{by}", *self.round, *(f"  {t}" for t in self.trace)]


@define
class Agent:
    """One connection: transport, session, activity, and what the invariants need."""

    policy: Policy
    server: LoopbackServer
    transport: WebSocketTransport
    session: RealtimeSession | ThreeWaySession
    activity: AgentActivity
    conversation: Conversation
    #: The sender task of each push, with its site and what it meant to remove.
    calls: dict[object, tuple[str, frozenset[str]]] = field(factory=dict)
    #: Seconds each push took, from the site call to its return.
    latencies: list[float] = field(factory=list)
    lost: set[str] = field(factory=set)
    resurrected: set[str] = field(factory=set)
    unintended: list[tuple[str, str]] = field(factory=list)
    #: Of the unintended deletes, those whose push re-created the item (a move).
    moves: int = 0
    findings: list[Finding] = field(factory=list)
    pushes: int = 0
    #: When set, each push draws its ack timeout from these (seconds): the one in
    #: place when the push starts waiting applies, so some pushes give up and
    #: others do not.
    ack_timeouts: tuple[float, ...] = ()
    rng: random.Random = field(factory=random.Random)
    _deletes_checked: int = 0

    @classmethod
    async def open(
        cls,
        server: LoopbackServer,
        variant: str,
        *,
        ack_timeout: float = 5.0,
        trace: int = 0,
        pipelined: bool = False,
    ) -> Agent:
        """Connect; with `pipelined` (three-way only) every push returns as soon as
        its ops are sent, relying on the socket's order, instead of awaiting acks."""
        policy = POLICIES[variant]
        if pipelined and policy.session is not SessionKind.THREE_WAY:
            raise ValueError("only a three-way session can push without awaiting its acks")
        transport = await WebSocketTransport.connect(server.url, trace=trace)
        session: RealtimeSession | ThreeWaySession
        if policy.session is SessionKind.THREE_WAY:
            session = ThreeWaySession(transport, ack_timeout=ack_timeout)
        else:
            session = RealtimeSession(transport, ack_timeout=ack_timeout)
        session.start()
        pushes: PushSession = session
        if pipelined:
            assert isinstance(session, ThreeWaySession)
            pushes = Pipelined(session)
        activity = AgentActivity(pushes, policy=policy)
        conversation = server.conversations[transport.session_id]
        return cls(policy, server, transport, session, activity, conversation)

    async def aclose(self) -> None:
        await self.session.aclose()
        await self.transport.aclose()

    # -- running a round ------------------------------------------------------------

    async def play(self, plan: Round, *, window: float) -> None:
        """Set the round up at rest, run its actions concurrently, settle, check."""
        self.transport.trace.clear()
        if plan.never_played is not None:
            await self.model_says(ChatMessage(plan.never_played, "assistant", "never played"))
        start = asyncio.get_running_loop().time()
        async with asyncio.TaskGroup() as group:
            for action in plan.actions:
                group.create_task(self._act(action, start, window), name=action.item)
        await self.settle()
        self.check(plan)

    async def model_says(self, item: ChatItem, *, learn_after: float | None = None) -> None:
        """The model adds `item` server-side; wait for its ack (and learn it, if asked)."""
        acked = self.transport.watch(item.id)
        self.server.add_item(self.transport.session_id, item_to_json(item))
        async with asyncio.timeout(30.0):
            await acked
        if learn_after is not None:
            await asyncio.sleep(learn_after)
            self.activity.learn(item)

    async def _act(self, action: Action, start: float, window: float) -> None:
        loop = asyncio.get_running_loop()

        async def until(moment: float) -> None:
            await asyncio.sleep(max(0.0, start + moment - loop.time()))

        if action.site == MODEL_ITEM:
            await until(action.at)
            await self.model_says(_item(MODEL_ITEM, action.item), learn_after=action.learn_after)
            return
        if action.site == "replacement":
            assert action.copy_at is not None
            await until(action.copy_at)
            copy = self.activity.chat_ctx.copy()
            if action.drop and len(copy):
                copy.remove(random.Random(action.item).choice(copy.ids()))
            copy.upsert(ChatMessage(action.item, "system", "a note from the application"))
            if action.copy_at < action.at:  # a stale copy; else copy and call are one step
                await until(action.at)
            await self.timed("replacement", copy.dropped, self.activity.update_chat_ctx(copy))
            return
        await until(action.at)
        if action.site == "cleanup":
            drops = frozenset({action.item})
            await self.timed("cleanup", drops, self.activity.cleanup_interrupted(drops))
            return
        item = _item(action.site, action.item)
        await self.timed(action.site, frozenset(), self.site_call(action.site, item))

    def site_call(self, site: str, item: ChatItem) -> Awaitable[None]:
        activity = self.activity
        if site == "tool-outputs":
            assert isinstance(item, FunctionCallOutput)
            return activity.push_tool_outputs([item])
        if site == "interrupted-tool-outputs":
            assert isinstance(item, FunctionCallOutput)
            return activity.push_interrupted_tool_outputs([item])
        assert isinstance(item, ChatMessage)
        if site == "user-turn":
            return activity.generate_reply(item)
        if site == "spoken-message":
            return activity.commit_spoken(item)
        raise ValueError(f"no call for site {site!r}")

    async def timed(self, site: str, intent: frozenset[str], call: Awaitable[None]) -> float:
        """Run one site call in this task, recording its intent and its latency."""
        self.calls[asyncio.current_task()] = (site, intent)
        self.pushes += 1
        if self.ack_timeouts:
            self.session.ack_timeout = self.rng.choice(self.ack_timeouts)
        started = time.perf_counter()
        await call
        elapsed = time.perf_counter() - started
        self.latencies.append(elapsed)
        return elapsed

    # -- at rest -------------------------------------------------------------------

    def at_rest(self) -> bool:
        """No op and no event in flight: the server answers each op with one event,
        so every op sent and every item the model added has its event in."""
        conversation, transport = self.conversation, self.transport
        return (
            transport.received == transport.sent + conversation.model_items and conversation.quiet()
        )

    async def settle(self, timeout: float = 30.0) -> None:
        """Wait until no op and no event is in flight."""
        async with asyncio.timeout(timeout):
            await self.transport.drained(self.transport.sent + self.conversation.model_items)
        assert self.at_rest(), "the server sent an event the harness did not expect"

    def check(self, plan: Round | None = None) -> None:
        """Judge the invariants now (the caller has settled)."""
        on_server = set(self.conversation.ids())
        context = plan.describe() if plan is not None else []
        trace = tuple(self.transport.trace)
        pushed = self.conversation.reached | self.conversation.refused
        for item in self.activity.chat_ctx.ids():
            if item in pushed and item not in on_server:
                if item not in self.lost:
                    self.findings.append(Finding("lost", item, None, tuple(context), trace))
                self.lost.add(item)
        for item in self.conversation.recreated:
            if item in on_server and item not in self.resurrected:
                self.resurrected.add(item)
                self.findings.append(Finding("resurrected", item, None, tuple(context), trace))
        deletes = self.transport.deletes_sent
        creates = set(self.transport.creates_sent)
        for origin, item, was_acked in deletes[self._deletes_checked :]:
            site, intent = self.calls.get(origin, ("?", frozenset()))
            if was_acked and item not in intent:
                self.unintended.append((site, item))
                self.moves += (origin, item) in creates
                self.findings.append(
                    Finding("unintended-delete", item, site, tuple(context), trace)
                )
        self._deletes_checked = len(deletes)

    def timeouts(self) -> int:
        return sum(1 for record in self.activity.pushes if record.phase is Phase.FAILED)


# -- results --------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100), by linear interpolation; NaN when empty."""
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    if q <= 0:
        return min(values)
    if q >= 100:
        return max(values)
    return cuts[int(q) - 1]


@define
class Tally:
    """What one variant did over a run (summed over its connections)."""

    variant: str
    environment: str = "base"
    rounds: int = 0
    pushes: int = 0
    lost: int = 0
    unintended: int = 0
    moves: int = 0
    resurrected: int = 0
    timeouts: int = 0
    rejected: int = 0
    latencies: list[float] = field(factory=list)
    findings: list[Finding] = field(factory=list)
    #: Unintended deletes by the site that sent them.
    by_site: dict[str, int] = field(factory=dict)

    def add(self, agent: Agent, rounds: int) -> None:
        self.rounds += rounds
        self.pushes += agent.pushes
        self.lost += len(agent.lost)
        self.unintended += len(agent.unintended)
        self.moves += agent.moves
        for site, _ in agent.unintended:
            self.by_site[site] = self.by_site.get(site, 0) + 1
        self.resurrected += len(agent.resurrected)
        self.timeouts += agent.timeouts()
        self.rejected += len(agent.session.rejected)
        self.latencies.extend(agent.latencies)
        self.findings.extend(agent.findings)

    def as_json(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "environment": self.environment,
            "rounds": self.rounds,
            "pushes": self.pushes,
            "lost": self.lost,
            "unintended_deletes": self.unintended,
            "of_which_moves": self.moves,
            "unintended_by_site": dict(sorted(self.by_site.items())),
            "resurrected": self.resurrected,
            "timeouts": self.timeouts,
            "rejected_ops": self.rejected,
            # no push, no latency: null rather than NaN, which is not JSON
            "push_ms": {
                f"p{q}": round(percentile(self.latencies, q) * 1000, 3) if self.latencies else None
                for q in (50, 90, 99)
            },
        }


@contextlib.contextmanager
def quiet_impl_logs() -> Iterator[None]:
    """The sessions warn on every rejection and timeout; a run counts them instead."""
    logger = logging.getLogger("impl")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


# -- the demo ---------------------------------------------------------------------------


def _quiet_cancellation(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """Ctrl-C cancels a push waiting for acks, and the session's gather of ack
    futures then ends with a CancelledError nobody reads; asyncio would log that
    on the way out. Anything else goes to the default handler."""
    if isinstance(context.get("exception"), asyncio.CancelledError):
        return
    loop.default_exception_handler(context)


#: The demo's environment: stale replacement copies and the model's own items, no
#: timeouts (the ack timeout is the real default) and no rejections.
DEMO_ENVIRONMENT = Environment(stale_copies=True, server_items=True)
#: What a demo round may add to its overlapping pair (the model's items come with
#: the environment).
DEMO_SITES: tuple[str, ...] = ("replacement", "cleanup", "tool-outputs", "user-turn")


def round_window(latency: float, jitter: float) -> float:
    """About one ack round trip: calls started within it overlap."""
    return max(0.002, 2 * latency + jitter)


async def run_demo(
    variants: Sequence[str],
    *,
    turns: int,
    latency: float,
    jitter: float,
    seed: int,
    environment: Environment = DEMO_ENVIRONMENT,
    on_server: Callable[[LoopbackServer], None] | None = None,
) -> list[Tally]:
    """One server on a free loopback port; per variant, one connection playing the
    same `turns` rounds. The server and every connection are closed on the way
    out, whether the run ends, fails or is cancelled (Ctrl-C). So the server needs no
    lifetime watchdog: with one, a run longer than it ended with a closed connection
    (exit 3) instead of its tallies."""
    settings = ServerSettings(latency=latency, jitter=jitter, seed=seed, max_lifetime=None)
    window = round_window(latency, jitter)
    tallies: list[Tally] = []
    asyncio.get_running_loop().set_exception_handler(_quiet_cancellation)
    with quiet_impl_logs():
        async with LoopbackServer(settings) as server:
            if on_server is not None:
                on_server(server)
            for variant in variants:
                rng = random.Random(seed)
                tally = Tally(variant, environment.name)
                agent = await Agent.open(server, variant, trace=64)
                try:
                    await agent.model_says(ChatMessage("sys0", "system", "be brief"), learn_after=0)
                    for index in range(1, turns + 1):
                        plan = plan_round(
                            rng,
                            index,
                            environment,
                            window,
                            sites=DEMO_SITES,
                            calls=(0, 2),
                            overlapping_pair=True,
                        )
                        await agent.play(plan, window=window)
                finally:
                    await agent.aclose()
                tally.add(agent, turns)
                tallies.append(tally)
    return tallies


__all__ = [
    "BASE",
    "DEMO_ENVIRONMENT",
    "MODEL_ITEM",
    "SOAK_SITES",
    "Action",
    "Agent",
    "Finding",
    "Pipelined",
    "Round",
    "Tally",
    "percentile",
    "plan_round",
    "quiet_impl_logs",
    "round_window",
    "run_demo",
]
