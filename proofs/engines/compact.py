"""The model's state machine again, on plain tuples of small ints, for the explorer.

`model/` is the spec and stays readable; this is a second encoding of the same
moves, built from the same `Config` data (site records, the variant's `locks` and
`local_update`, `MOVES` options), so that the explorer's hot path has no attrs
`evolve` chains and no nested attrs hashing. Each move copies the state into one
mutable scratch record and freezes it into one tuple. The diffs, the expected
view and the tombstones are `model.moves`' own functions (looked up there at call
time, so a patched model is the model explored), memoized per run.

It is an exact quotient of the readable model: `encode` maps a readable state to
its compact one, dropping only what no later move and no invariant reads (a
finished push's data, `done` against `failed`, a request once diffed, the three-
way base, which never outlives the step that computes it, `deletes_sent` and
each task's `stalled`, kept as one flag each for invariants 1 and 6). A
reconnect's state is three more fields: the connection (up, down, or in the drop
window), the items a rebuild put back, and every task's record of sent ops
(`Task.ops`) as one tuple in task order.
`tests/proofs/test_explore_compact.py` checks that the two graphs are equal under
`encode` over the catalog, and the explorer replays every trace it reports
through the readable model.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar, cast

import model.diff as _diff
import model.local_order as _order
import model.moves as _moves
import model.state as _state
from model import (
    Acks,
    Config,
    Diff,
    Dropped,
    Event,
    EventKind,
    LocalUpdate,
    Lock,
    MirrorUpdate,
    ModelItems,
    Move,
    MoveKind,
    Op,
    OpKind,
    Pc,
    RequestSource,
    Sends,
    SessionLock,
    State,
    Task,
    WhileDisconnected,
    no_unintended_delete,
)
from model.move_table import MOVES, Actor
from model.shapes import (
    CallIds,
    CompletionChannel,
    DropWindow,
    DuplicateRejection,
    OrphanOutputs,
    Rebuilds,
    ReconnectLock,
    ReconnectMirror,
    ReconnectResends,
    RemoteItemAdded,
    UnknownAnchor,
    WindowRebuild,
)
from model.sites import Creation, LocalPosition, SpeechTurn
from model.state import REBUILD

# program counters; `done` and `failed` are one value: no move reads which
IDLE, COPIED, WAIT_ACT, WAIT_PROV, WAIT_ACKS, FINISHED = range(6)
CREATE, DELETE = 0, 1
ADDED, DELETED, REJECTED = 0, 1, 2
NONE = -1

_PC = {
    Pc.IDLE: IDLE,
    Pc.COPIED: COPIED,
    Pc.WAIT_ACTIVITY: WAIT_ACT,
    Pc.WAIT_PROVIDER: WAIT_PROV,
    Pc.WAIT_ACKS: WAIT_ACKS,
    Pc.DONE: FINISHED,
    Pc.FAILED: FINISHED,
}
_OP_KIND = {OpKind.CREATE: CREATE, OpKind.DELETE: DELETE}
_OP_KINDS = (OpKind.CREATE, OpKind.DELETE)
_EVENT_KIND = {EventKind.ADDED: ADDED, EventKind.DELETED: DELETED, EventKind.REJECTED: REJECTED}

#: Positions of the fields in a compact state (a plain tuple). Field CREATED holds
#: the number of pool items the model has created and the creation order
#: (`State.born`, as item ids), which the symmetry reduction renames as it renames
#: every other field of items.
SERVER, MIRROR, LOCAL, TO_SERVER, TO_CLIENT, ACT, PROV, TASKS = range(8)
CREATED, LEARNED, OUTSTANDING, GONE, ACKED, REACHED, REMOVED, BAD_DELETE = range(8, 16)
REFUSED, RECREATED, SENT = 16, 17, 18
#: The reconnect's fields: whether a server session is active (`State.connected`), the
#: items a rebuild put back after a delete (`State.rebuilt`), and the record of sent
#: ops (every task's `Task.ops`, in task order: each task's ops are one batch).
CONNECTED, REBUILT, RECORD = 19, 20, 21
#: `State.connected`: True, False, and `Dropped.UNNOTICED` (the drop window).
UP, DOWN, WINDOW = 1, 0, 2
_CONNECTED = {True: UP, False: DOWN, Dropped.UNNOTICED: WINDOW}
#: The rebuild's sender (`model.state.REBUILD`), as a task or a lock holder; apart
#: from NONE, which the compact locks and events use for "nobody".
REBUILDER = -2
#: The flags in field BAD_DELETE: the sticky invariants' ghost bits (renamings keep
#: the field as it is, and no move reads it).
UNINTENDED, STALLED = 1, 2

#: A task: (pc, copy, request, bound to the live local context, pending-ack mask).
#: Once called, a caller-copy task with drops keeps in the copy's place what it meant
#: to remove (the drops its copy had, in id order; invariant 5), else None.
IDLE_TASK: tuple[Any, ...] = (IDLE, None, None, False, 0)
FINISHED_TASK: tuple[Any, ...] = (FINISHED, None, None, False, 0)
FREE: tuple[int, tuple[int, ...]] = (NONE, ())

#: A compact state; its fields are listed above.
CState = tuple[Any, ...]
#: A compact move: (kind, task or None, item id or None).
CMove = tuple[MoveKind, int | None, int | None]


_F = TypeVar("_F")


def _live(name: str, like: _F) -> _F:
    """`model.moves`' function `name` as it is now (a test may have patched it)."""
    return cast(_F, vars(_moves)[name])


