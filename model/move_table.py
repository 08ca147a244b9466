"""The model's moves as one table: who makes each, what it names, which FIFO it
uses, and which environment option enables it.

Every place that dispatches over move kinds (the successor function, the
conformance harness, the Hypothesis machines, the trace renderers, the z3
encoding) reads this table or keeps a handler per kind that a test checks
against it, so a new move is one row here plus one handler in each of those
places, and a forgotten handler fails a test instead of falling through.
"""

from __future__ import annotations

import enum

from attrs import frozen


class MoveKind(enum.Enum):
    """What a move does; `MOVES` says who makes it and what it names."""

    # moves of the push tasks and of the application
    COPY = "copy"
    BEFORE_CALL = "before-call"
    CALL = "call"
    WAKE = "wake"
    RESUME = "resume"
    # moves of the environment
    SERVER_APPLY = "server-apply"
    SERVER_REJECT = "server-reject"
    CLIENT_APPLY = "client-apply"
    MODEL_CREATES = "model-creates"
    LEARN = "learn"
    TIMEOUT = "timeout"
    DISCONNECT = "disconnect"
    CONNECT = "connect"
    MODEL_ANCHORS_ON_DELETED = "model-anchors-on-deleted"


class Actor(enum.Enum):
    """Who makes a move."""

    #: The application (its copy of the local context, its call of a site).
    APPLICATION = "application"
    #: A running push task, on its own once it can go on (after a lock handoff or
    #: its last ack): nobody outside starts it.
    TASK = "task"
    #: The provider's server, applying or refusing the next op.
    SERVER = "server"
    #: The provider session, applying the next server event to its mirror.
    CLIENT = "client"
    #: The model behind the server, creating an item of its own.
    MODEL = "model"
    #: The agent's local context, learning an item the model created.
    AGENT = "agent"
    #: The clock: an ack wait runs out.
    CLOCK = "clock"
    #: The connection between session and server: it drops and comes back.
    NETWORK = "network"


class Channel(enum.Enum):
    """The two FIFOs of one websocket."""

    TO_SERVER = "to-server"
    TO_CLIENT = "to-client"


@frozen
class MoveSpec:
    """One row of the table."""

    kind: MoveKind
    actor: Actor
    #: Whether a move of this kind names a push task (`Move.task`); for the server
    #: and client moves that is the task whose op it answers (None for the model's
    #: own items).
    names_task: bool
    #: Whether it names an item (`Move.item`).
    names_item: bool
    #: The FIFO whose head it takes, if any.
    takes: Channel | None = None
    #: The FIFO it appends to, if any (a task's call or wake may send ops).
    gives: Channel | None = None
    #: The environment option that enables it (None: always possible).
    option: str | None = None
    summary: str = ""

    @property
    def internal(self) -> bool:
        """Made by a running task on its own: the harness never gives it."""
        return self.actor is Actor.TASK

    @property
    def identified_by(self) -> str:
        """What tells two enabled moves of this kind apart: 'task', 'item' or 'none'.

        The server and client moves name a task and an item, but only one of each
        can be enabled at a time (the head of their FIFO); a cancel op and its done
        event (`OpKind.CANCEL`, `EventKind.DONE`) travel in those FIFOs too and are
        delivered by the same moves, named by their task and the word `response`.
        The model's next item names its item too, but the state fixes which one (the
        pool's next), so it is one move as well.
        """
        if self.takes is not None:
            return "none"
        if self.names_task:
            return "task"
        if self.gives is not None:
            return "none"
        if self.names_item:
            return "item"
        return "none"


