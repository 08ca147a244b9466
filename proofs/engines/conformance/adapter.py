"""The adapter protocol: how the harness drives and reads an implementation.

A team porting the fix writes one `Adapter` for its own code; everything else
(lockstep, exhaustive, replay, Hypothesis, scheduler mode) is reused. The
harness calls every method with its controlled loop running, and between two
calls runs that loop until every task is blocked.

Stimuli are the model's moves that come from outside the running tasks: a site
call, the application's copy, and each decision of the environment. What an
adapter reports is raw (`Observation`): which task holds a lock, what a push's
request object holds, what the fake server saw. Turning that into a model state
is the harness's job, in one place (`proofs.engines.conformance.abstraction`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from attrs import frozen

from model import Config, Event, OpKind, Pc


@frozen
class OpView:
    """An op sent by task `task`: in flight, or outstanding in a three-way session."""

    kind: OpKind
    item: str
    #: For a create: the item it goes after (None: the head).
    after: str | None
    task: int | None


#: An event the server emitted that the client has not applied yet: the model's
#: own `Event` (kind, item, the item it went after, the kind of op a rejection
#: answers, the task whose op it answers), which needs no translation.
EventView = Event


@frozen
class LockView:
    """An asyncio.Lock as asyncio holds it.

    `holder` is the task that acquired it (None after a release); `waiting` the
    tasks blocked in acquire, first first. Right after a release asyncio has
    already handed the lock to the first waiter, which has not run yet: holder
    None with a non-empty `waiting`.
    """

    holder: int | None = None
    waiting: tuple[int, ...] = ()


@frozen
class TaskView:
    """One call of a site (one model task)."""

    phase: Pc
    #: The application's copy of the local context (caller-copy sites).
    copy: tuple[str, ...] | None = None
    #: What the push's request object holds now (None: it has none yet).
    request: tuple[str, ...] | None = None
    #: Whether that object is the live local context object.
    request_is_live: bool = False
    #: The ids the session read when it diffed (None: it has not diffed).
    read: tuple[str, ...] | None = None
    #: Whether the object it read then was the live local context.
    bound_at_read: bool = False
    #: The ids the request was taken from.
    base: frozenset[str] = frozenset()
    #: The acks the push still waits for.
    pending: frozenset[tuple[OpKind, str]] = frozenset()


@frozen
class Observation:
    """Everything the harness reads from an implementation at one moment."""

    server: tuple[str, ...]
    mirror: tuple[str, ...]
    local: tuple[str, ...]
    to_server: tuple[OpView, ...]
    to_client: tuple[EventView, ...]
    activity_lock: LockView
    provider_lock: LockView
    tasks: tuple[TaskView, ...]
    #: How many items the model created server-side.
    created: int
    #: Server-created items the local context has learned.
    learned: frozenset[str]
    #: Ops a three-way session has sent and not seen answered, in send order.
    outstanding: tuple[OpView, ...] = ()
    #: Items whose deletion a three-way session has seen acknowledged.
    gone: frozenset[str] = frozenset()
    # -- what the fake server observed -------------------------------------------
    #: Items the client has seen acknowledged.
    acked: frozenset[str] = frozenset()
    #: Items that have ever been on the server.
    reached: frozenset[str] = frozenset()
    #: Items a delete removed from the server.
    removed: frozenset[str] = frozenset()
    #: Every delete sent: (task, item, whether the client had seen the item acknowledged).
    deletes_sent: frozenset[tuple[int, str, bool]] = frozenset()
    #: Items whose create the server refused because the item it was to follow
    #: had been deleted from the server.
    refused: frozenset[str] = frozenset()
    #: Creates the server applied for an item a delete had removed: (task, item).
    recreated: frozenset[tuple[int, str]] = frozenset()


class Adapter(Protocol):
    """One run of an implementation for one model `Config` (built by an `AdapterFactory`)."""

    # -- the application and the push sites -----------------------------------------
    def copy(self, task: int) -> None:
        """The application copies the local context for call `task` (a caller-copy site)."""
        ...

    def call(self, task: int) -> None:
        """Start call `task` of the scenario as an asyncio task."""
        ...

    # -- the environment ------------------------------------------------------------
    def server_apply(self) -> None:
        """The server applies the next op in flight (answering with an error if it must)."""
        ...

    def server_reject(self) -> None:
        """The server rejects the next op in flight."""
        ...

    def client_apply(self) -> None:
        """The next event in flight reaches the client."""
        ...

    def model_creates(self, item: str) -> None:
        """The model creates `item` server-side, at the tail."""
        ...

    def learn(self, item: str) -> None:
        """The local context learns the server-created `item`."""
        ...

    def timeout(self, task: int) -> None:
        """The ack wait of call `task` times out."""
        ...

    # -- reading --------------------------------------------------------------------
    def observe(self) -> Observation: ...

    def errors(self) -> list[str]:
        """Unexpected exceptions raised by the implementation's tasks so far."""
        ...

    def close(self) -> None: ...


#: Builds an adapter for a config; called with the harness's loop running.
AdapterFactory = Callable[[Config], Adapter]
