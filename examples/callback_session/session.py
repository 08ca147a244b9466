"""A callback-style realtime session: the provider half of the example's own code.

It is shaped unlike ackguard's `impl.session` on purpose, the way another SDK
might be:

* the connection *calls* the session for every server event (`on_event`); there
  is no receive loop to await;
* sends are JSON-shaped messages handed to the connection's outgoing queue,
  which never waits;
* it waits for the acks of a whole sync through one future, with a set of
  outstanding acks keyed by (kind, key);
* it keeps one sync at a time with `Gate`, a hand-rolled FIFO mutex, not an
  `asyncio.Lock`;
* items the model creates server-side get keys the server assigns.

What it must share with every session the model describes: the mirror changes
only when an event comes back; the diff, the sends and the registration of the
acks happen with no await in between; the only awaits are entering a busy gate
and waiting for the acks.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol, TypeVar

log = logging.getLogger("acme.session")

T = TypeVar("T")

#: A JSON-shaped wire message (client op or server event).
Message = dict[str, Any]
#: What an ack answers: ("create" | "delete", item key).
AckKey = tuple[str, str]


@dataclass(frozen=True)
class Item:
    """One conversation item; `key` is unique and never reused."""

    key: str
    role: str
    text: str

    def to_wire(self) -> Message:
        return {"key": self.key, "role": self.role, "text": self.text}

    @classmethod
    def from_wire(cls, data: Message) -> Item:
        return cls(str(data["key"]), str(data["role"]), str(data["text"]))


class Conversation:
    """An ordered list of items with unique keys (the agent's history, a request, the mirror)."""

    def __init__(self, items: Iterable[Item] = ()) -> None:
        self._items: list[Item] = list(items)

    def keys(self) -> tuple[str, ...]:
        return tuple(item.key for item in self._items)

    def __contains__(self, key: object) -> bool:
        return any(item.key == key for item in self._items)

    def __iter__(self) -> Iterator[Item]:
        return iter(self._items)

    def copy(self) -> Conversation:
        return Conversation(self._items)

    def get(self, key: str) -> Item:
        for item in self._items:
            if item.key == key:
                return item
        raise KeyError(key)

    def upsert(self, item: Item) -> None:
        """Replace the item with the same key in place, or append it."""
        for index, existing in enumerate(self._items):
            if existing.key == item.key:
                self._items[index] = item
                return
        self._items.append(item)

    def discard(self, key: str) -> None:
        self._items = [item for item in self._items if item.key != key]

    def insert_after(self, item: Item, after: str | None) -> None:
        """After `after`; at the head for None; at the tail when `after` is unknown."""
        keys = self.keys()
        if after is None:
            position = 0
        elif after in keys:
            position = keys.index(after) + 1
        else:
            position = len(keys)
        self._items.insert(position, item)


def plan(mirror: Sequence[str], request: Sequence[str]) -> list[tuple[str, str, str | None]]:
    """The ops that turn `mirror` into `request`: (kind, key, after), deletes first.

    Order-aware: what lies outside a longest common subsequence is deleted from
    the mirror or created after its predecessor in the request (ties keep the
    mirror's earliest items).
    """
    rows, cols = len(mirror) + 1, len(request) + 1
    table = [[0] * cols for _ in range(rows)]
    for i in range(len(mirror) - 1, -1, -1):
        for j in range(len(request) - 1, -1, -1):
            if mirror[i] == request[j]:
                table[i][j] = table[i + 1][j + 1] + 1
            else:
                table[i][j] = max(table[i + 1][j], table[i][j + 1])
    common: set[str] = set()
    i = j = 0
    while i < len(mirror) and j < len(request):
        if mirror[i] == request[j]:
            common.add(mirror[i])
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    ops: list[tuple[str, str, str | None]] = [
        ("delete", key, None) for key in mirror if key not in common
    ]
    for index, key in enumerate(request):
        if key not in common:
            ops.append(("create", key, request[index - 1] if index else None))
    return ops


class Gate:
    """A FIFO mutex that hands itself to the first waiter on release.

    That handover is what `asyncio.Lock` does too (a task arriving after a
    release queues behind the woken waiter); spelled out here, the holder and
    the queue are plain attributes a test can read.
    """

    def __init__(self) -> None:
        self.owner: asyncio.Task[Any] | None = None
        self._queue: deque[tuple[asyncio.Task[Any] | None, asyncio.Future[None]]] = deque()

    def waiting(self) -> tuple[asyncio.Task[Any] | None, ...]:
        """The tasks queued for the gate, first first."""
        return tuple(task for task, _ in self._queue)

    async def __aenter__(self) -> None:
        me = asyncio.current_task()
        if self.owner is None and not self._queue:
            self.owner = me  # free: taken without yielding
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (me, waiter)
        self._queue.append(entry)
        try:
            await waiter
        except asyncio.CancelledError:
            if self.owner is me and me is not None:
                self._release()  # handed over, then cancelled: pass it on
            elif entry in self._queue:
                self._queue.remove(entry)
            raise

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._release()

    def _release(self) -> None:
        if self._queue:
            task, waiter = self._queue.popleft()
            self.owner = task
            waiter.set_result(None)
        else:
            self.owner = None


class Connection(Protocol):
    """The socket to the provider, as the session sees it."""

    def send(self, message: Message) -> None:
        """Queue `message` behind every earlier one; never waits."""
        ...

    def on_event(self, callback: Callable[[Message], None]) -> None:
        """Call `callback` with every server event, in the order the server emitted them."""
        ...


class Timer(Protocol):
    async def wait_for(self, waiter: asyncio.Future[T], seconds: float) -> T:
        """Await `waiter`; when time is up cancel it and raise TimeoutError."""
        ...


class WallClock:
    """Production timing, through the running loop."""

    async def wait_for(self, waiter: asyncio.Future[T], seconds: float) -> T:
        return await asyncio.wait_for(waiter, seconds)


class AckTimeout(Exception):
    """A sync's acks did not all come back in time; its ops stay in flight."""


@dataclass
class Sync:
    """One sync waiting for its acks."""

    done: asyncio.Future[None]
    pending: set[AckKey] = field(default_factory=set)


class CallbackSession:
    """Mirrors the provider's conversation; `sync` makes it match a requested one."""

    def __init__(
        self,
        connection: Connection,
        *,
        timer: Timer | None = None,
        ack_timeout: float = 5.0,
        history: Iterable[Item] = (),
    ) -> None:
        self._connection = connection
        self._timer: Timer = timer if timer is not None else WallClock()
        self.ack_timeout = ack_timeout
        self._mirror = Conversation(history)
        self.gate = Gate()
        #: Which sync waits for each ack (at most one: syncs take turns at the gate).
        self._expecting: dict[AckKey, Sync] = {}
        #: Each op sent and not yet answered, by op id, to map an error back to its ack.
        self._sent: dict[str, AckKey] = {}
        self._op_ids = itertools.count(1)
        connection.on_event(self.on_event)

    # -- the mirror --------------------------------------------------------------

    @property
    def conversation(self) -> Conversation:
        """A private copy of the acknowledged conversation (a snapshot of the mirror)."""
        return self._mirror.copy()

    def mirror_keys(self) -> tuple[str, ...]:
        return self._mirror.keys()

    def on_event(self, event: Message) -> None:
        """The connection's callback: apply one server event, resolve the ack it answers."""
        kind = event["type"]
        if kind == "item.created":
            item = Item.from_wire(event["item"])
            if item.key not in self._mirror:
                self._mirror.insert_after(item, event["after"])
            self._acked(("create", item.key))
        elif kind == "item.deleted":
            self._mirror.discard(event["key"])
            self._acked(("delete", event["key"]))
        elif kind == "error":
            ack = self._sent.pop(event["op_id"], None)
            log.warning("the server rejected %s: %s", ack, event["message"])
            if ack is not None:
                self._acked(ack, answered=True)  # rejected is answered; the sync goes on

    def _acked(self, ack: AckKey, *, answered: bool = False) -> None:
        """Resolve `ack` for whichever sync waits for it.

        The server answers ops in the order they were sent, so a success answers
        the oldest unanswered op with its key: only that one leaves `_sent`. (An
        op sent again by a later sync keeps its entry, so its own rejection
        still resolves its key.)
        """
        if not answered:
            for op_id, sent in self._sent.items():
                if sent == ack:
                    del self._sent[op_id]
                    break
        sync = self._expecting.pop(ack, None)
        if sync is not None:
            sync.pending.discard(ack)
            if not sync.pending and not sync.done.done():
                sync.done.set_result(None)

    # -- syncing -----------------------------------------------------------------

    async def sync(self, context: Conversation) -> None:
        """Make the server conversation match `context` and wait for every ack.

        `context` is read once the gate is entered. Raises AckTimeout when the
        acks do not all come back in time; the ops stay in flight.
        """
        async with self.gate:
            sync = self._start(context)
            if not sync.pending:
                return
            try:
                await self._timer.wait_for(sync.done, self.ack_timeout)
            except TimeoutError:
                raise AckTimeout(f"{len(sync.pending)} acks missing") from None
            finally:
                self._stop(sync)

    def _start(self, context: Conversation) -> Sync:
        """Diff, send, and expect one ack per op: no await in here."""
        sync = Sync(asyncio.get_running_loop().create_future())
        for kind, key, after in plan(self._mirror.keys(), context.keys()):
            op_id = f"op-{next(self._op_ids)}"
            ack = (kind, key)
            sync.pending.add(ack)
            self._expecting[ack] = sync
            self._sent[op_id] = ack
            if kind == "create":
                message = {
                    "type": "item.create",
                    "op_id": op_id,
                    "item": context.get(key).to_wire(),
                    "after": after,
                }
            else:
                message = {"type": "item.delete", "op_id": op_id, "key": key}
            self._connection.send(message)
        return sync

    def _stop(self, sync: Sync) -> None:
        """The sync is over (acked, timed out or cancelled): stop expecting its acks."""
        for ack in sync.pending:
            if self._expecting.get(ack) is sync:
                del self._expecting[ack]
        if not sync.done.done():
            sync.done.cancel()
