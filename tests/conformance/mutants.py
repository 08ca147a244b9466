"""Deliberately wrong implementations, for showing that the harness catches them.

Each is the shipped class with one behaviour broken, selected only here.
"""

from __future__ import annotations

import asyncio
from typing import Any

from attrs import frozen

from impl.activity import AgentActivity
from impl.chat_context import ChatContext, ChatItem, DiffOp
from impl.policy import DEFAULT_POLICY, Policy
from impl.session import RealtimeSession
from impl.three_way import ThreeWaySession, three_way_diff
from impl.transport import AckKey, ClientOp, CreateOp
from proofs.adapters.impl.adapter import ImplAdapter, SessionFactory
from proofs.engines.conformance.adapter import AdapterFactory


class MirrorAtSend(RealtimeSession):
    """Updates the mirror when an op is sent instead of when its ack arrives."""

    def _send(self, op: ClientOp) -> None:
        super()._send(op)
        if isinstance(op, CreateOp):
            if op.item.id not in self._mirror:
                self._mirror.insert_after(op.item, op.previous_id)
        else:
            self._mirror.discard(op.item_id)


class EarlyRelease(RealtimeSession):
    """Releases the provider lock once the ops are sent, before their acks."""

    async def update_chat_ctx(
        self, chat_ctx: ChatContext, *, base: frozenset[str] | None = None
    ) -> None:
        async with self.lock:
            futures = self._diff_and_send(chat_ctx)
        if futures:
            try:
                await self._await_acks(futures)
            finally:
                self._forget(futures)


class ThreeWayAgainstMirror(ThreeWaySession):
    """Diffs three ways against the mirror instead of the expected view."""

    def _diff(self, chat_ctx: ChatContext, base: frozenset[str]) -> list[DiffOp]:
        return three_way_diff(self._mirror.ids(), base, chat_ctx)


class ThreeWayWithoutBase(ThreeWaySession):
    """Ignores the request's base: treats everything expected as seen (a two-way diff)."""

    def _merge_and_diff(self, chat_ctx: ChatContext, base: frozenset[str]) -> list[DiffOp]:
        return super()._merge_and_diff(chat_ctx, frozenset(self.expected_ids()))


class ThreeWayAwaitBeforeSend(ThreeWaySession):
    """Awaits between diffing and sending, so two pushes can diff the same expected
    view (an await the model does not have)."""

    async def update_chat_ctx(
        self,
        chat_ctx: ChatContext,
        *,
        base: frozenset[str] | None = None,
        wait: bool = True,
    ) -> None:
        base = base if base is not None else chat_ctx.base
        assert base is not None
        changes = self._merge_and_diff(chat_ctx, base)
        await asyncio.sleep(0)
        futures = self._send_changes(chat_ctx, changes)
        if futures and wait:
            await self._await_acks(futures)


@frozen
class Mutant:
    name: str
    session: SessionFactory
    #: The variants whose session it replaces.
    variants: tuple[str, ...]

    def factory(self) -> AdapterFactory:
        return ImplAdapter.factory(session_factory=self.session)


MIRROR_DIFF_VARIANTS = ("unlocked", "lock3", "lock5", "lock5-hoisted")

MUTANTS = (
    Mutant("mirror-at-send", MirrorAtSend, MIRROR_DIFF_VARIANTS),
    Mutant("early-release", EarlyRelease, MIRROR_DIFF_VARIANTS),
    Mutant("three-way-against-mirror", ThreeWayAgainstMirror, ("three-way",)),
    Mutant("three-way-without-base", ThreeWayWithoutBase, ("three-way",)),
)
#: Caught only when stimuli arrive together and the loop's order varies.
AWAIT_BEFORE_SEND = Mutant("three-way-await-before-send", ThreeWayAwaitBeforeSend, ("three-way",))


class NeverResumes(RealtimeSession):
    """Once its acks are in, the push waits on for something that never comes."""

    async def _await_acks(self, futures: dict[AckKey, asyncio.Future[bool]]) -> None:
        await super()._await_acks(futures)
        await asyncio.get_running_loop().create_future()


class AppendingChatContext(ChatContext):
    """Appends every new item whatever its creation time (the order impl had before
    it followed livekit's `find_insertion_index`)."""

    def upsert(self, item: ChatItem) -> None:
        self.append(item)


def appending_activity(
    session: Any, *, policy: Policy = DEFAULT_POLICY, chat_ctx: ChatContext | None = None
) -> AgentActivity:
    """The shipped activity over an appending local context (its copies append too)."""
    return AgentActivity(
        session, policy=policy, chat_ctx=AppendingChatContext(() if chat_ctx is None else chat_ctx)
    )


#: The activity whose local context appends, for the local-order traces.
APPENDING_LOCAL = ImplAdapter.factory(activity_factory=appending_activity)
