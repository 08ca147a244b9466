"""The model's state: immutable, hashable, and nothing but data.

One `State` is everything the system is between two model steps: the three
views of the conversation, the two FIFOs of one websocket, both locks, every
push task, and ghost state the invariants read.
"""

from __future__ import annotations

import enum
from operator import attrgetter
from typing import Any, TypeVar, cast

import attrs
from attrs import frozen

_T = TypeVar("_T")


class OpKind(enum.Enum):
    """What an op asks of the server; the session acks by kind and item id."""

    CREATE = "create"
    DELETE = "delete"
    #: Cancel the response under way (`InterruptionEnd.ON_DONE_EVENT`): no item; its
    #: `Op.item` is `RESPONSE`, and the server answers it with a `DONE` event.
    CANCEL = "cancel"


#: The item word of a cancel op and of its done event: they name the response, not
#: an item, so no diff, mirror or invariant ever reads it.
RESPONSE = "response"


#: The sender of a reconnect's rebuild creates (and the holder of the session lock
#: while a rebuild holds it): the session itself, no push task.
REBUILD = -1


class Dropped(enum.Enum):
    """`State.connected` in the drop window (`SessionShape.drop_window`): the
    connection is gone and the session still treats it as active. Falsy, as
    `False` is, for everything that asks whether the server can be reached."""

    UNNOTICED = "unnoticed"

    def __bool__(self) -> bool:
        """No server can be reached: as `False`, so `if state.connected` reads right."""
        return False


@frozen
class Op:
    """An op in flight from the client to the server."""

    kind: OpKind
    item: str
    #: For a create: the item it goes after (None: at the head).
    after: str | None
    #: The task that sent it (`REBUILD`: a reconnect's rebuild).
    task: int

    @property
    def key(self) -> tuple[OpKind, str]:
        """What an ack answers: the session resolves acks by kind and item id."""
        return (self.kind, self.item)


class EventKind(enum.Enum):
    """What the server answers: the mirror changes only on these."""

    ADDED = "added"
    DELETED = "deleted"
    REJECTED = "rejected"
    #: The server ended the response a cancel op asked it to end (`response.done`).
    DONE = "done"


@frozen
class Event:
    """An event in flight from the server to the client."""

    kind: EventKind
    item: str
    #: For ADDED: the item it was placed after on the server.
    after: str | None = None
    #: For REJECTED: the kind of op rejected.
    op: OpKind | None = None
    #: The task whose op this answers; None for an item the model created.
    task: int | None = None
    #: For REJECTED: the server refused a create because it holds the item already.
    duplicate: bool = False


class Pc(enum.Enum):
    """Where a push task is; each waiting value is one real await."""

    IDLE = "idle"
    #: The application holds its copy of the local context (replacement only).
    COPIED = "copied"
    WAIT_ACTIVITY = "wait-activity-lock"
    WAIT_PROVIDER = "wait-provider-lock"
    WAIT_ACKS = "wait-acks"
    #: Sent, and awaiting the send itself (a session whose append awaits and that
    #: sets its mirror when it returns).
    WAIT_SEND = "wait-send"
    DONE = "done"
    #: The push ended with an error: its ack wait timed out.
    FAILED = "failed"
    #: Interrupted, it sent a cancel op and awaits the done event that answers it
    #: before its push (`InterruptionEnd.ON_DONE_EVENT`).
    WAIT_DONE = "wait-done"
    #: Its done event has reached the session: the generation has ended, and the
    #: task runs on to its push by itself.
    ENDED = "ended"


RUNNING: frozenset[Pc] = frozenset(
    {
        Pc.COPIED,
        Pc.WAIT_ACTIVITY,
        Pc.WAIT_PROVIDER,
        Pc.WAIT_ACKS,
        Pc.WAIT_SEND,
        Pc.WAIT_DONE,
        Pc.ENDED,
    }
)


@frozen
class Lock:
    """An asyncio.Lock: an owner and the FIFO of tasks waiting for it.

    Releasing hands the lock to the first waiter at once; a task that asks later
    queues behind it even though the waiter has not run yet, as asyncio does.
    """

    owner: int | None = None
    waiters: tuple[int, ...] = ()

    def free(self) -> bool:
        """Nobody holds it and nobody waits: taking it does not yield."""
        return self.owner is None and not self.waiters

    def take(self, task: int) -> Lock:
        """`task` holds it if it is free, else queues behind the waiters."""
        return Lock(task, self.waiters) if self.free() else Lock(self.owner, (*self.waiters, task))

    def release(self) -> Lock:
        """Hand it to the first waiter at once, as asyncio.Lock does."""
        if not self.waiters:
            return Lock()
        return Lock(self.waiters[0], self.waiters[1:])


@frozen(cache_hash=True)
class Task:
    """One push in progress: a call of a site and its local data."""

    pc: Pc = Pc.IDLE
    #: The application's copy of the local context (caller-copy sites).
    copy: tuple[str, ...] | None = None
    #: The requested context once it is fixed; None while it is the live local
    #: context object, whose contents the provider reads when it diffs.
    request: tuple[str, ...] | None = None
    bound_to_local: bool = False
    #: The ids the caller's copy was taken from (three-way sessions).
    base: frozenset[str] = frozenset()
    #: Acks the task waits for, by (kind, item).
    pending: frozenset[tuple[OpKind, str]] = frozenset()
    #: The ops it sent, kept only where a reconnect re-sends those still awaited.
    ops: tuple[Op, ...] = ()
    #: Function outputs of its call the session dropped (their function call was
    #: not in the mirror), under `OrphanOutputs.DROPPED`.
    dropped: frozenset[str] = frozenset()
    #: Ghost, for invariant 6: the acks (kind, item) whose answer reached the session
    #: while this push went on waiting for them; kept after the push ends.
    stalled: frozenset[tuple[OpKind, str]] = frozenset()


