"""The three-way session: ackguard's own design, no lock needed.

Beside the mirror the session keeps every op it sent and has not seen answered;
the *expected view* is the mirror with those applied, so a push that diffs while
another push's ops are in flight already sees them. Every request carries its
*base* (the ids the caller's copy was taken from), and the diff is a merge:
delete only what the caller saw and dropped, create what it added, keep what it
never saw. Reading the request, diffing, updating the expected view and sending
happen with no await in between, so no other push can slip in and no lock is
needed. A rejected op leaves the expected view, and nothing else changes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence, Set

from attrs import frozen

from impl.chat_context import ChatContext, CreateItem, DeleteItem, DiffOp
from impl.session import RealtimeError, SessionBase
from impl.transport import DELETE, AckKey, ClientOp, CreateOp, ErrorEvent, ack_key

__all__ = ["Outstanding", "RealtimeError", "ThreeWaySession", "expected_view", "three_way_diff"]


@frozen
class Outstanding:
    """An op sent and not yet answered, with the future its push may await."""

    op: ClientOp
    future: asyncio.Future[bool]

    @property
    def key(self) -> AckKey:
        return ack_key(self.op)


def expected_view(mirror: Sequence[str], outstanding: Sequence[ClientOp]) -> tuple[str, ...]:
    """The mirror with every outstanding op applied, in the order they were sent."""
    view = list(mirror)
    for op in outstanding:
        if isinstance(op, CreateOp):
            if op.item.id not in view:
                if op.previous_id is None:
                    position = 0
                elif op.previous_id in view:
                    position = view.index(op.previous_id) + 1
                else:
                    position = len(view)
                view.insert(position, op.item.id)
        elif op.item_id in view:
            view.remove(op.item_id)
    return tuple(view)


def three_way_diff(expected: Sequence[str], base: Set[str], request: ChatContext) -> list[DiffOp]:
    """Delete what the caller saw and dropped (`base & expected - request`); create
    what the request adds to its base and the expected view lacks, after the
    nearest earlier request item that will exist by then; keep what the caller
    never saw."""
    wanted = set(request.ids())
    ops: list[DiffOp] = [
        DeleteItem(item) for item in expected if item in base and item not in wanted
    ]
    present = {item for item in expected if item in wanted or item not in base}
    previous: str | None = None
    for item in request:
        if item.id in present:
            previous = item.id
        elif item.id not in base:
            ops.append(CreateItem(item, previous))
            present.add(item.id)
            previous = item.id
    return ops


class ThreeWaySession(SessionBase):
    """A session whose pushes need neither its lock nor an activity lock."""

    def _init_pushes(self) -> None:
        self._outstanding: list[Outstanding] = []
        #: Items whose deletion has been acknowledged.
        self._gone: set[str] = set()

    # -- views -------------------------------------------------------------------

    def outstanding(self) -> tuple[ClientOp, ...]:
        return tuple(entry.op for entry in self._outstanding)

    def gone(self) -> frozenset[str]:
        return frozenset(self._gone)

    def expected_ids(self) -> tuple[str, ...]:
        return expected_view(self._mirror.ids(), self.outstanding())

    def tombstones(self) -> frozenset[str]:
        """Items deleted on purpose: acknowledged deletions and deletes in flight."""
        return frozenset(self._gone) | {
            entry.op.item_id for entry in self._outstanding if entry.key[0] == DELETE
        }

    # -- the push ----------------------------------------------------------------

    async def update_chat_ctx(
        self,
        chat_ctx: ChatContext,
        *,
        base: frozenset[str] | None = None,
        wait: bool = True,
    ) -> None:
        """Merge `chat_ctx` into the expected view and send the difference.

        `base` defaults to the ids `chat_ctx` was copied from plus those removed
        from it since. With `wait` the push returns once every op is answered
        (for a site that must know its items reached the server before asking
        for a reply) and raises RealtimeError on timeout; without it, it returns
        as soon as the ops are sent, relying on the socket's order.
        """
        if base is None:
            base = chat_ctx.base
        if base is None:
            raise ValueError("a three-way push needs the base its request was copied from")
        futures = self._merge_diff_and_send(chat_ctx, base)
        if futures and wait:
            await self._await_acks(futures)

    def _merge_diff_and_send(
        self, chat_ctx: ChatContext, base: frozenset[str]
    ) -> dict[AckKey, asyncio.Future[bool]]:
        """Merge, diff and send: no await in here, which is the whole point."""
        return self._send_changes(chat_ctx, self._merge_and_diff(chat_ctx, base))

    def _merge_and_diff(self, chat_ctx: ChatContext, base: frozenset[str]) -> list[DiffOp]:
        # what another push deleted on purpose and this caller merely saw leaves
        # the request object too (the live local context, when that is the request)
        gone = self.tombstones()
        for item_id in chat_ctx.ids():
            if item_id in gone and item_id in base:
                chat_ctx.discard(item_id)
        return self._diff(chat_ctx, base)

    def _register(self, op: ClientOp, future: asyncio.Future[bool]) -> None:
        """The op enters the expected view as it goes out."""
        self._outstanding.append(Outstanding(op, future))

    def _diff(self, chat_ctx: ChatContext, base: frozenset[str]) -> list[DiffOp]:
        return three_way_diff(self.expected_ids(), base, chat_ctx)

    # -- events ------------------------------------------------------------------

    def _on_ack(self, key: AckKey, ok: bool) -> None:
        if key[0] == DELETE and ok:
            self._gone.add(key[1])
        for position, entry in enumerate(self._outstanding):
            if entry.key == key:
                del self._outstanding[position]
                if not entry.future.done():
                    entry.future.set_result(ok)
                return

    def _on_error(self, event: ErrorEvent) -> None:
        """Roll back only the rejected op: it leaves the expected view."""
        for position, entry in enumerate(self._outstanding):
            if entry.op.event_id == event.event_id:
                del self._outstanding[position]
                self.rejected.append(entry.op)
                if not entry.future.done():
                    entry.future.set_result(False)
                return
