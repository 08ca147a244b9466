"""The chat context: ordered chat items with unique ids, and the order-aware diff.

Both the agent's local context and the provider session's mirror are a
`ChatContext`. Every item carries its *creation time* (`created_at`, a tick of
`created_now`), and `upsert` places a new item by it, as livekit-agents 1.8.9's
`ChatContext.insert` does: right after the last item created no later than it.
A copy remembers the ids it was taken from and the ids its owner
removed from it since: that is the *base* a three-way session needs to tell
what the caller saw and dropped from what the caller never saw.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import Literal, TypeVar

from attrs import evolve, field, frozen

Role = Literal["user", "assistant", "system"]

#: The creation clock: one counter for the process, so every stamp is later than
#: the ones before it and two items made in one step still have an order.
_TICKS = itertools.count(1)


def created_now() -> int:
    """A creation time later than every one handed out before."""
    return next(_TICKS)


@frozen
class ChatMessage:
    """A user, assistant or system message; frozen, so a copy of a context shares it."""

    id: str
    role: Role
    text: str
    #: When the item was made (None: before anything stamped; older than every stamp).
    #: Not content: two copies of one item stamped apart are the same item.
    created_at: int | None = field(default=None, eq=False, kw_only=True)


@frozen
class FunctionCall:
    """A tool call the model made; its output is a separate item with its own id."""

    id: str
    call_id: str
    name: str
    arguments: str = "{}"
    #: When the item was made (None: before anything stamped; older than every stamp).
    #: Not content: two copies of one item stamped apart are the same item.
    created_at: int | None = field(default=None, eq=False, kw_only=True)


@frozen
class FunctionCallOutput:
    """A tool's result, the item whose loss started this project."""

    id: str
    call_id: str
    output: str
    #: When the item was made (None: before anything stamped; older than every stamp).
    #: Not content: two copies of one item stamped apart are the same item.
    created_at: int | None = field(default=None, eq=False, kw_only=True)


ChatItem = ChatMessage | FunctionCall | FunctionCallOutput
Item = TypeVar("Item", bound=ChatItem)


def stamped(item: Item, created_at: int | None = None) -> Item:
    """`item` made now (or at `created_at`): the stamp is what orders a late entry."""
    return evolve(item, created_at=created_now() if created_at is None else created_at)