def _take(lock: tuple[int, tuple[int, ...]], task: int) -> tuple[int, tuple[int, ...]]:
    owner, waiters = lock
    if owner == NONE and not waiters:
        return (task, ())
    return (owner, (*waiters, task))


def _release(lock: tuple[int, tuple[int, ...]]) -> tuple[int, tuple[int, ...]]:
    waiters = lock[1]
    if not waiters:
        return FREE
    return (waiters[0], waiters[1:])


def _insert_after(items: tuple[int, ...], item: int, after: int) -> tuple[int, ...]:
    if after == NONE:
        return (item, *items)
    if after in items:
        at = items.index(after) + 1
        return (*items[:at], item, *items[at:])
    return (*items, item)


def _mask(items: Iterable[int]) -> int:
    mask = 0
    for item in items:
        mask |= 1 << item
    return mask


class _Scratch:
    """One state being changed by one move; frozen into a tuple once at the end."""

    __slots__ = (
        "acked",
        "act",
        "bad",
        "born",
        "connected",
        "created",
        "gone",
        "learned",
        "local",
        "mirror",
        "outstanding",
        "prov",
        "reached",
        "rebuilt",
        "record",
        "recreated",
        "refused",
        "removed",
        "sent",
        "server",
        "tasks",
        "to_client",
        "to_server",
    )

    def __init__(self, s: CState) -> None:
        (
            self.server,
            self.mirror,
            self.local,
            self.to_server,
            self.to_client,
            self.act,
            self.prov,
            tasks,
            self.created,
            self.learned,
            self.outstanding,
            self.gone,
            self.acked,
            self.reached,
            self.removed,
            self.bad,
            self.refused,
            self.recreated,
            self.sent,
            self.connected,
            self.rebuilt,
            self.record,
        ) = s
        self.created, self.born = self.created
        self.tasks = list(tasks)

    def freeze(self) -> CState:
        return (
            self.server,
            self.mirror,
            self.local,
            self.to_server,
            self.to_client,
            self.act,
            self.prov,
            tuple(self.tasks),
            (self.created, self.born),
            self.learned,
            self.outstanding,
            self.gone,
            self.acked,
            self.reached,
            self.removed,
            self.bad,
            self.refused,
            self.recreated,
            self.sent,
            self.connected,
            self.rebuilt,
            self.record,
        )


def unsupported(config: Config) -> str | None:
    """Why the compact encoding cannot explore `config`, or None when it can.

    It encodes the two session shapes the explorer had before shapes were data
    (a mirror on item events with a lock across acks and the mirror diff, or no
    lock and the three-way diff; creates and deletes; acks awaited; the model's
    items as events; nothing kept back), with every reconnect those shapes can
    have: each `ReconnectResends`, `ReconnectMirror`, `ReconnectLock`, `Rebuilds`,
    `DropWindow` and `WindowRebuild` value (`OpenMessages` reads a generation waiting
    for its done event, which no config here has). The explorer runs any other
    config on the readable model.
    """
    shape = config.shape
    plain = (
        shape.mirror_update is MirrorUpdate.ON_EVENTS
        and shape.sends is Sends.CREATES_AND_DELETES
        and shape.acks is Acks.AWAITED
        and shape.model_items is ModelItems.AS_EVENTS
        and shape.while_disconnected is WhileDisconnected.NONE
    )
    lock = shape.session_lock is (
        SessionLock.NONE if shape.diff is Diff.THREE_WAY else SessionLock.ACROSS_ACKS
    )
    if not (plain and lock):
        return f"the compact encoding has no session shape like {shape.name}"
    if shape.withheld_deletes:
        return "the compact encoding withholds no deletes"
    if shape.call_ids is not CallIds.SERVER:
        return "the compact encoding gives the local context no ids of its own"
    if shape.unknown_anchor is not UnknownAnchor.TAIL:
        return "the compact encoding places an item with an unknown anchor at the tail only"
    if shape.duplicate_rejection is not DuplicateRejection.SETTLES:
        return "the compact encoding has every refusal settle its waiter"
    if shape.remote_item_added is not RemoteItemAdded.IGNORED:
        return "the compact encoding has no handler that writes announced items locally"
    if shape.orphan_outputs is not OrphanOutputs.UNCHECKED:
        return "the compact encoding does not tell function outputs apart (orphan_outputs)"
    if any(config.ends_on_done(task) for task in range(len(config.scenario.calls))):
        return "the compact encoding ends an interrupted generation at once (interruption_end)"
    calls = config.scenario.calls
    if any(call.made_at_call for call in calls):
        return "the compact encoding has no message made at its call (Call.made_at_call)"
    if any(call.behind_earlier_push for call in calls):
        return "the compact encoding lets every call start at once (Call.behind_earlier_push)"
    return None