MOVES: dict[MoveKind, MoveSpec] = {
    spec.kind: spec
    for spec in (
        MoveSpec(
            MoveKind.COPY,
            Actor.APPLICATION,
            names_task=True,
            names_item=False,
            option="stale-copies",
            summary="the application copies the local context for a later replacement",
        ),
        MoveSpec(
            MoveKind.BEFORE_CALL,
            Actor.APPLICATION,
            names_task=True,
            names_item=False,
            summary="a site's items are created before its call (a tool returns, a playout "
            "starts): it sets their creation time, and so where they enter the local context",
        ),
        MoveSpec(
            MoveKind.CALL,
            Actor.APPLICATION,
            names_task=True,
            names_item=False,
            gives=Channel.TO_SERVER,
            summary="a site is called; with both locks free it diffs and sends at once "
            "(a call that interrupts a generation ending on its done event sends its cancel)",
        ),
        MoveSpec(
            MoveKind.WAKE,
            Actor.TASK,
            names_task=True,
            names_item=False,
            gives=Channel.TO_SERVER,
            summary="a task handed a lock, or whose interrupted generation has ended, runs "
            "on: snapshot, diff, send",
        ),
        MoveSpec(
            MoveKind.RESUME,
            Actor.TASK,
            names_task=True,
            names_item=False,
            summary="a task whose acks are all in returns from its push",
        ),
        MoveSpec(
            MoveKind.SERVER_APPLY,
            Actor.SERVER,
            names_task=True,
            names_item=True,
            takes=Channel.TO_SERVER,
            gives=Channel.TO_CLIENT,
            summary="the server applies the next op (or refuses one it cannot apply); a "
            "cancel ends the response and is answered by a done event",
        ),
        MoveSpec(
            MoveKind.SERVER_REJECT,
            Actor.SERVER,
            names_task=True,
            names_item=True,
            takes=Channel.TO_SERVER,
            gives=Channel.TO_CLIENT,
            option="rejections",
            summary="the server rejects the next item op, whatever it is",
        ),
        MoveSpec(
            MoveKind.CLIENT_APPLY,
            Actor.CLIENT,
            names_task=True,
            names_item=True,
            takes=Channel.TO_CLIENT,
            summary="the session applies the next event to its mirror and resolves its ack; "
            "a done event ends the interrupted generation it answers",
        ),
        MoveSpec(
            MoveKind.MODEL_CREATES,
            Actor.MODEL,
            names_task=False,
            names_item=True,
            gives=Channel.TO_CLIENT,
            option="server-items",
            summary="the model creates the next item of the scenario's pool, at the tail",
        ),
        MoveSpec(
            MoveKind.LEARN,
            Actor.AGENT,
            names_task=False,
            names_item=True,
            option="server-items",
            summary="the local context learns an acknowledged item the model created",
        ),
        MoveSpec(
            MoveKind.TIMEOUT,
            Actor.CLOCK,
            names_task=True,
            names_item=False,
            option="timeouts",
            summary="a push's ack wait times out; it fails and releases its locks",
        ),
        MoveSpec(
            MoveKind.DISCONNECT,
            Actor.NETWORK,
            names_task=False,
            names_item=False,
            option="reconnects",
            summary="the connection drops: every op and event in flight is lost",
        ),
        MoveSpec(
            MoveKind.CONNECT,
            Actor.NETWORK,
            names_task=False,
            names_item=False,
            gives=Channel.TO_SERVER,
            option="reconnects",
            summary="a new server session: the session rebuilds the server conversation "
            "from its mirror (at once, or emptying the mirror to refill it as the rebuild's "
            "events arrive) and re-sends the ops its shape says",
        ),
        MoveSpec(
            MoveKind.MODEL_ANCHORS_ON_DELETED,
            Actor.MODEL,
            names_task=False,
            names_item=True,
            gives=Channel.TO_CLIENT,
            option="stale-anchors",
            summary="the model creates the next item of the scenario's pool at the tail, "
            "announced after an item the server has deleted",
        ),
    )
}


def _check_table() -> None:
    missing = set(MoveKind) - set(MOVES)
    if missing:
        raise ValueError(f"MOVES has no row for {sorted(kind.value for kind in missing)}")


_check_table()

#: Moves that only the running asyncio tasks make: after a lock handoff or the
#: last ack, the task runs on its own; nobody outside starts it.
INTERNAL_MOVES: frozenset[MoveKind] = frozenset(
    kind for kind, spec in MOVES.items() if spec.internal
)
#: Moves the harness gives an implementation from outside: every other kind.
STIMULI: frozenset[MoveKind] = frozenset(MoveKind) - INTERNAL_MOVES