class ChatContext:
    """Ordered items, unique by id.

    Mutable on purpose: the agent's local context is one object that several
    call sites hold and change, and whether a push reads that live object or a
    private copy is exactly what decides what it deletes.
    """

    def __init__(self, items: Iterable[ChatItem] = ()) -> None:
        self._items: list[ChatItem] = []
        for item in items:
            if self.get(item.id) is not None:
                raise ValueError(f"duplicate item id {item.id!r}")
            self._items.append(item)
        #: The ids this context was copied from, in order (None: not a copy).
        self.copied_from: tuple[str, ...] | None = None
        #: Every id passed to `remove` since the copy was taken.
        self.dropped: frozenset[str] = frozenset()

    # -- reading ---------------------------------------------------------------

    @property
    def items(self) -> tuple[ChatItem, ...]:
        return tuple(self._items)

    def ids(self) -> tuple[str, ...]:
        return tuple(item.id for item in self._items)

    def get(self, item_id: str) -> ChatItem | None:
        for item in self._items:
            if item.id == item_id:
                return item
        return None

    def index(self, item_id: str) -> int | None:
        for position, item in enumerate(self._items):
            if item.id == item_id:
                return position
        return None

    def __contains__(self, item_id: object) -> bool:
        return any(item.id == item_id for item in self._items)

    def __iter__(self) -> Iterator[ChatItem]:
        return iter(tuple(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"ChatContext([{', '.join(self.ids())}])"

    @property
    def base(self) -> frozenset[str] | None:
        """What the owner of this copy saw: the ids copied plus the ids it removed."""
        if self.copied_from is None:
            return None
        return frozenset(self.copied_from) | self.dropped

    # -- changing --------------------------------------------------------------

    def copy(self) -> ChatContext:
        """A private copy, in this order, that remembers the ids it was taken from."""
        copied = type(self)()
        copied._items = list(self._items)
        copied.copied_from = self.ids()
        return copied

    def insert_after(self, item: ChatItem, previous_id: str | None) -> None:
        """Insert as a server places it: after `previous_id`, at the head for None,
        at the tail when `previous_id` is unknown."""
        if item.id in self:
            raise ValueError(f"item {item.id!r} is already in the context")
        if previous_id is None:
            position = 0
        else:
            found = self.index(previous_id)
            position = len(self._items) if found is None else found + 1
        self._items.insert(position, item)

    def upsert(self, item: ChatItem) -> None:
        """Replace the item with the same id in place, or insert it by creation time.

        As livekit's `_upsert_item` and `insert` (`find_insertion_index`): walk back
        from the tail past every item created later than `item`, and insert right
        after. An unstamped item already here is older than any stamp; an unstamped
        new one is made now, so it goes at the tail.
        """
        position = self.index(item.id)
        if position is not None:
            self._items[position] = item
            return
        mine = item.created_at
        position = len(self._items)
        if mine is not None:
            while position and _later(self._items[position - 1].created_at, mine):
                position -= 1
        self._items.insert(position, item)

    def append(self, item: ChatItem) -> None:
        """Replace the item with the same id in place, or append it at the tail
        whatever its creation time (livekit's `items.append`, as a push adds its
        items to the mirror's copy)."""
        position = self.index(item.id)
        if position is None:
            self._items.append(item)
        else:
            self._items[position] = item

    def remove(self, item_id: str) -> bool:
        """Remove by id; the id counts as dropped even when it was absent."""
        self.dropped = self.dropped | {item_id}
        position = self.index(item_id)
        if position is None:
            return False
        del self._items[position]
        return True

    def discard(self, item_id: str) -> bool:
        """Remove by id without recording a drop (for views the owner does not edit)."""
        position = self.index(item_id)
        if position is None:
            return False
        del self._items[position]
        return True


def _later(created_at: int | None, than: int) -> bool:
    return created_at is not None and created_at > than


# -- the diff ---------------------------------------------------------------------


@frozen
class CreateItem:
    """Create `item` after `previous_id` (None: at the head)."""

    item: ChatItem
    previous_id: str | None


@frozen
class DeleteItem:
    item_id: str


DiffOp = CreateItem | DeleteItem


def common_ids(old: Sequence[str], new: Sequence[str]) -> tuple[str, ...]:
    """A longest common subsequence of two id sequences.

    Where several exist, the walk prefers to skip an id of `old` first, so the
    earliest ids of `old` that can stay do stay; the model's diff breaks ties
    the same way, and conformance compares the ops sent, so the tie-break is
    part of the behaviour.
    """
    n, m = len(old), len(new)
    # lengths[i][j]: the length of a longest common subsequence of old[i:], new[j:]
    lengths = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = lengths[i], lengths[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = below[j + 1] + 1 if old[i] == new[j] else max(below[j], row[j + 1])
    kept: list[str] = []
    i = j = 0
    while i < n and j < m:
        if old[i] == new[j]:
            kept.append(old[i])
            i, j = i + 1, j + 1
        elif lengths[i + 1][j] >= lengths[i][j + 1]:
            i += 1
        else:
            j += 1
    return tuple(kept)


def diff(old: ChatContext, new: ChatContext) -> list[DiffOp]:
    """The ops that turn `old` into `new`: deletes first (in `old`'s order), then
    creates in `new`'s order, each after its predecessor in `new`.

    An item kept in place whose content changed under the same id (a message
    whose text was edited) is an update, sent as a delete and a create of it.
    """
    kept = set(common_ids(old.ids(), new.ids()))
    changed = {item.id for item in new if item.id in kept and old.get(item.id) != item}
    ops: list[DiffOp] = [
        DeleteItem(item.id) for item in old if item.id not in kept or item.id in changed
    ]
    previous: str | None = None
    for item in new:
        if item.id not in kept or item.id in changed:
            ops.append(CreateItem(item, previous))
        previous = item.id
    return ops
