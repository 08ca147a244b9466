"""The agent activity: the local context and the six places that push it.

Every site pushes through one helper, `_push`, which takes the activity lock
(when the policy says the site locks) before it snapshots and holds it across
the push and its acks. Where the helper awaits is where the model's steps end:

1. the call runs up to the first await: the local update before the push (or
   the replacement of the local context), then the activity lock (no yield
   when it is free), the snapshot, the provider's lock (no yield when free),
   the diff and the sends;
2. each lock that is not free is one await (`wait-activity-lock`,
   `wait-provider-lock`); the task continues when the lock is handed to it;
3. the ack wait is one await (`wait-acks`); when it ends (acks in, or timeout)
   the task releases both locks and makes the local update after the push, all
   before its next await.

Each site stamps its items with their creation time where the model's
`model.sites.LOCAL_ORDER` says they are made: at the call; at the snapshot (the
user turn's message is made on the mirror's copy, inside the lock); or before
the call (a tool output when its tool returns, a spoken message when its
playout starts), which the caller does by passing items it stamped with
`impl.chat_context.stamped`, and the call does for any it did not. A site
placed `by-created-at` enters its items into the local context by that stamp
(`ChatContext.upsert`); the request built on the mirror's copy appends them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from types import TracebackType
from typing import Protocol

from impl.chat_context import (
    ChatContext,
    ChatItem,
    ChatMessage,
    FunctionCallOutput,
    stamped,
)
from impl.policy import DEFAULT_POLICY, Policy
from impl.probe import CURRENT_PUSH, Phase, PushRecord, TracedLock
from impl.session import RealtimeError
from model.sites import (
    SITES_BY_NAME,
    Creation,
    LocalPosition,
    LocalUpdate,
    RequestSource,
    local_order,
)

log = logging.getLogger("impl.activity")


class PushSession(Protocol):
    """What the activity needs of a provider session (both sessions qualify)."""

    @property
    def chat_ctx(self) -> ChatContext: ...

    async def update_chat_ctx(
        self, chat_ctx: ChatContext, *, base: frozenset[str] | None = None
    ) -> None: ...


class _NoLock:
    async def __aenter__(self) -> None:
        return None

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        return None


_NO_LOCK = _NoLock()


class AgentActivity:
    """The agent side: the live local context and its six push sites, under a policy."""

    def __init__(
        self,
        session: PushSession,
        *,
        policy: Policy = DEFAULT_POLICY,
        chat_ctx: ChatContext | None = None,
    ) -> None:
        self._session = session
        self.policy = policy
        self._chat_ctx = chat_ctx if chat_ctx is not None else ChatContext()
        self.lock = TracedLock("activity")
        #: Every push, in the order it started (instrumentation).
        self.pushes: list[PushRecord] = []

    @property
    def chat_ctx(self) -> ChatContext:
        """The live local context object; copy it before editing it for a replacement."""
        return self._chat_ctx

    # -- the six sites ---------------------------------------------------------------

    async def generate_reply(self, user_message: ChatMessage) -> None:
        """The text user turn: snapshot the mirror plus the message, push, then add it locally."""
        await self._push("user-turn", adds=(user_message,))

    async def push_tool_outputs(self, outputs: Iterable[FunctionCallOutput]) -> None:
        """A generation's new tool outputs: add them locally, then snapshot and push."""
        await self._push("tool-outputs", adds=tuple(outputs))

    async def push_interrupted_tool_outputs(self, outputs: Iterable[FunctionCallOutput]) -> None:
        """Outputs of tools that finished although their generation was interrupted."""
        await self._push("interrupted-tool-outputs", adds=tuple(outputs))

    async def update_chat_ctx(self, chat_ctx: ChatContext) -> None:
        """The application's replacement: `chat_ctx` becomes the live local context
        at once, and that same object is pushed."""
        await self._push("replacement", replacement=chat_ctx)

    async def cleanup_interrupted(self, never_played: Iterable[str]) -> None:
        """Remove the items the model produced but the user never heard, by pushing
        the live local context (which never held them)."""
        await self._push("cleanup", drops=tuple(never_played))

    async def commit_spoken(self, message: ChatMessage) -> None:
        """The spoken text of say(), pushed after playout."""
        await self._push("spoken-message", adds=(message,))

    def learn(self, item: ChatItem) -> None:
        """The local context learns an item the model created server-side; it is
        stamped as it enters (livekit re-stamps a function call when its tool starts)."""
        self._chat_ctx.upsert(stamped(item))

    # -- the one helper ----------------------------------------------------------------

    async def _push(
        self,
        site: str,
        *,
        adds: tuple[ChatItem, ...] = (),
        drops: tuple[str, ...] = (),
        replacement: ChatContext | None = None,
    ) -> None:
        spec = SITES_BY_NAME[site]
        update = self.policy.local_update(site)
        order = local_order(spec)
        by_time = order.position is LocalPosition.BY_CREATED_AT
        # made at the snapshot: on the mirror's copy, unless the item enters first
        at_snapshot = (
            order.created is Creation.AT_SNAPSHOT
            and spec.request is RequestSource.MIRROR_SNAPSHOT
            and update is not LocalUpdate.BEFORE_PUSH
        )
        if not at_snapshot:
            adds = _created(adds, keep=order.created is Creation.BEFORE_CALL)
        record = PushRecord(site, lambda: self._chat_ctx)
        self.pushes.append(record)
        token = CURRENT_PUSH.set(record)
        try:
            request = self._before_push(
                spec.request, update, record, adds, drops, replacement, by_time
            )
            locked = self.policy.locks(site)
            if locked:
                record.phase = Phase.WAIT_ACTIVITY
            try:
                async with self.lock if locked else _NO_LOCK:
                    if request is None:
                        if at_snapshot:
                            adds = _created(adds, keep=False)
                        request = self._snapshot(record, adds, drops)
                    await self._session.update_chat_ctx(request, base=record.base)
                record.phase = Phase.DONE
            except RealtimeError as error:
                record.phase = Phase.FAILED
                log.warning("%s push failed: %s", site, error)
            except asyncio.CancelledError:
                record.phase = Phase.CANCELLED
                raise
            if update is LocalUpdate.AFTER_PUSH:
                _apply(self._chat_ctx, adds, (), by_time)
        finally:
            # a coroutine closed by the garbage collector runs this in another context
            with contextlib.suppress(ValueError):
                CURRENT_PUSH.reset(token)

    def _before_push(
        self,
        source: RequestSource,
        update: LocalUpdate,
        record: PushRecord,
        adds: tuple[ChatItem, ...],
        drops: tuple[str, ...],
        replacement: ChatContext | None,
        by_time: bool,
    ) -> ChatContext | None:
        """Everything before the activity lock; returns the request unless it is a snapshot."""
        request: ChatContext | None = None
        if source is RequestSource.CALLER_COPY:
            if replacement is None:
                raise ValueError("a caller-copy site needs the caller's context")
            if update not in (LocalUpdate.REPLACE, LocalUpdate.NONE):
                raise ValueError(f"a caller-copy site cannot update the local context {update}")
            seen = replacement.copied_from
            record.copy = seen if seen is not None else replacement.ids()
            record.base = frozenset(record.copy) | replacement.dropped
            if update is LocalUpdate.REPLACE:
                self._chat_ctx = replacement
            request = replacement
        elif source is RequestSource.LOCAL_CONTEXT:
            request = self._chat_ctx
        if update is LocalUpdate.BEFORE_PUSH:
            _apply(self._chat_ctx, adds, drops, by_time)
        if source is RequestSource.LOCAL_CONTEXT:
            record.base = frozenset(self._chat_ctx.ids()) | frozenset(drops)
        record.request = request
        return request

    def _snapshot(
        self, record: PushRecord, adds: tuple[ChatItem, ...], drops: tuple[str, ...]
    ) -> ChatContext:
        """A copy of the mirror as it is now, plus the call's items."""
        request = self._session.chat_ctx
        _apply(request, adds, drops, by_time=False)
        record.request = request
        record.base = request.base or frozenset()
        return request


def _apply(
    ctx: ChatContext, adds: tuple[ChatItem, ...], drops: tuple[str, ...], by_time: bool
) -> None:
    """Drop, then add: by creation time (livekit's insert) or at the tail."""
    for item_id in drops:
        ctx.remove(item_id)
    for item in adds:
        if by_time:
            ctx.upsert(item)
        else:
            ctx.append(item)


def _created(adds: tuple[ChatItem, ...], *, keep: bool) -> tuple[ChatItem, ...]:
    """`adds` made now, stamped in their order; with `keep`, an item its caller
    already stamped keeps its stamp (it was made before the call)."""
    return tuple(item if keep and item.created_at is not None else stamped(item) for item in adds)
