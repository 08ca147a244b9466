"""The agent side shared by the adapters over real livekit sessions that are not
OpenAI's: ackguard's own activity (`impl.AgentActivity`, the sites and the
variant's locks) pushing through a released livekit `RealtimeSession`.

What is checked is the provider class: its diff, what it sends, when and to
what it sets its mirror, what it keeps back. The sites above it are impl's,
which conform to the model under the openai shape (`ackguard conform`), so a
mismatch here is the session's. `LivekitPush` is the seam: impl's `PushSession`
(a snapshot of the mirror, and a push of a context) in livekit's types, with
each scenario id standing for one `llm.ChatMessage` whose text is its id.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from livekit.agents import llm

from impl.activity import AgentActivity
from impl.chat_context import ChatContext, ChatItem, ChatMessage
from impl.probe import Phase, current_push
from model import Config, Pc, SessionShape
from proofs.adapters.impl.adapter import SiteFramework
from proofs.engines.conformance import FrameworkView, LockView, StandIn, TaskView
from proofs.errors import UnsupportedConfig


def livekit_message(item: ChatItem, rank: int) -> llm.ChatMessage:
    """The livekit message a scenario item stands for: its text is its id, so a
    provider's wire format names it, and `rank` orders it as livekit's insert does."""
    role: Literal["user", "assistant"] = (
        "user" if isinstance(item, ChatMessage) and item.role == "user" else "assistant"
    )
    return llm.ChatMessage(id=item.id, role=role, content=[item.id], created_at=float(rank))


class LivekitPush:
    """impl's `PushSession` over a real livekit session: what the activity snapshots
    is the real mirror, what it pushes goes to the real `update_chat_ctx`."""

    def __init__(self, framework: RealSessionFramework) -> None:
        self.framework = framework

    @property
    def chat_ctx(self) -> ChatContext:
        """The real session's `chat_ctx` (a copy of what it believes the server holds)."""
        framework = self.framework
        ids = tuple(framework.model_id(item) for item in framework.real.chat_ctx.items)
        return ChatContext(framework.items[i] for i in ids).copy()

    async def update_chat_ctx(
        self, chat_ctx: ChatContext, *, base: frozenset[str] | None = None
    ) -> None:
        """Push `chat_ctx` through the real session; its diff reads the context now."""
        del base  # a mirror-diff session has no base
        record = current_push()
        request = llm.ChatContext([self.framework.livekit[i] for i in chat_ctx.ids()])
        if record is not None:
            record.on_diff(chat_ctx.ids(), {})
        task = asyncio.current_task()
        self.framework.requests[task] = chat_ctx.ids()
        self.framework.inside.add(task)
        try:
            await self.framework.real.update_chat_ctx(request)
        finally:
            self.framework.inside.discard(task)


class RealSessionFramework(SiteFramework):
    """A `Framework` whose provider session is a real livekit class over the stand-in.

    Subclasses build `real` (the session under test) over `server` and say which
    shapes they stand for; the sites, copies and learning are impl's.
    """

    #: The session shapes (`model.SHAPES`) this framework's real class has.
    shapes: tuple[str, ...] = ()
    #: What to call the real class in messages.
    what = "the real session"

    def __init__(self, config: Config) -> None:
        if config.shape.name not in self.shapes:
            raise UnsupportedConfig(
                f"{self.what} has the {' and '.join(self.shapes)} session shapes, "
                f"not {config.shape.name}"
            )
        super().__init__(config)
        scenario = config.scenario
        order = (*scenario.server, *scenario.initial_local, *self.items)
        ranks = {item: rank for rank, item in reversed(list(enumerate(order)))}
        #: The livekit item each scenario id stands for (a session's own for the model's).
        self.livekit: dict[str, llm.ChatItem] = {
            i: livekit_message(item, ranks[i]) for i, item in self.items.items()
        }
        #: The push tasks now inside the real `update_chat_ctx` (awaiting its send).
        self.inside: set[asyncio.Task[Any] | None] = set()
        #: The ids of the request each push task handed the real session.
        self.requests: dict[object, tuple[str, ...]] = {}
        self.server = StandIn(
            ((i, self.livekit[i]) for i in scenario.server),
            appends=not config.shape.sends_deletes,
        )
        self.real = self.build(config.shape)
        self.activity = AgentActivity(
            LivekitPush(self),
            policy=self.policy,
            chat_ctx=ChatContext(self.items[i] for i in scenario.initial_local),
        )

    def build(self, shape: SessionShape) -> Any:
        """The real session under test, over `self.server`, holding the scenario's
        server items as its mirror."""
        raise NotImplementedError

    def model_id(self, item: llm.ChatItem) -> str:
        """The scenario id a livekit item stands for. A session that names an item of
        the model's by an id of its own is mapped back by the item's text, and from
        then on the pushes name that item as the session does."""
        if item.id in self.items:
            return item.id
        text = item.text_content if isinstance(item, llm.ChatMessage) else None
        if text not in self.items:
            raise RuntimeError(f"the session holds {item.id!r}, which no scenario item is")
        assert text is not None
        self.livekit[text] = item
        return text

    def mirror(self) -> tuple[str, ...]:
        """The ids of the real session's mirror (what it diffs against)."""
        return tuple(self.model_id(item) for item in self.real._chat_ctx.items)

    def kept(self) -> tuple[str, ...] | None:
        """The request the real session keeps back, if any."""
        return None

    def observe(self) -> FrameworkView:
        return FrameworkView(
            mirror=self.mirror(),
            local=self.activity.chat_ctx.ids(),
            activity_lock=self._lock(self.activity.lock),
            provider_lock=LockView(),
            tasks=tuple(self._task(index) for index in range(len(self.config.scenario.calls))),
            learned=frozenset(self.learned),
        )

    def _task(self, index: int) -> TaskView:
        view = super()._task(index)
        record = self._record(index)
        if record is not None and record.task in self.inside:
            # inside the real push, after the activity lock: awaiting its send
            return TaskView(
                Pc.WAIT_SEND,
                copy=view.copy,
                request=view.request,
                request_is_live=view.request_is_live,
                read=view.read,
                bound_at_read=view.bound_at_read,
                base=view.base,
            )
        if record is not None and record.phase is Phase.WAIT_ACTIVITY and record.read is not None:
            raise RuntimeError(f"T{index} diffed yet reports waiting for the activity lock")
        return view