@frozen(cache_hash=True)
class State:
    """Everything between two model steps; frozen and hashable so the explorer can
    keep a set of states and z3 can be checked against each one."""

    server: tuple[str, ...]
    mirror: tuple[str, ...]
    local: tuple[str, ...]
    to_server: tuple[Op, ...] = ()
    to_client: tuple[Event, ...] = ()
    activity_lock: Lock = Lock()
    provider_lock: Lock = Lock()
    tasks: tuple[Task, ...] = ()
    #: How many items of the scenario's server pool the model has created.
    created: int = 0
    #: Server-created items the local context has learned.
    learned: frozenset[str] = frozenset()
    #: Ops sent and not yet answered, kept by the session (three-way only): the
    #: expected view is the mirror with these applied.
    outstanding: tuple[Op, ...] = ()
    #: Items whose deletion the client has seen acknowledged (three-way only).
    gone: frozenset[str] = frozenset()
    #: Whether a server session is active (false only between a drop and the
    #: reconnect, under the `reconnects` option; `Dropped.UNNOTICED` in the drop
    #: window, before the session gives the dead connection up).
    connected: bool | Dropped = True
    #: A request kept back while no server session is active (kept-back shapes).
    kept: tuple[str, ...] | None = None
    #: The creation order of every item created since the oldest one still to enter
    #: the local context (empty when none is): where a late entry goes
    #: (`model.local_order`). An item outside it is older than every item in it.
    born: tuple[str, ...] = ()
    # -- ghost state, read only by the invariants --
    #: Items the client has seen acknowledged (in the mirror at the start or added by an event).
    acked: frozenset[str] = frozenset()
    #: Items that have ever been on the server.
    reached: frozenset[str] = frozenset()
    #: Items a delete removed from the server.
    removed: frozenset[str] = frozenset()
    #: Every delete sent: (task, item, whether the item was acknowledged then).
    deletes_sent: frozenset[tuple[int, str, bool]] = frozenset()
    #: Items whose create the server refused because the item it was to go after
    #: had been deleted from the server: pushed, yet never to arrive.
    refused: frozenset[str] = frozenset()
    #: Creates the server applied for an item it had removed before: (task, item).
    recreated: frozenset[tuple[int, str]] = frozenset()
    #: Items a create was ever sent for, or that were on the server (initially, by
    #: the model, by a rebuild): an item of the local context outside it was never sent.
    sent: frozenset[str] = frozenset()
    #: Items a delete had removed that a reconnect's rebuild put back on the server.
    rebuilt: frozenset[str] = frozenset()

    def with_task(self, index: int, **changes: Any) -> State:
        """This state with the fields of task `index` changed and every other task kept."""
        tasks = list(self.tasks)
        tasks[index] = evolve(tasks[index], **changes)
        return evolve(self, tasks=tuple(tasks))

    def at_rest(self) -> bool:
        """Nothing in flight: no op, no event, no push under way, no request kept
        back, and a server session active."""
        return (
            self.connected is True
            and self.kept is None
            and not self.to_server
            and not self.to_client
            and all(task.pc not in RUNNING for task in self.tasks)
        )


#: Per class: a getter of every field at once, and each field's position.
_LAYOUTS: dict[type, tuple[attrgetter[Any], dict[str, int]] | None] = {}


def evolve(inst: _T, **changes: Any) -> _T:
    """`attrs.evolve`, with each class's fields read once: the explorer runs it on every
    successor, and reading the field list each time took a third of the readable
    model's step. A class whose fields are not all plain positional ones goes to
    `attrs.evolve` itself."""
    cls = type(inst)
    if cls not in _LAYOUTS:
        _LAYOUTS[cls] = _layout(cls)
    layout = _LAYOUTS[cls]
    if layout is None:
        return _attrs_evolve(inst, **changes)
    getter, index = layout
    values = list(getter(inst))
    try:
        for name, value in changes.items():
            values[index[name]] = value
    except KeyError:
        return _attrs_evolve(inst, **changes)  # which names the unknown field
    return cls(*values)


def _attrs_evolve(inst: _T, **changes: Any) -> _T:
    same: Any = inst
    return cast(_T, attrs.evolve(same, **changes))


def _layout(cls: type) -> tuple[attrgetter[Any], dict[str, int]] | None:
    fields = attrs.fields(cls)
    # (one field: the getter would give the value itself, not a tuple of one)
    if len(fields) < 2 or any(not f.init or f.kw_only or f.alias != f.name for f in fields):
        return None
    return attrgetter(*(f.name for f in fields)), {f.name: i for i, f in enumerate(fields)}


def tombstones(state: State) -> frozenset[str]:
    """Items deleted on purpose: acknowledged deletions and deletes still in flight."""
    return state.gone | {op.item for op in state.outstanding if op.kind is OpKind.DELETE}


def expected_view(mirror: tuple[str, ...], outstanding: tuple[Op, ...]) -> tuple[str, ...]:
    """The mirror with every outstanding op applied, in the order they were sent."""
    view = list(mirror)
    for op in outstanding:
        if op.kind is OpKind.DELETE:
            if op.item in view:
                view.remove(op.item)
        elif op.item not in view:
            view.insert(_position_after(view, op.after), op.item)
    return tuple(view)


def _position_after(view: list[str], after: str | None) -> int:
    if after is None:
        return 0
    if after in view:
        return view.index(after) + 1
    return len(view)


def insert_after(items: tuple[str, ...], item: str, after: str | None) -> tuple[str, ...]:
    """Insert as the mirror does: after `after`, at the head for None, else at the tail."""
    view = list(items)
    view.insert(_position_after(view, after), item)
    return tuple(view)
