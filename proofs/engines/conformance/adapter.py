"""The adapter protocol, in two parts: the framework's and the environment's.

A team porting the fix writes one `Framework` for its own code: start a site
call, the application's copy, the local context learning a server-created
item, and observing its side (`FrameworkView`). The environment (the server,
both FIFOs, ack timeouts) is the shared stand-in (`standin.StandIn`) every
framework reuses through a small wire bridge, and it observes the server's side
(`ServerView`). `composition.compose` joins the two into the `Adapter` the engines
drive (lockstep, exhaustive, replay, Hypothesis, scheduler mode); an adapter
that observes its own way (livekit's) may implement `Adapter` whole over the
stand-in.

The harness calls every method with its controlled loop running, and between
two calls runs that loop until every task is blocked. What an adapter reports
is raw (`Observation`): which task holds a lock, what a push's request object
holds, what the server saw. Turning that into a model state is the harness's
job, in one place (`proofs.engines.conformance.abstraction`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from attrs import frozen

from model import Config, Event, OpKind, Pc

if TYPE_CHECKING:
    from proofs.engines.conformance.standin import StandIn


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
    #: Items a create was sent for, or that were on the server (the start, the
    #: model's); None when the adapter does not record it (invariant 2's clause
    #: for items never sent is then not checked on its side).
    sent: frozenset[str] | None = None
    # -- the connection (an adapter that drives no reconnect keeps the defaults) ------
    #: Items a delete had removed that a reconnect's rebuild put back on the server.
    rebuilt: frozenset[str] = frozenset()
    #: Whether a server session is active.
    connected: bool = True
    #: The request the session keeps back while no server session is active.
    kept: tuple[str, ...] | None = None


@frozen
class ServerView:
    """The server's half of an `Observation`, as the shared stand-in records it."""

    server: tuple[str, ...]
    to_server: tuple[OpView, ...]
    to_client: tuple[EventView, ...]
    created: int
    acked: frozenset[str]
    reached: frozenset[str]
    removed: frozenset[str]
    deletes_sent: frozenset[tuple[int, str, bool]]
    refused: frozenset[str]
    recreated: frozenset[tuple[int, str]]
    #: Items a create was sent for, or that were on the server (start, model).
    sent: frozenset[str] | None = None
    #: Items a delete had removed that a reconnect's rebuild put back.
    rebuilt: frozenset[str] = frozenset()


@frozen
class FrameworkView:
    """The framework's half of an `Observation`: what only its own code knows."""

    mirror: tuple[str, ...]
    local: tuple[str, ...]
    activity_lock: LockView
    provider_lock: LockView
    tasks: tuple[TaskView, ...]
    learned: frozenset[str]
    outstanding: tuple[OpView, ...] = ()
    gone: frozenset[str] = frozenset()
    #: Whether a server session is active (a framework that drives no reconnect: True).
    connected: bool = True
    #: The request the session keeps back while no server session is active.
    kept: tuple[str, ...] | None = None


class Reconnecting(Protocol):
    """What a framework (or an adapter) that drives the `reconnects` option adds: the
    connection drops (every op and event in flight is lost, `StandIn.drop`) and comes
    back (the session opens a new server session, which starts empty:
    `StandIn.rebuild`)."""

    def disconnect(self) -> None: ...

    def connect(self) -> None: ...


class Framework(Protocol):
    """What a team writes for its framework (built by a `FrameworkFactory`).

    It builds its code over `server` (a `StandIn` with the framework's own wire
    bridge) and names what it sees in the model's words.
    """

    @property
    def server(self) -> StandIn:
        """The shared stand-in the framework's session talks to."""
        ...

    def call(self, task: int) -> None:
        """Start call `task` of the scenario as an asyncio task."""
        ...

    def copy(self, task: int) -> None:
        """The application copies the local context for call `task` (a caller-copy site)."""
        ...

    def learn(self, item: str) -> None:
        """The local context learns the server-created `item` (a model id)."""
        ...

    def server_item(self, item: str) -> tuple[str, object]:
        """The wire id and payload of the item the model creates as `item`."""
        ...

    def name(self, wire_id: str) -> str | None:
        """The model's id for a wire id (None: an item outside the scenario, left out)."""
        ...

    def who(self, origin: object) -> int | None:
        """The call whose task sent an op (None: not a site call's, left out)."""
        ...

    def origin(self, task: int) -> object:
        """The asyncio task whose ack wait a timeout of call `task` fires."""
        ...

    def observe(self) -> FrameworkView: ...

    def errors(self) -> list[str]:
        """Unexpected exceptions raised by the framework's tasks so far."""
        ...

    def close(self) -> None: ...


#: Builds a framework for a config; called with the harness's loop running.
FrameworkFactory = Callable[[Config], Framework]


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