class CompactModel:
    """The successor function of one `Config` on compact states."""

    def __init__(self, config: Config) -> None:
        reason = unsupported(config)
        if reason is not None:
            raise ValueError(reason)
        self.config = config
        scenario = config.scenario
        self.names: tuple[str, ...] = scenario.items()
        self.ids: dict[str, int] = {name: i for i, name in enumerate(self.names)}
        tasks = range(len(scenario.calls))
        self.n_tasks = len(scenario.calls)
        self.source = tuple(config.site(t).request for t in tasks)
        self.update = tuple(config.local_update(t) for t in tasks)
        turns = tuple(config.site(t).speech for t in tasks)
        self.waits = tuple(turn.waits for turn in turns)
        self.across = tuple(turn.across_push for turn in turns)
        current = tuple(t for t in tasks if turns[t].from_start)
        self.starters = tuple(t for t in current if scenario.calls[t].drops) or current
        self.locks = tuple(config.locks(t) for t in tasks)
        self.adds = tuple(tuple(self.ids[i] for i in scenario.calls[t].adds) for t in tasks)
        self.drops = tuple(frozenset(self.ids[i] for i in scenario.calls[t].drops) for t in tasks)
        self.drop_masks = tuple(_mask(d) for d in self.drops)
        self.three_way = config.three_way()
        env = config.environment

        def on(kind: MoveKind) -> bool:
            option = MOVES[kind].option
            return option is None or env.on(option)

        self.copy_on = on(MoveKind.COPY)
        self.reject_on = on(MoveKind.SERVER_REJECT)
        self.model_on = on(MoveKind.MODEL_CREATES)
        self.learn_on = on(MoveKind.LEARN)
        self.timeout_on = on(MoveKind.TIMEOUT)
        self.learn_behind_events = config.shape.completion_channel is CompletionChannel.EVENTS
        # every shape encoded here places an item with an unknown anchor at the tail,
        # which makes `stale-anchors` inert (`SessionShape.inert_options`): no move
        assert not config.stale_anchors()
        self.pool = tuple(self.ids[i] for i in scenario.server_pool)
        # the local order (`model.local_order`): each task's plan, with item ids
        self.plans = _order.plan(config)
        self.plan_adds = tuple(tuple(self.ids[i] for i in p.adds) for p in self.plans)
        self.by_created_at = tuple(
            p.order.position is LocalPosition.BY_CREATED_AT for p in self.plans
        )
        self.early = tuple(
            p.order.created is Creation.BEFORE_CALL and bool(p.adds) for p in self.plans
        )
        #: The tasks whose `before-call` starts their speech (`model.moves._started`).
        self.plays = tuple(
            self.early[t] and (turns[t] is SpeechTurn.WAITS_THEN_YIELDS or turns[t].from_start)
            for t in tasks
        )
        #: The tasks whose request places their items by creation time.
        self.places_request = tuple(p.places_request() for p in self.plans)
        #: Whether anything reads the creation order: else `born` is dropped.
        self.ordered = _order.ordered(self.plans)
        # the reconnect (`model.moves._disconnect`, `_connect`), read only when it can happen
        shape = config.shape
        self.reconnects = config.reconnects()
        self.resends = shape.reconnect_resends
        self.emptied = shape.reconnect_mirror is ReconnectMirror.EMPTIED
        self.rebuild_lock = self.emptied and shape.reconnect_lock is ReconnectLock.SESSION_LOCK
        self.drop_window = shape.drop_window
        self.unqueued = shape.window_rebuild is WindowRebuild.UNQUEUED_THEN_QUEUE
        #: The items a rebuild leaves out (`Rebuilds.NO_FUNCTION_ITEMS`), as a mask.
        self.unrebuilt = (
            _mask(i for i, name in enumerate(self.names) if _moves._function_item(config, name))
            if shape.rebuilds is Rebuilds.NO_FUNCTION_ITEMS
            else 0
        )
        self._diffs: dict[Any, tuple[tuple[int, int, int, int], ...]] = {}
        self._tombs: dict[Any, int] = {}
        self._creates: dict[tuple[int, MoveKind, int, int], bool] = {}

    # -- conversion ---------------------------------------------------------

    def initial(self) -> CState:
        return self.encode(_moves.initial_state(self.config))

    def encode(self, state: State) -> CState:
        """The compact state of a readable one: what the moves and invariants read."""
        assert state.kept is None, "no request is kept back here"
        ids = self.ids

        def seq(items: Iterable[str]) -> tuple[int, ...]:
            return tuple(ids[i] for i in items)

        def mask(items: Iterable[str]) -> int:
            return _mask(ids[i] for i in items)

        def sender(task: int | None) -> int:
            return NONE if task is None else REBUILDER if task == REBUILD else task

        def op(o: Op) -> tuple[int, int, int, int]:
            after = NONE if o.after is None else ids[o.after]
            return (_OP_KIND[o.kind], ids[o.item], after, sender(o.task))

        def event(e: Event) -> tuple[int, int, int, int, int]:
            return (
                _EVENT_KIND[e.kind],
                ids[e.item],
                NONE if e.after is None else ids[e.after],
                NONE if e.op is None else _OP_KIND[e.op],
                sender(e.task),
            )

        def lock(lk: Lock) -> tuple[int, tuple[int, ...]]:
            return (sender(lk.owner), tuple(sender(t) for t in lk.waiters))

        def task(index: int, t: Task) -> tuple[Any, ...]:
            pc = _PC[t.pc]
            waiting = pc in (WAIT_ACT, WAIT_PROV)
            copy = seq(t.copy) if pc == COPIED and t.copy is not None else None
            if pc not in (IDLE, COPIED) and t.copy is not None and self.drops[index]:
                copy = self._intent(index, seq(t.copy))
            return (
                pc,
                copy,
                seq(t.request) if waiting and t.request is not None else None,
                t.bound_to_local if waiting else False,
                self.key_mask(t.pending) if pc == WAIT_ACKS else 0,
            )

        return (
            seq(state.server),
            seq(state.mirror),
            seq(state.local),
            tuple(op(o) for o in state.to_server),
            tuple(event(e) for e in state.to_client),
            lock(state.activity_lock),
            lock(state.provider_lock),
            tuple(task(i, t) for i, t in enumerate(state.tasks)),
            (state.created, seq(state.born) if self.ordered else ()),
            mask(state.learned),
            tuple(op(o) for o in state.outstanding),
            mask(state.gone),
            mask(state.acked),
            mask(state.reached),
            mask(state.removed),
            (UNINTENDED if no_unintended_delete(state, self.config) is not None else 0)
            | (STALLED if any(task.stalled for task in state.tasks) else 0),
            mask(state.refused),
            mask(item for _, item in state.recreated),
            mask(state.sent),
            _CONNECTED[state.connected],
            mask(state.rebuilt),
            tuple(op(o) for task in state.tasks for o in task.ops),
        )

    def key_mask(self, keys: Iterable[tuple[OpKind, str]]) -> int:
        return _mask(2 * self.ids[item] + _OP_KIND[kind] for kind, item in keys)

    def move(self, move: CMove) -> Move:
        kind, task, item = move
        return Move(kind, task, None if item is None else self.names[item])

    # -- invariants -----------------------------------------------------------

    @staticmethod
    def unintended_delete(s: CState) -> bool:
        """Invariant 1 is broken: some push deleted an acknowledged item it did not drop."""
        return bool(s[BAD_DELETE] & UNINTENDED)

    @staticmethod
    def disagreement_at_rest(s: CState) -> bool:
        """Invariant 2 is broken: at rest, a pushed local item is off the server, or a
        removed item is back on it."""
        if s[TO_SERVER] or s[TO_CLIENT] or s[CONNECTED] != UP:
            return False
        for task in s[TASKS]:
            if IDLE < task[0] < FINISHED:
                return False
        on_server = _mask(s[SERVER])
        pushed = s[REACHED] | s[REFUSED]
        sent = s[SENT]
        for item in s[LOCAL]:
            bit = 1 << item
            if (pushed & bit or not sent & bit) and not on_server & bit:
                return True
        return bool((s[RECREATED] | s[REBUILT]) & on_server)

    @staticmethod
    def untrue_mirror_at_rest(s: CState) -> bool:
        """Invariant 3 is broken: at rest, the mirror and the server hold other items."""
        if s[TO_SERVER] or s[TO_CLIENT] or s[CONNECTED] != UP:
            return False
        for task in s[TASKS]:
            if IDLE < task[0] < FINISHED:
                return False
        return sorted(s[MIRROR]) != sorted(s[SERVER])

    def removed_not_gone(self, s: CState) -> bool:
        """Invariant 5 is broken: at rest, an item a finished push meant to remove is
        on the server (no aliases here: `unsupported` sends those configs elsewhere)."""
        if s[TO_SERVER] or s[TO_CLIENT] or s[CONNECTED] != UP:
            return False
        tasks = s[TASKS]
        for task in tasks:
            if IDLE < task[0] < FINISHED:
                return False
        on_server = _mask(s[SERVER])
        for t in range(self.n_tasks):
            pc, intent = tasks[t][0], tasks[t][1]
            if pc != FINISHED:
                continue
            if self.source[t] is RequestSource.CALLER_COPY:
                if intent is not None and _mask(intent) & on_server:
                    return True
            elif self.drop_masks[t] & on_server:
                return True
        return False

    @staticmethod
    def twice(s: CState) -> bool:
        """Invariant 4 is broken: an item id is on the server twice."""
        return len(set(s[SERVER])) != len(s[SERVER])

    @staticmethod
    def waited_on_settled(s: CState) -> bool:
        """Invariant 6 is broken: a push went on waiting for an op its answer had settled."""
        return bool(s[BAD_DELETE] & STALLED)

    # -- moves ----------------------------------------------------------------

    def successors(self, s: CState) -> list[tuple[CMove, CState]]:
        """Every enabled move and its successor, in `model.successors`' order."""
        out: list[tuple[CMove, CState]] = []
        tasks = s[TASKS]
        if self.ordered:
            self._before_call(s, out)
        for index in range(self.n_tasks):
            task = tasks[index]
            pc = task[0]
            if pc == IDLE:
                if self.source[index] is RequestSource.CALLER_COPY and self.copy_on:
                    w = _Scratch(s)
                    w.tasks[index] = (COPIED, s[LOCAL], None, False, 0)
                    out.append(((MoveKind.COPY, index, None), w.freeze()))
                elif not (self.waits[index] and self._speech_held(s, index)):
                    w = _Scratch(s)
                    self._call(w, index, s[LOCAL])
                    out.append(((MoveKind.CALL, index, None), w.freeze()))
            elif pc == COPIED:
                if self.waits[index] and self._speech_held(s, index):
                    continue
                w = _Scratch(s)
                self._call(w, index, task[1])
                out.append(((MoveKind.CALL, index, None), w.freeze()))
            elif pc == WAIT_ACT:
                if s[ACT][0] == index:
                    w = _Scratch(s)
                    self._snapshot(w, index, None)
                    out.append(((MoveKind.WAKE, index, None), w.freeze()))
            elif pc == WAIT_PROV:
                if s[PROV][0] == index:
                    w = _Scratch(s)
                    self._diff_and_send(w, index, None)
                    out.append(((MoveKind.WAKE, index, None), w.freeze()))
            elif pc == WAIT_ACKS and not task[4]:
                w = _Scratch(s)
                self._finish(w, index)
                out.append(((MoveKind.RESUME, index, None), w.freeze()))
        self._environment(s, out)
        if self.ordered:
            return [(move, self._follow(s, move, t)) for move, t in out]
        return out

    # -- the local order (`model.local_order`, on compact states) -------------------

    def _entered(self, index: int, pc: int) -> bool:
        update = self.plans[index].update
        if update is LocalUpdate.AFTER_PUSH:
            return pc == FINISHED
        if update is LocalUpdate.NONE:
            return True
        return pc not in (IDLE, COPIED)

    def _before_call(self, s: CState, out: list[tuple[CMove, CState]]) -> None:
        born = s[CREATED][1]
        for index in range(self.n_tasks):
            if not self.early[index] or s[TASKS][index][0] not in (IDLE, COPIED):
                continue
            adds = self.plan_adds[index]
            if all(item in born for item in adds):
                continue
            if not self._others_may_create(s, index):
                continue
            if self.plays[index] and self._speech_held(s, index):
                # `model.moves._may_start`: a speech starts only with the turn free
                continue
            w = _Scratch(s)
            self._record(w, born + tuple(i for i in adds if i not in born))
            out.append(((MoveKind.BEFORE_CALL, index, None), w.freeze()))

    def _others_may_create(self, s: CState, index: int) -> bool:
        """`model.local_order._others_may_create` on compact states."""
        local = s[LOCAL]
        if any(item not in local for item in self.pool):
            return True
        born = s[CREATED][1]
        tasks = s[TASKS]
        for other in range(self.n_tasks):
            if other == index or not self.plan_adds[other]:
                continue
            plan = self.plans[other]
            pc = _PC_BACK[tasks[other][0]]
            names = tuple(self.names[i] for i in born)
            if _order.uncreated(plan, pc, names):
                return True
        return False

    def _follow(self, s: CState, move: CMove, t: CState) -> CState:
        """`model.local_order.follow` on compact states."""
        kind, task, _ = move
        if kind is MoveKind.BEFORE_CALL:
            return t
        own = kind in _OWN and task is not None
        before_local, after_local = s[LOCAL], t[LOCAL]
        born = s[CREATED][1]
        moved = after_local != before_local
        if not moved and not own and not born:
            # the environment changed no local item, and no creation order is kept
            return t
        placed: tuple[int, ...] = ()
        if moved:
            before_tasks = s[TASKS]
            for index in range(self.n_tasks):
                if not self.by_created_at[index] or self._entered(index, before_tasks[index][0]):
                    continue
                placed += tuple(
                    i for i in self.plan_adds[index] if i in after_local and i not in before_local
                )
        created: tuple[int, ...] = ()
        if own and task is not None:
            if self._created_by(task, kind, s[TASKS][task][0], t[TASKS][task][0]):
                created = tuple(i for i in self.plan_adds[task] if i not in born)
        elif moved:
            created = tuple(i for i in after_local if i not in before_local and i not in placed)
        if not created and not placed and not born:
            return t
        born = born + created
        # placed by the whole creation order, which is trimmed only after
        trimmed = self._trimmed(t[TASKS], born)
        if not placed and trimmed == t[CREATED][1]:
            return t
        w = _Scratch(t)
        if placed:
            kept = tuple(i for i in after_local if i not in placed)
            w.local = _order.upsert(kept, placed, born)
        w.born = trimmed
        return w.freeze()

    def _created_by(self, task: int, kind: MoveKind, before: int, after: int) -> bool:
        """`Plan.created_by` of task `task`, memoized: it reads only its arguments."""
        key = (task, kind, before, after)
        known = self._creates.get(key)
        if known is None:
            known = self._creates[key] = self.plans[task].created_by(
                kind, _PC_BACK[before], _PC_BACK[after]
            )
        return known

    def _record(self, w: _Scratch, born: tuple[int, ...]) -> None:
        """`born`, less the items created before the oldest one still to enter."""
        w.born = self._trimmed(w.tasks, born)

    def _trimmed(self, tasks: Sequence[Any], born: tuple[int, ...]) -> tuple[int, ...]:
        """`born` less the items created before the oldest one that, with the tasks at
        `tasks`, has still to enter."""
        waiting: set[int] = set()
        for index in range(self.n_tasks):
            pc = tasks[index][0]
            # `Plan.waits`: to enter the local context, or to be placed in a request
            if not self._entered(index, pc) or (
                self.places_request[index] and pc in (IDLE, COPIED, WAIT_ACT)
            ):
                waiting.update(self.plan_adds[index])
        start = 0
        while start < len(born) and born[start] not in waiting:
            start += 1
        return born[start:] if start else born

    def _speech_held(self, s: CState, index: int) -> bool:
        """`model.moves.speech_held` on compact states."""
        tasks, born = s[TASKS], s[CREATED][1]
        if any(
            other != index
            and self.plays[other]
            and tasks[other][0] in (IDLE, COPIED)
            and all(item in born for item in self.plan_adds[other])
            for other in range(self.n_tasks)
        ):
            return True
        if self.starters and all(tasks[t][0] == IDLE for t in self.starters):
            return index not in self.starters
        return any(
            other != index
            and self.across[other]
            and IDLE < tasks[other][0] < FINISHED
            and tasks[other][0] != COPIED
            for other in range(self.n_tasks)
        )

    def _apply(self, items: tuple[int, ...], index: int) -> tuple[int, ...]:
        drops = self.drops[index]
        kept = tuple(i for i in items if i not in drops) if drops else items
        return _upsert(kept, self.adds[index])

    def _call(self, w: _Scratch, index: int, copy: tuple[int, ...]) -> None:
        source = self.source[index]
        update = self.update[index]
        pc, _, request, bound, pending = w.tasks[index]
        base: frozenset[int] | None = None
        if source is RequestSource.CALLER_COPY:
            requested = self._apply(copy, index)
            base = frozenset(copy) | self.drops[index]
            if update is LocalUpdate.REPLACE:
                self._replace_local(w, requested)
                bound = True
            else:
                request = requested
        elif source is RequestSource.LOCAL_CONTEXT:
            bound = True
        if update is LocalUpdate.BEFORE_PUSH:
            w.local = self._apply(w.local, index)
        if source is RequestSource.LOCAL_CONTEXT:
            base = frozenset(w.local) | self.drops[index]
        intent = None
        if source is RequestSource.CALLER_COPY and self.drops[index]:
            intent = self._intent(index, copy)
        w.tasks[index] = (pc, intent, request, bound, pending)
        if self.locks[index]:
            lock = w.act
            w.act = _take(lock, index)
            if lock != FREE:
                w.tasks[index] = (WAIT_ACT, intent, request, bound, pending)
                return
        self._snapshot(w, index, base)

    def _snapshot(self, w: _Scratch, index: int, base: frozenset[int] | None) -> None:
        if self.source[index] is RequestSource.MIRROR_SNAPSHOT:
            pc, copy, _, bound, pending = w.tasks[index]
            if self.places_request[index]:
                # `model.local_order.request`: placed by the creation order
                drops = self.drops[index]
                kept = tuple(i for i in w.mirror if i not in drops)
                request = _order.upsert(kept, self.adds[index], w.born)
            else:
                request = self._apply(w.mirror, index)
            w.tasks[index] = (pc, copy, request, bound, pending)
            base = frozenset(w.mirror) | self.drops[index]
        if self.three_way:
            self._diff_and_send(w, index, base)
            return
        lock = w.prov
        w.prov = _take(lock, index)
        if lock != FREE:
            pc, copy, request, bound, pending = w.tasks[index]
            w.tasks[index] = (WAIT_PROV, copy, request, bound, pending)
            return
        self._diff_and_send(w, index, base)

    def _diff_and_send(self, w: _Scratch, index: int, base: frozenset[int] | None) -> None:
        task = w.tasks[index]
        request = w.local if task[3] else task[2]
        assert request is not None
        window = w.connected == WINDOW
        if window and self.drop_window is DropWindow.REFUSED:
            # the session finds its connection dead before it diffs: the push raises
            self._finish(w, index)
            return
        if self.three_way:
            assert base is not None, "a three-way push diffs in the step that fixes its base"
            gone = self._tombstones(w.gone, w.outstanding)
            request = tuple(i for i in request if not (gone >> i) & 1 or i not in base)
            if task[3]:
                w.local = request
            ops = self._three_way_diff(w.mirror, w.outstanding, base, request, index)
        else:
            ops = self._mirror_diff(w.mirror, request, index)
        keys = 0
        for kind, item, _, _ in ops:
            keys |= 1 << (2 * item + kind)
        assert keys.bit_count() == len(ops), "a push sends one op per (kind, item)"
        if not self.three_way:
            for other, other_task in enumerate(w.tasks):
                assert other == index or not (other_task[4] & keys), "acks keyed by item"
        acked = w.acked
        drops = self.drops[index]
        for kind, item, _, _ in ops:
            if kind == DELETE and (acked >> item) & 1 and item not in drops:
                w.bad |= UNINTENDED
        for kind, item, _, _ in ops:
            if kind == CREATE:
                w.sent |= 1 << item
        if ops:
            # in the drop window the ops wait for the next connection, or are lost
            if not (window and self.drop_window in (DropWindow.LOST, DropWindow.UNRECORDED)):
                w.to_server = w.to_server + ops
            if self.three_way:
                w.outstanding = w.outstanding + ops
            if self.reconnects:
                self._keep_record(w, index, ops, window)
            w.tasks[index] = (WAIT_ACKS, task[1], None, False, keys)
        else:
            self._finish(w, index)

    def _keep_record(
        self, w: _Scratch, index: int, ops: tuple[tuple[int, int, int, int], ...], window: bool
    ) -> None:
        """The record of sent ops a reconnect sends again from (`Task.ops`): one record
        cleared as each push starts (`ReconnectResends.CURRENT_PUSH`), else one batch a
        task, in task order; ops whose send failed on the closed socket enter none."""
        if self.resends is ReconnectResends.CURRENT_PUSH:
            w.record = ()
        if window and self.drop_window is DropWindow.UNRECORDED:
            return
        # a task sends once, so its batch is new; the record stays in task order
        w.record = tuple(sorted(w.record + ops, key=_sender))

    def _finish(self, w: _Scratch, index: int) -> None:
        if w.prov[0] == index:
            w.prov = _release(w.prov)
        if w.act[0] == index:
            w.act = _release(w.act)
        if self.rebuild_lock:
            _settle_rebuild_lock(w)
        if self.update[index] is LocalUpdate.AFTER_PUSH:
            w.local = _upsert(w.local, self.adds[index])
        if w.record and any(o[3] == index for o in w.record):
            if self.resends is ReconnectResends.CURRENT_PUSH:
                # the one record is cleared as the push ends, whoever is in it
                w.record = ()
            else:
                w.record = tuple(o for o in w.record if o[3] != index)
        intent = w.tasks[index][1]
        w.tasks[index] = FINISHED_TASK if intent is None else (FINISHED, intent, None, False, 0)

    def _intent(self, index: int, copy: tuple[int, ...]) -> tuple[int, ...]:
        """What caller-copy task `index` means to remove: its drops that `copy` has."""
        return tuple(sorted(i for i in self.drops[index] if i in copy))

    def _replace_local(self, w: _Scratch, local: tuple[int, ...]) -> None:
        old = w.local
        for index, task in enumerate(w.tasks):
            if task[3] and task[0] in (WAIT_ACT, WAIT_PROV):
                w.tasks[index] = (task[0], task[1], old, False, task[4])
        w.local = local

    # -- the model's diffs, memoized ----------------------------------------

    def _ops(self, raw: Iterable[Op]) -> tuple[tuple[int, int, int, int], ...]:
        ids = self.ids
        return tuple(
            (_OP_KIND[o.kind], ids[o.item], NONE if o.after is None else ids[o.after], o.task)
            for o in raw
        )

    def _mirror_diff(
        self, mirror: tuple[int, ...], request: tuple[int, ...], index: int
    ) -> tuple[tuple[int, int, int, int], ...]:
        key = (mirror, request, index)
        ops = self._diffs.get(key)
        if ops is None:
            names = self.names
            raw = _live("mirror_diff", _diff.mirror_diff)(
                tuple(names[i] for i in mirror), tuple(names[i] for i in request), index
            )
            ops = self._diffs[key] = self._ops(raw)
        return ops

    def _readable_ops(self, ops: Iterable[tuple[int, int, int, int]]) -> tuple[Op, ...]:
        names = self.names
        return tuple(
            Op(_OP_KINDS[k], names[i], None if a == NONE else names[a], t) for k, i, a, t in ops
        )

    def _three_way_diff(
        self,
        mirror: tuple[int, ...],
        outstanding: tuple[tuple[int, int, int, int], ...],
        base: frozenset[int],
        request: tuple[int, ...],
        index: int,
    ) -> tuple[tuple[int, int, int, int], ...]:
        key = (mirror, outstanding, base, request, index)
        ops = self._diffs.get(key)
        if ops is None:
            names = self.names
            expected = _live("expected_view", _state.expected_view)(
                tuple(names[i] for i in mirror), self._readable_ops(outstanding)
            )
            raw = _live("three_way_diff", _diff.three_way_diff)(
                expected,
                frozenset(names[i] for i in base),
                tuple(names[i] for i in request),
                index,
            )
            ops = self._diffs[key] = self._ops(raw)
        return ops

    def _tombstones(self, gone: int, outstanding: tuple[tuple[int, int, int, int], ...]) -> int:
        key = (gone, outstanding)
        mask = self._tombs.get(key)
        if mask is None:
            names = self.names
            view = State(
                server=(),
                mirror=(),
                local=(),
                outstanding=self._readable_ops(outstanding),
                gone=frozenset(names[i] for i in range(len(names)) if (gone >> i) & 1),
            )
            mask = self._tombs[key] = _mask(
                self.ids[i] for i in _live("tombstones", _state.tombstones)(view)
            )
        return mask

    # -- the environment ------------------------------------------------------

    def _environment(self, s: CState, out: list[tuple[CMove, CState]]) -> None:
        up = s[CONNECTED] == UP
        if s[TO_SERVER] and up:
            op = s[TO_SERVER][0]
            sender = None if op[3] == REBUILDER else op[3]
            w = _Scratch(s)
            self._server_apply(w)
            out.append(((MoveKind.SERVER_APPLY, sender, op[1]), w.freeze()))
            if self.reject_on:
                w = _Scratch(s)
                _reject(w)
                out.append(((MoveKind.SERVER_REJECT, sender, op[1]), w.freeze()))
        if s[TO_CLIENT]:
            event = s[TO_CLIENT][0]
            w = _Scratch(s)
            self._client_apply(w)
            task = None if event[4] < 0 else event[4]
            out.append(((MoveKind.CLIENT_APPLY, task, event[1]), w.freeze()))
        if self.model_on:
            created = s[CREATED][0]
            if created < len(self.pool) and up:
                item = self.pool[created]
                w = _Scratch(s)
                after = w.server[-1] if w.server else NONE
                w.server = (*w.server, item)
                w.reached |= 1 << item
                w.sent |= 1 << item
                w.created = created + 1
                w.to_client = (*w.to_client, (ADDED, item, after, NONE, NONE))
                out.append(((MoveKind.MODEL_CREATES, None, item), w.freeze()))
            # `model.moves._may_learn`: behind the events in flight, where the shape says
            if self.learn_on and not (self.learn_behind_events and s[TO_CLIENT]):
                for item in self.pool[:created]:
                    bit = 1 << item
                    if s[ACKED] & bit and not s[LEARNED] & bit:
                        w = _Scratch(s)
                        w.local = _upsert(w.local, (item,))
                        w.learned |= bit
                        out.append(((MoveKind.LEARN, None, item), w.freeze()))
        if self.timeout_on:
            for index, task in enumerate(s[TASKS]):
                if task[0] == WAIT_ACKS and task[4]:
                    w = _Scratch(s)
                    self._finish(w, index)
                    out.append(((MoveKind.TIMEOUT, index, None), w.freeze()))
        if self.reconnects:
            w = _Scratch(s)
            if up:
                self._disconnect(w)
                out.append(((MoveKind.DISCONNECT, None, None), w.freeze()))
            elif s[CONNECTED] == WINDOW:
                # the second `disconnect` of a drop: the session gives the dead connection up
                w.connected = DOWN
                out.append(((MoveKind.DISCONNECT, None, None), w.freeze()))
            else:
                self._connect(w)
                out.append(((MoveKind.CONNECT, None, None), w.freeze()))

    def _disconnect(self, w: _Scratch) -> None:
        """`model.moves._disconnect`: everything in flight is lost, and a rebuild with it."""
        owner, waiters = w.prov
        if REBUILDER in waiters:
            waiters = tuple(t for t in waiters if t != REBUILDER)
        w.prov = _release((owner, waiters)) if owner == REBUILDER else (owner, waiters)
        w.connected = DOWN if self.drop_window is DropWindow.NONE else WINDOW
        w.to_server = ()
        w.to_client = ()

    def _connect(self, w: _Scratch) -> None:
        """`model.moves._connect`: the new server conversation is the mirror (less what
        the shape leaves out), and the ops still awaited go again after it."""
        if self.resends is ReconnectResends.NONE:
            for index in range(self.n_tasks):
                if w.tasks[index][0] == WAIT_ACKS:
                    self._finish(w, index)
        mirror = w.mirror
        if self.unrebuilt:
            mirror = tuple(i for i in mirror if not (self.unrebuilt >> i) & 1)
        # (`OpenMessages.LEFT_OUT` leaves out what a generation waiting for its done
        # event made: no config here has one, `unsupported` says)
        if self.unqueued:
            queued = {o[1] for o in w.to_server if o[0] == CREATE}
            mirror = tuple(i for i in mirror if i not in queued)
        tasks = w.tasks
        resend = tuple(
            o
            for o in w.record
            if tasks[o[3]][0] == WAIT_ACKS
            and (tasks[o[3]][4] >> (2 * o[1] + o[0])) & 1
            and o not in w.to_server
        )
        w.connected = UP
        items = _mask(mirror)
        w.server = mirror
        w.to_server = resend + w.to_server
        w.reached |= items
        w.sent |= items
        w.rebuilt |= items & w.removed
        if not self.emptied:
            w.mirror = mirror
            return
        # the rebuild's creates go to an empty conversation that refuses none of them:
        # the server holds them now, and their added events refill the mirror
        w.mirror = ()
        w.to_client = tuple(
            (ADDED, item, mirror[position - 1] if position else NONE, NONE, REBUILDER)
            for position, item in enumerate(mirror)
        )
        if mirror and self.rebuild_lock:
            w.prov = _take(w.prov, REBUILDER)

    def _server_apply(self, w: _Scratch) -> None:
        op = w.to_server[0]
        kind, item, after, task = op
        server = w.server
        bit = 1 << item
        if kind == DELETE:
            if item not in server:
                _reject(w)
                return
            w.to_server = w.to_server[1:]
            w.server = tuple(i for i in server if i != item)
            w.removed |= bit
            w.to_client = (*w.to_client, (DELETED, item, NONE, NONE, task))
            return
        if item in server:
            _reject(w)
            return
        if after != NONE and after not in server:
            if (w.removed >> after) & 1:
                w.refused |= bit
            _reject(w)
            return
        if w.removed & bit:
            if task == REBUILDER:
                w.rebuilt |= bit
            else:
                w.recreated |= bit
        w.to_server = w.to_server[1:]
        w.server = _insert_after(server, item, after)
        w.reached |= bit
        w.to_client = (*w.to_client, (ADDED, item, after, NONE, task))

    def _client_apply(self, w: _Scratch) -> None:
        kind, item, after, op_kind, task = w.to_client[0]
        w.to_client = w.to_client[1:]
        if kind == ADDED:
            if item not in w.mirror:
                w.mirror = _insert_after(w.mirror, item, after)
            w.acked |= 1 << item
            key_kind = CREATE
        elif kind == DELETED:
            w.mirror = tuple(i for i in w.mirror if i != item)
            if self.three_way:
                w.gone |= 1 << item
            key_kind = DELETE
        else:
            key_kind = op_kind
        if self.rebuild_lock:
            _settle_rebuild_lock(w)
        if task == NONE:
            return
        key = 1 << (2 * item + key_kind)
        own_only = self.three_way or kind == REJECTED
        tasks = w.tasks
        for index, t in enumerate(tasks):
            if t[0] == WAIT_ACKS and t[4] & key and (not own_only or index == task):
                tasks[index] = (t[0], t[1], t[2], t[3], t[4] & ~key)
        if task == REBUILDER:
            # the rebuild's answer is no push's own op: no waiter, no op outstanding
            return
        waiter = tasks[task]
        if waiter[0] == WAIT_ACKS and waiter[4] & key:
            w.bad |= STALLED
        outstanding = w.outstanding
        for position, o in enumerate(outstanding):
            if o[0] == key_kind and o[1] == item and o[3] == task:
                w.outstanding = outstanding[:position] + outstanding[position + 1 :]
                break


