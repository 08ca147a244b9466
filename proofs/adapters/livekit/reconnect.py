"""The model's reconnect moves over the real OpenAI plugin and the gated socket.

The engines' harness has no connection to drop (`lockstep.STIMULUS_HANDLERS`
refuses `disconnect` and `connect`), so this module gives them to the plugin
adapter itself:

* disconnect: the gated server closes the socket (`GatedConnection.drop`, code
  1011); the plugin's receive loop fails, and its `_main_task` sleeps before the
  retry. Whatever was in either FIFO of the old connection is lost with it.
* connect: the retry's sleep (the only timer the session's main task has armed
  then) fires; the plugin opens a new websocket, a new and empty server
  conversation, and sends its rebuild. Session traffic goes through the gate as
  usual; the rebuild's item creates wait at the gate like any push's, so the
  model's next `server-apply` moves deliver them one at a time.

The model is not followed along across a reconnect (the abstraction reads one
connection's conversation), so a run here is judged on what it ends with:
`ReconnectOutcome` reads every connection the session ever had. An item is lost
when the local context holds it, it reached some server conversation, and the
last one lacks it; a delete is unintended when it names an item that was
acknowledged on its connection and that the call did not mean to remove.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import attrs
from attrs import frozen

from model import (
    SHAPES_BY_NAME,
    VARIANTS_BY_NAME,
    Config,
    DropWindow,
    Environment,
    Invariant,
    Move,
    MoveKind,
    Pc,
    State,
    initial_state,
    step,
    successors,
)
from model.scenarios import Scenario
from model.sites import COPY_INSERTS
from proofs.adapters.livekit.plugin import PluginAdapter, PluginFollow
from proofs.adapters.livekit.replay import give_until_stuck, quiet_close

__all__ = [
    "ReconnectAdapter",
    "ReconnectOutcome",
    "released_reconnect",
    "run_reconnects",
    "settled",
    "shortest_with_drops",
    "undriven",
    "window_moves",
]

log = logging.getLogger("ackguard.livekit.reconnect")


class ReconnectAdapter(PluginAdapter):
    """The plugin adapter with a connection the harness can drop and bring back."""

    #: The client transport closed by a drop whose loss the session has not been
    #: told yet (the drop window is open), if any.
    _dead: Any = None

    def disconnect(self) -> None:
        if self._dead is not None:
            self._notice_loss()
            return
        if self.config.shape.drop_window is not DropWindow.NONE:
            self._close_transport()
            return
        conn = self.conn
        self._start(conn.drop())

    def _client_transport(self) -> Any:
        """The asyncio transport under the session's current websocket: `ws_conn`, a
        local of the plugin's `_run_ws`, read off the main task's await chain."""
        frame_of: Any = self.rt._main_atask.get_coro()
        while frame_of is not None:
            frame = getattr(frame_of, "cr_frame", None)
            if frame is not None and "ws_conn" in frame.f_locals:
                return frame.f_locals["ws_conn"]._writer.transport
            frame_of = getattr(frame_of, "cr_await", None)
        raise LookupError("the session has no websocket to drop")

    def _close_transport(self) -> None:
        """The drop as the selector loop meets a reset socket (`_force_close`): the
        transport is closing, so every later write fails, and it stops reading. The
        call that tells the protocol (and so the plugin's receive task) is held back
        until the second `disconnect`: that is the drop window."""
        transport = self._client_transport()
        transport._closing = True
        self.loop._remove_reader(transport._sock_fd)
        self._dead = transport

    def _notice_loss(self) -> None:
        """The held-back half of the drop: the protocol learns the connection is lost;
        the receive task fails and `_run_ws` cancels the old send task."""
        transport, self._dead = self._dead, None
        transport._conn_lost += 1
        self.loop.call_soon(
            transport._call_connection_lost, ConnectionResetError("dropped by the harness")
        )

    def connect(self) -> None:
        count = len(self.gated.connections)
        main = self.rt._main_atask
        delays = self.loop.armed(main)
        if not delays:
            raise LookupError("the session's main task is not waiting to reconnect")
        self.loop.fire(main, min(delays))
        self.loop.run_until(lambda: len(self.gated.connections) > count)
        # the rebuild is sent in the reconnect's own step: wait until it is read
        self.loop.run_until_blocked()
        # the model's connect puts the replay on the new, empty server at once (it
        # heads the FIFO and nothing refuses it there): apply it, events held back
        while self.conn.to_server and self._rebuild_op(self.conn.to_server[0]):
            self.conn.apply_next()
            self.loop.run_until_blocked()

    def _rebuild_op(self, event: dict[str, Any]) -> bool:
        """An item create the session's own rebuild sent (no push task diffed it)."""
        if event.get("type") != "conversation.item.create":
            return False
        op = self.rt.sent.get(str(event.get("event_id")))
        return op is not None and self._who(op.origin) is None

    def connections(self) -> tuple[Any, ...]:
        """Every connection the session opened, the first one first."""
        return tuple(self.gated.connections)

    def learn_names_of(self, conn: Any) -> None:
        """Name the scenario items of an old connection's conversation too."""
        for item in conn.conversation.items:
            self._learn_json(item)


@frozen
class ReconnectOutcome:
    """What the real plugin did with one stimulus sequence, across every connection."""

    config: Config
    stimuli: tuple[str, ...]
    #: Scenario items the local context holds that reached a server and are gone.
    lost: tuple[str, ...]
    #: Scenario items a push deleted while acknowledged, not meaning to remove them.
    unintended: tuple[str, ...]
    #: Scenario items a delete removed from a server that are on the last one again.
    recreated: tuple[str, ...]
    #: How many websockets the session opened.
    connections: int
    #: A stimulus the real code could not take, if any.
    stuck: str | None
    #: The local context, the mirror and the last server conversation at the end.
    local: tuple[str, ...]
    mirror: tuple[str, ...]
    server: tuple[str, ...]

    @property
    def broken(self) -> frozenset[Invariant]:
        broken = set()
        if self.unintended:
            broken.add(Invariant.NO_UNINTENDED_DELETE)
        if self.lost or self.recreated:
            broken.add(Invariant.AGREEMENT_AT_REST)
        return frozenset(broken)


class _Follow(PluginFollow):
    """`Follow` over the reconnecting adapter: the two network moves go to the
    adapter; the model is followed up to the first of them only."""

    def give(self, move: Move) -> None:
        if move.kind not in (MoveKind.DISCONNECT, MoveKind.CONNECT):
            super().give(move)
            return
        self.stimuli.append(move.label())
        adapter: ReconnectAdapter = self.adapter  # type: ignore[assignment]
        with self.loop.running():
            if move.kind is MoveKind.DISCONNECT:
                adapter.disconnect()
        if move.kind is MoveKind.CONNECT:
            adapter.connect()
        self.loop.run_until_blocked()
        if self.divergence is None:
            self._diverge(move.label(), "not followed across a reconnect")


def _outcome(session: _Follow, stuck: str | None) -> ReconnectOutcome:
    adapter: ReconnectAdapter = session.adapter  # type: ignore[assignment]
    observation = adapter.observe()
    names = adapter.names
    reached: set[str] = set()
    removed: set[str] = set()
    unintended: list[str] = []
    for conn in adapter.connections():
        adapter.learn_names_of(conn)
        reached |= {names[i] for i in conn.conversation.reached if i in names}
        removed |= {names[i] for i in conn.conversation.removed if i in names}
        for delete in conn.deletes:
            op = adapter.rt.sent.get(str(delete.event_id))
            item = names.get(delete.item_id)
            if op is None or item is None or not delete.acked:
                continue
            task = adapter._who(op.origin)
            if task is None or item not in session.config.call(task).drops:
                unintended.append(item)
    server = observation.server
    lost = tuple(item for item in observation.local if item in reached and item not in server)
    return ReconnectOutcome(
        config=session.config,
        stimuli=tuple(session.stimuli),
        lost=lost,
        unintended=tuple(dict.fromkeys(unintended)),
        recreated=tuple(item for item in server if item in removed),
        connections=len(adapter.connections()),
        stuck=stuck,
        local=observation.local,
        mirror=observation.mirror,
        server=server,
    )


def run_reconnects(
    config: Config, stimuli: Iterable[Move], *, drain: bool = True
) -> ReconnectOutcome:
    """Give the real plugin `stimuli`, reconnect moves included, then drain."""
    session = _Follow(config, ReconnectAdapter)
    try:
        stuck = give_until_stuck(session, stimuli)
        if drain:
            session.drain(session.adapter.in_flight)
        return _outcome(session, stuck)
    finally:
        quiet_close(session)


def shortest_with_drops(
    config: Config, invariant: Invariant, drops: int = 1, limit: int = 200_000
) -> tuple[Move, ...] | None:
    """The model's shortest run that breaks `invariant` with exactly `drops` dropped
    connections, each brought back (breadth first on the readable model).

    The explorer's shortest counterexample under `reconnects` may be another
    mechanism (two drops in a row lose the whole conversation); this finds the one a
    single drop causes, to replay it against the plugin too.
    """
    from collections import deque

    from model import check

    start = initial_state(config)
    seen = {(start, 0)}
    queue: deque[tuple[Any, int, tuple[Move, ...]]] = deque([(start, 0, ())])
    while queue:
        state, used, moves = queue.popleft()
        if used == drops and state.connected and check(state, config, invariant) is not None:
            return moves
        for move, after in successors(state, config):
            # a drop is the disconnect from a live connection; the one that ends a
            # drop window is part of the same drop
            count = used + (move.kind is MoveKind.DISCONNECT and state.connected is True)
            if count > drops or (after, count) in seen:
                continue
            if len(seen) >= limit:
                return None
            seen.add((after, count))
            queue.append((after, count, (*moves, move)))
    return None


#: The moves a replay's drain lets happen, first enabled first: the tasks' own steps,
#: then the next op, then the next event (no call, timeout or drop).
SETTLING = (MoveKind.WAKE, MoveKind.RESUME, MoveKind.SERVER_APPLY, MoveKind.CLIENT_APPLY)


def settled(state: State, config: Config) -> State:
    """The model's state once `run_reconnects`' drain is done with it.

    The drain releases one op (else one event) at a time and runs the loop until
    every task is blocked between two releases, so a task that can step does so
    before the next delivery: an interrupted generation's push, for one, runs as soon
    as the reconnect ends the generation, before any of the rebuild's added events
    reaches the mirror.
    """
    while True:
        moves: dict[MoveKind, State] = {}
        for move, after in successors(state, config):
            moves.setdefault(move.kind, after)
        kind = next((kind for kind in SETTLING if kind in moves), None)
        if kind is None:
            return state
        state = moves[kind]


def window_moves(config: Config) -> tuple[Move, ...] | None:
    """The scenario's first call made inside OpenAI's drop window:
    `disconnect; call; disconnect; connect` (None when no call can start there)."""
    state = step(initial_state(config), config, Move(MoveKind.DISCONNECT))
    calls = [move for move, _ in successors(state, config) if move.kind is MoveKind.CALL]
    if not calls:
        return None
    return (Move(MoveKind.DISCONNECT), calls[0], Move(MoveKind.DISCONNECT), Move(MoveKind.CONNECT))


def released_reconnect(variant: str, scenario: Scenario, environment: Environment) -> Config:
    """The release's model with its reconnect: `openai-reconnect` with the facts of
    the release's session (`check.release_shape`), over the release's site records
    (`check.release_sites`: the speech turn, tool outputs after their calls, a cleanup
    that leaves the local context alone)."""
    from proofs.adapters.livekit.check import release_shape, release_sites

    released = release_shape(variant)
    shape = attrs.evolve(
        SHAPES_BY_NAME["openai-reconnect"],
        remote_item_added=released.remote_item_added,
        local_tail=released.local_tail,
        interruption_end=released.interruption_end,
        drop_window=released.drop_window,
        completion_channel=released.completion_channel,
    )
    return Config(
        VARIANTS_BY_NAME[variant],
        scenario,
        environment,
        release_sites(),
        shape=shape,
        local_orders=COPY_INSERTS,
    )


def undriven(config: Config, moves: Iterable[Move]) -> str | None:
    """Why the replay cannot give the real plugin `moves` in their order, or None.

    A generation ended by a done event or by a reconnect lets its push run in the
    same loop turn (the real task is ready, and the harness runs the loop until every
    task is blocked), so a trace that puts any other move between the end and that
    push's `wake` is one the real code never takes: it runs the push first. (A trace
    that ends there is drivable: the drain runs the push after it.)
    """
    state = initial_state(config)
    moves = tuple(moves)
    for position, move in enumerate(moves):
        state = step(state, config, move)
        ended = [index for index, task in enumerate(state.tasks) if task.pc is Pc.ENDED]
        following = moves[position + 1] if position + 1 < len(moves) else None
        for index in ended:
            if following is not None and (following.kind, following.task) != (
                MoveKind.WAKE,
                index,
            ):
                return (
                    f"the real T{index} pushes as its generation ends ({move.label()}),"
                    f" before {following.label()}"
                )
    return None