def _sender(op: tuple[int, int, int, int]) -> int:
    return op[3]


def _settle_rebuild_lock(w: _Scratch) -> None:
    """A rebuild that holds the session lock gives it up once it is answered."""
    if w.prov[0] == REBUILDER and not (
        any(o[3] == REBUILDER for o in w.to_server) or any(e[4] == REBUILDER for e in w.to_client)
    ):
        w.prov = _release(w.prov)


def _reject(w: _Scratch) -> None:
    kind, item, _, task = w.to_server[0]
    w.to_server = w.to_server[1:]
    w.to_client = (*w.to_client, (REJECTED, item, NONE, kind, task))


#: The moves a push task or its caller makes (`model.local_order`).
_OWN = frozenset(
    kind for kind, spec in MOVES.items() if spec.actor in (Actor.APPLICATION, Actor.TASK)
)
#: A compact program counter as a readable one, where `Plan.created_by` reads it.
_PC_BACK = {
    IDLE: Pc.IDLE,
    COPIED: Pc.COPIED,
    WAIT_ACT: Pc.WAIT_ACTIVITY,
    WAIT_PROV: Pc.WAIT_PROVIDER,
    WAIT_ACKS: Pc.WAIT_ACKS,
    FINISHED: Pc.DONE,
}


def _upsert(items: tuple[int, ...], adds: tuple[int, ...]) -> tuple[int, ...]:
    new = tuple(i for i in adds if i not in items)
    return items + new if new else items
