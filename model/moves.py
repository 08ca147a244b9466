"""The successor function: every move enabled in a state, and where it leads.

A task move runs what an asyncio task runs between two awaits, no more and no
less: acquiring a free asyncio.Lock does not yield, so a push that finds both
locks free snapshots, diffs and sends in the step that calls it. The
environment's moves are each one delivery or one decision of the server, the
model or the clock. `docs/model.md` lines each step up with the real awaits.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from itertools import chain

import attrs
from attrs import field, frozen

from model import local_order
from model.diff import mirror_diff, three_way_diff
from model.environment import Environment
from model.local_order import upsert as _upsert
from model.move_table import MOVES, MoveKind
from model.scenarios import Call, ItemKind, Scenario
from model.shapes import (
    SHAPES_BY_NAME,
    CallIds,
    CompletionChannel,
    Diff,
    DropWindow,
    DuplicateRejection,
    InterruptionEnd,
    LocalTail,
    MirrorUpdate,
    ModelItems,
    OpenMessages,
    OrphanOutputs,
    Rebuilds,
    ReconnectLock,
    ReconnectMirror,
    ReconnectResends,
    RemoteItemAdded,
    SessionShape,
    UnknownAnchor,
    WhileDisconnected,
    WindowRebuild,
    Withheld,
)
from model.sites import (
    SITES_BY_NAME,
    Creation,
    LocalOrder,
    LocalUpdate,
    RequestSource,
    Site,
    SpeechTurn,
)
from model.state import (
    REBUILD,
    RESPONSE,
    Dropped,
    Event,
    EventKind,
    Op,
    OpKind,
    Pc,
    State,
    Task,
    evolve,
    expected_view,
    insert_after,
    tombstones,
)
from model.variants import Variant


@frozen
class Config:
    """What a run of the model is about: the variant, the session shape, the
    scenario, the environment."""

    variant: Variant
    scenario: Scenario
    environment: Environment
    #: Site records beyond the built-in catalog (e.g. found by `ackguard audit`);
    #: they take precedence over catalog records of the same name.
    extra_sites: tuple[Site, ...] = ()
    #: The provider session's shape; by default the variant's own.
    shape: SessionShape = field()
    #: Every site creates its items at its call and appends them to the local
    #: context, ignoring livekit's creation-time order (`model.sites.LOCAL_ORDER`):
    #: the model the z3 per-scenario encoding checks (`ORDER_UNENCODED` there).
    appends_locally: bool = field(default=False, kw_only=True)
    #: Local-order records beyond the catalog's `LOCAL_ORDER`, by site name, which
    #: they take precedence over (as `extra_sites` over the catalog's sites): the
    #: livekit release records' `model.sites.COPY_INSERTS`.
    local_orders: tuple[tuple[str, LocalOrder], ...] = field(default=(), kw_only=True)

    @shape.default
    def _default_shape(self) -> SessionShape:
        return SHAPES_BY_NAME[self.variant.shape]

    def call(self, task: int) -> Call:
        """The scenario's call that task `task` runs."""
        return self.scenario.calls[task]

    def site(self, task: int) -> Site:
        """The site record of task `task`, an extra site first: the moves read only this."""
        name = self.scenario.calls[task].site
        for site in self.extra_sites:
            if site.name == name:
                return site
        return SITES_BY_NAME[name]

    def locks(self, task: int) -> bool:
        """Whether task `task` takes the activity lock under this variant."""
        return self.variant.locks(self.site(task))

    def local_update(self, task: int) -> LocalUpdate:
        """When task `task` changes the local context under this variant."""
        return self.variant.local_update(self.site(task))

    def ends_on_done(self, task: int) -> bool:
        """Whether task `task`'s call interrupts a generation that ends only when the
        server's done event for its cancel reaches the session (`InterruptionEnd`):
        the shape says so and the site is inside a generation current at the start."""
        return (
            self.shape.interruption_end is InterruptionEnd.ON_DONE_EVENT
            and self.site(task).speech.from_start
        )

    def three_way(self) -> bool:
        """Whether the session diffs three ways (an expected view, requests with a base)."""
        return self.shape.diff is Diff.THREE_WAY

    def inert_options(self) -> frozenset[str]:
        """The options this config's shape gives nothing to do (`SessionShape.inert_options`)."""
        return frozenset(name for name, _ in self.shape.inert_options())

    def reconnects(self) -> bool:
        """Whether the connection can drop here: the option is on and the shape rebuilds."""
        return self.environment.reconnects and self.shape.reconnects

    def stale_anchors(self) -> bool:
        """Whether the model's item can be announced after a deleted item here: the
        option is on and the shape does not make it inert (`SessionShape.inert_options`)."""
        return self.environment.stale_anchors and "stale-anchors" not in self.inert_options()

    def options_read(self) -> frozenset[str]:
        """The environment options that can change a move of this config.

        `stale-copies` changes only how a caller-copy site is called, and
        `server-items` adds moves only for a scenario's server pool; an option
        outside this set leaves every run as it is without it.
        """
        read = {"rejections"} | {
            name for name in ("timeouts", "reconnects") if name not in self.inert_options()
        }
        if any(
            self.site(task).request is RequestSource.CALLER_COPY
            for task in range(len(self.scenario.calls))
        ):
            read.add("stale-copies")
        if self.scenario.server_pool:
            read.add("server-items")
            if "stale-anchors" not in self.inert_options():
                read.add("stale-anchors")
        return frozenset(read)

    def behaviour(self) -> Hashable:
        """All the moves depend on: configs with equal behaviours have the same runs.

        The moves read the variant only through `locks` and `local_update`, the
        shape through its fields, and the environment only through `options_read`. Variants
        that differ only at sites a scenario does not call are therefore the
        same model there (lock3 and lock5 on overlapping-push, which calls
        neither of the two sites only lock5 locks); `verify` checks them once.
        """
        tasks = range(len(self.scenario.calls))
        return (
            self.scenario,
            attrs.evolve(self.shape, name="", summary="", source=""),
            tuple((self.site(t), self.locks(t), self.local_update(t)) for t in tasks),
            frozenset(self.environment.options) & self.options_read(),
            # the local order: appended, or the catalog's with the config's records
            (self.appends_locally, self.local_orders),
        )


@frozen(order=True)
class Move:
    """One step by name, so that traces can be replayed, compared and printed;
    `MOVES` says what a kind names."""

    kind: MoveKind
    task: int | None = None
    item: str | None = None

    def label(self) -> str:
        """The move as people and the conformance harness write it: `call T0`."""
        parts = [self.kind.value]
        if self.task is not None:
            parts.append(f"T{self.task}")
        if self.item is not None:
            parts.append(self.item)
        return " ".join(parts)


def initial_state(config: Config) -> State:
    """The scenario's start: nothing in flight, and the mirror agrees with the server."""
    scenario = config.scenario
    return State(
        server=scenario.server,
        mirror=scenario.server,
        local=scenario.initial_local,
        tasks=tuple(Task() for _ in scenario.calls),
        acked=frozenset(scenario.server),
        reached=frozenset(scenario.server),
        sent=frozenset(scenario.server),
    )


def successors(state: State, config: Config) -> Iterator[tuple[Move, State]]:
    """Every enabled move with its successor, in a fixed order; the local context's
    order follows creation times (`model.local_order`)."""
    for index, after in local_order.before_call(state, config):
        if _may_start(state, config, index):
            yield Move(MoveKind.BEFORE_CALL, index), after
    for move, after in chain(_task_moves(state, config), _environment_moves(state, config)):
        yield move, local_order.follow(state, config, move.kind, move.task, after)


def step(state: State, config: Config, move: Move) -> State:
    """The successor of one named move; ValueError when it is not enabled."""
    for candidate, successor in successors(state, config):
        if candidate == move:
            return successor
    raise ValueError(f"move {move.label()} is not enabled")


# -- task moves ---------------------------------------------------------------


def speech_held(state: State, config: Config, index: int) -> bool:
    """Whether a call other than task `index`'s holds the speech turn (`SpeechTurn`).

    Read off the tasks' program counters, so the state needs nothing more. While
    every task whose generation may be current at the start is uncalled, one of
    them holds the turn: one whose never-played items are on the server already,
    else any of them (each may be the one); the others wait, as the scheduler
    runs one generation at a time. After that, a task holds the turn from its call until its push
    returns where its site holds it across the push.

    A speech started by its `before-call` step (a `say()`'s playout, an interrupted
    generation's tool returning: its items are in `State.born`) is the current one
    from that step to its call, before all of the above: livekit marks such a
    generation done only at or after its push (docs/livekit.md, "Items made before
    their call").
    """
    if any(other != index and _started(state, config, other) for other in range(len(state.tasks))):
        return True
    current = [t for t in range(len(state.tasks)) if config.site(t).speech.from_start]
    # a generation whose items are on the server already is the one that ran
    starters = [
        t for t in current if config.call(t).drops and not config.call(t).made_at_call
    ] or current
    if starters and all(state.tasks[t].pc is Pc.IDLE for t in starters):
        return index not in starters
    return any(
        other != index
        and (task.pc in _ENDING or (config.site(other).speech.across_push and task.pc in _CALLED))
        for other, task in enumerate(state.tasks)
    )


def _plays(config: Config, index: int) -> bool:
    """Whether task `index`'s `before-call` starts a speech of its own (a `say()`'s
    playout, an interrupted generation's tool returning inside its run)."""
    speech = config.site(index).speech
    return speech is SpeechTurn.WAITS_THEN_YIELDS or speech.from_start


def _may_start(state: State, config: Config, index: int) -> bool:
    """A `before-call` that starts a speech is taken only with the turn free: a `say()`
    waits for its turn before it plays, and only the current generation runs its tool."""
    return not _plays(config, index) or not speech_held(state, config, index)


def _started(state: State, config: Config, index: int) -> bool:
    """Whether task `index`'s speech was started by its `before-call` step and the task
    is not called yet: a `say()` playing, or an interrupted generation whose tool ran."""
    if not _plays(config, index):
        return False
    task_plan = local_order.plan(config)[index]
    if task_plan.order.created is not Creation.BEFORE_CALL or not task_plan.adds:
        return False
    pc = state.tasks[index].pc
    return pc in _UNCALLED and not local_order.uncreated(task_plan, pc, state.born)


#: The program counters before a call.
_UNCALLED: frozenset[Pc] = frozenset({Pc.IDLE, Pc.COPIED})
#: The program counters of a push that has been called and has not returned.
_CALLED: frozenset[Pc] = frozenset({Pc.WAIT_ACTIVITY, Pc.WAIT_PROVIDER, Pc.WAIT_ACKS, Pc.WAIT_SEND})
#: An interrupted generation that has not reached its push yet: it is still the
#: current speech, whatever its site does with the turn once it pushes.
_ENDING: frozenset[Pc] = frozenset({Pc.WAIT_DONE, Pc.ENDED})


def _may_call(state: State, config: Config, index: int) -> bool:
    """A site that waits for the speech turn is called only when no other call holds it,
    and a generation behind an earlier one's push only once that push's traffic is done."""
    if behind_earlier_push(state, config, index):
        return False
    return not config.site(index).speech.waits or not speech_held(state, config, index)


def behind_earlier_push(state: State, config: Config, index: int) -> bool:
    """Whether call `index` (`Call.behind_earlier_push`) still waits behind an earlier
    interrupted generation: an op of that call's task (its cancel, its push's creates)
    is on its way to the server, or an event answering one is on its way back.

    The later generation's `response.create` is sent once the earlier generation is
    marked done, behind whatever that one had sent on the one socket, so the server
    answers it, and the session learns its function call or message, only after
    those; the interruption (the call) comes after that (docs/livekit.md, "Audited
    pairs").
    """
    if not config.call(index).behind_earlier_push:
        return False
    for other, task in enumerate(state.tasks):
        if other == index or task.pc is Pc.IDLE or not config.site(other).speech.from_start:
            continue
        if any(op.task == other for op in state.to_server):
            return True
        if any(event.task == other for event in state.to_client):
            return True
    return False


def _task_moves(state: State, config: Config) -> Iterator[tuple[Move, State]]:
    for index, task in enumerate(state.tasks):
        site = config.site(index)
        if task.pc is Pc.IDLE:
            if site.request is RequestSource.CALLER_COPY and _enabled(
                config.environment, MoveKind.COPY
            ):
                yield (
                    Move(MoveKind.COPY, index),
                    state.with_task(index, pc=Pc.COPIED, copy=state.local),
                )
            elif _may_call(state, config, index):
                made = made_at_call(state, config, index)
                if config.ends_on_done(index):
                    yield Move(MoveKind.CALL, index), _interrupt(made, index)
                else:
                    yield Move(MoveKind.CALL, index), _call(made, config, index, made.local)
        elif task.pc is Pc.COPIED:
            assert task.copy is not None
            if _may_call(state, config, index):
                yield Move(MoveKind.CALL, index), _call(state, config, index, task.copy)
        elif task.pc is Pc.WAIT_ACTIVITY and state.activity_lock.owner == index:
            yield Move(MoveKind.WAKE, index), _snapshot(state, config, index)
        elif task.pc is Pc.WAIT_PROVIDER and state.provider_lock.owner == index:
            yield Move(MoveKind.WAKE, index), _diff_and_send(state, config, index)
        elif (task.pc is Pc.WAIT_ACKS and not task.pending) or task.pc is Pc.WAIT_SEND:
            yield Move(MoveKind.RESUME, index), _finish(state, config, index, Pc.DONE)
        elif task.pc is Pc.ENDED:
            # the generation has ended: the site runs as a call does, from its local update
            yield Move(MoveKind.WAKE, index), _call(state, config, index, state.local)


def made_at_call(state: State, config: Config, index: int) -> State:
    """A call whose generation makes its never-played items as it runs
    (`Call.made_at_call`): before the interruption, each reaches the server's tail,
    is announced and applied to the mirror, and meets the agent's handler of
    announced items, all in the call's step (its generation runs only once the
    earlier one's traffic is done, `behind_earlier_push`, so nothing is in flight to
    come between)."""
    call = config.call(index)
    if not call.made_at_call:
        return state
    for item in call.drops:
        after = state.server[-1] if state.server else None
        state = evolve(
            state,
            server=(*state.server, item),
            mirror=(*state.mirror, item),
            acked=state.acked | {item},
            reached=state.reached | {item},
            sent=state.sent | {item},
        )
        state = _placeholder(state, config, Event(EventKind.ADDED, item, after=after))
    return state


def _interrupt(state: State, index: int) -> State:
    """The call interrupts the generation (`InterruptionEnd.ON_DONE_EVENT`): its cancel
    joins the op FIFO behind every op sent before it, and nothing else happens until
    the done event that answers it reaches the session."""
    cancel = Op(OpKind.CANCEL, RESPONSE, None, index)
    state = evolve(state, to_server=(*state.to_server, cancel))
    return state.with_task(index, pc=Pc.WAIT_DONE)


def _call(state: State, config: Config, index: int, copy: tuple[str, ...]) -> State:
    """The site is called: local update before the push, then the activity lock."""
    call = config.call(index)
    site = config.site(index)
    update = config.local_update(index)
    orphans = _orphans(state, config, call)
    if orphans:
        # the session drops outputs whose function call it does not hold, before
        # the push and before the local context hears of them
        state = state.with_task(index, dropped=orphans)
        call = _without(call, orphans)
    task = state.tasks[index]
    if site.request is RequestSource.CALLER_COPY:
        requested = _apply(copy, call)
        base = frozenset(copy) | frozenset(call.drops)
        if update is LocalUpdate.REPLACE:
            # the copy becomes the live local context object, and it is that object
            # the provider reads when it diffs
            state = _replace_local(state, requested)
            task = evolve(task, copy=copy, bound_to_local=True, base=base)
        else:
            task = evolve(task, copy=copy, request=requested, base=base)
    elif site.request is RequestSource.LOCAL_CONTEXT:
        task = evolve(task, bound_to_local=True)
    if update is LocalUpdate.BEFORE_PUSH:
        state = evolve(state, local=_apply(state.local, call))
    state = evolve(state, tasks=_replace_task(state.tasks, index, task))
    if site.request is RequestSource.LOCAL_CONTEXT:
        state = state.with_task(index, base=frozenset(state.local) | frozenset(call.drops))
    if config.locks(index):
        lock = state.activity_lock
        state = evolve(state, activity_lock=lock.take(index))
        if not lock.free():
            return state.with_task(index, pc=Pc.WAIT_ACTIVITY)
    return _snapshot(state, config, index)


def _snapshot(state: State, config: Config, index: int) -> State:
    """Holding the activity lock (or none): copy the session's context, then enter
    the provider (its lock only where the shape holds it across acks)."""
    if config.site(index).request is RequestSource.MIRROR_SNAPSHOT:
        call = _without(config.call(index), state.tasks[index].dropped)
        # a session with a request kept back reports that request as its context
        seen = state.mirror if state.kept is None else state.kept
        kept = tuple(item for item in seen if item not in call.drops)
        # its new items appended, or placed by creation time into the copy
        placed = local_order.request(local_order.plan(config)[index], kept, call.adds, state.born)
        state = state.with_task(
            index,
            request=placed,
            base=frozenset(seen) | frozenset(call.drops),
        )
    if not config.shape.locks_across_acks:
        return _diff_and_send(state, config, index)
    lock = state.provider_lock
    state = evolve(state, provider_lock=lock.take(index))
    if not lock.free():
        return state.with_task(index, pc=Pc.WAIT_PROVIDER)
    return _diff_and_send(state, config, index)


def _diff_and_send(state: State, config: Config, index: int) -> State:
    """Inside the provider: read the request, diff, send every op, wait for acks."""
    task = state.tasks[index]
    shape = config.shape
    request = state.local if task.bound_to_local else task.request
    assert request is not None
    window = state.connected is Dropped.UNNOTICED
    if window and shape.drop_window is DropWindow.REFUSED:
        # the session finds its connection dead before it diffs: the push raises
        return _end(state.with_task(index, request=request), config, index, Pc.FAILED)
    kept_back = shape.while_disconnected is WhileDisconnected.KEPT_BACK
    if not state.connected and not window and kept_back:
        # no server session: the request is kept (the latest wins) and the push returns
        state = evolve(state, kept=request).with_task(index, request=request)
        return _end(state, config, index, Pc.DONE)
    if config.three_way():
        # merge: what another push deleted on purpose and this caller merely saw
        # is dropped from the request too, and so from the live local context
        gone = tombstones(state)
        request = tuple(item for item in request if item not in gone or item not in task.base)
        if task.bound_to_local:
            state = evolve(state, local=request)
        expected = expected_view(state.mirror, state.outstanding)
        ops = three_way_diff(expected, task.base, request, index)
    else:
        ops = mirror_diff(state.mirror, request, index)
    if not shape.sends_deletes:
        ops = tuple(op for op in ops if op.kind is OpKind.CREATE)
    if shape.withheld_deletes:
        ops = tuple(op for op in ops if not _withheld(state, config, op))
    keys = frozenset(op.key for op in ops)
    assert len(keys) == len(ops), "a push sends one op per (kind, item)"
    if shape.locks_across_acks:
        # the provider lock admits one waiting push at a time, so acks keyed by
        # item id (as the real session keys its futures) are never ambiguous
        for other, other_task in enumerate(state.tasks):
            assert other == index or not (other_task.pending & keys), "acks keyed by item"
    deletes = frozenset(
        (index, op.item, op.item in state.acked) for op in ops if op.kind is OpKind.DELETE
    )
    # in the drop window the ops wait on the send queue for the next connection
    # (`to_server` reaches no server until the connect), or are lost on the dead one
    dead = window and shape.drop_window in (DropWindow.LOST, DropWindow.UNRECORDED)
    wire = () if dead else ops
    state = evolve(
        state,
        to_server=state.to_server + wire,
        outstanding=state.outstanding + ops if config.three_way() else state.outstanding,
        deletes_sent=state.deletes_sent | deletes,
        sent=state.sent | {op.item for op in ops if op.kind is OpKind.CREATE},
    )
    if shape.mirror_update is MirrorUpdate.AT_SEND:
        state = evolve(state, mirror=request)
    # ops whose send failed on the closed socket never enter the record of sent ops
    unrecorded = window and shape.drop_window is DropWindow.UNRECORDED
    sent = ops if config.reconnects() and not unrecorded else ()
    if ops and config.reconnects() and shape.reconnect_resends is ReconnectResends.CURRENT_PUSH:
        # one record of sent ops, cleared as each push starts: only this push's stay
        state = evolve(state, tasks=tuple(_without_ops(t) for t in state.tasks))
    if shape.waits_for_acks:
        state = state.with_task(index, pc=Pc.WAIT_ACKS, pending=keys, request=request, ops=sent)
        return state if ops else _finish(state, config, index, Pc.DONE)
    state = state.with_task(index, pc=Pc.WAIT_SEND, request=request, ops=sent)
    if ops and shape.mirror_update is MirrorUpdate.ON_RETURN:
        # the send awaits: the mirror is set only when it returns, a step later
        return state
    return _finish(state, config, index, Pc.DONE)


def _withheld(state: State, config: Config, op: Op) -> bool:
    """Whether the session keeps back delete `op` (`SessionShape.withheld_deletes`):
    the diff asked for it, the session never sends it."""
    if op.kind is not OpKind.DELETE:
        return False
    withheld = config.shape.withheld_deletes
    kind = config.scenario.kind(server_id(config, op.item))
    if Withheld.EMPTY_MESSAGES in withheld and kind is ItemKind.EMPTY_MESSAGE:
        return True
    return (
        Withheld.UNLEARNED_CALLS in withheld
        and kind is ItemKind.FUNCTION_CALL
        and op.item in config.scenario.server_pool
        and op.item not in state.learned
    )


def _finish(state: State, config: Config, index: int, pc: Pc) -> State:
    """The push returns (or raises): a shape that sets its mirror on return does so
    for a push that succeeded, then `_end`."""
    if pc is Pc.DONE and config.shape.mirror_update is MirrorUpdate.ON_RETURN:
        request = state.tasks[index].request
        assert request is not None
        state = evolve(state, mirror=request)
    return _end(state, config, index, pc)


def _end(state: State, config: Config, index: int, pc: Pc) -> State:
    """Release both locks, then the local update after the push."""
    if state.provider_lock.owner == index:
        state = evolve(state, provider_lock=state.provider_lock.release())
    if state.activity_lock.owner == index:
        state = evolve(state, activity_lock=state.activity_lock.release())
    state = _settle_rebuild_lock(state)
    if config.local_update(index) is LocalUpdate.AFTER_PUSH:
        call = _without(config.call(index), state.tasks[index].dropped)
        state = evolve(state, local=_upsert(state.local, call.adds))
    if state.tasks[index].ops and config.shape.reconnect_resends is ReconnectResends.CURRENT_PUSH:
        # the record of sent ops is cleared as the push ends, whoever is in it
        state = evolve(state, tasks=tuple(_without_ops(t) for t in state.tasks))
    return state.with_task(index, pc=pc, pending=frozenset(), ops=())


def _without_ops(task: Task) -> Task:
    """`task` with no record of sent ops (itself when it has none: no copy made)."""
    return evolve(task, ops=()) if task.ops else task


def _apply(items: tuple[str, ...], call: Call) -> tuple[str, ...]:
    kept = tuple(item for item in items if item not in call.drops)
    return _upsert(kept, call.adds)


def _replace_local(state: State, local: tuple[str, ...]) -> State:
    """Give the activity a new local context object.

    A task that still holds the old object (its request is read when it diffs)
    keeps the old object, which nobody changes any more.
    """
    tasks = tuple(
        evolve(task, bound_to_local=False, request=state.local)
        if task.bound_to_local and task.pc in (Pc.WAIT_ACTIVITY, Pc.WAIT_PROVIDER)
        else task
        for task in state.tasks
    )
    return evolve(state, local=local, tasks=tasks)


def _replace_task(tasks: tuple[Task, ...], index: int, task: Task) -> tuple[Task, ...]:
    return (*tasks[:index], task, *tasks[index + 1 :])


# -- environment moves --------------------------------------------------------


def _environment_moves(state: State, config: Config) -> Iterator[tuple[Move, State]]:
    env = config.environment
    if state.to_server and state.connected:
        op = state.to_server[0]
        # the rebuild's creates are no push's: their moves name no task
        sender = None if op.task == REBUILD else op.task
        yield Move(MoveKind.SERVER_APPLY, sender, op.item), _server_apply(state, config)
        # `rejections` refuses item ops; a cancel of the response under way is answered
        if _enabled(env, MoveKind.SERVER_REJECT) and op.kind is not OpKind.CANCEL:
            yield Move(MoveKind.SERVER_REJECT, sender, op.item), _server_reject(state, op)
    if state.to_client:
        event = state.to_client[0]
        yield (
            Move(MoveKind.CLIENT_APPLY, None if event.task == REBUILD else event.task, event.item),
            _client_apply(state, config),
        )
    if _enabled(env, MoveKind.MODEL_CREATES):
        pool = config.scenario.server_pool
        if state.created < len(pool) and state.connected:
            item = pool[state.created]
            yield Move(MoveKind.MODEL_CREATES, None, item), _model_creates(state, item)
        for item in pool[: state.created] if _may_learn(state, config) else ():
            if item in state.acked and item not in state.learned:
                yield Move(MoveKind.LEARN, None, item), _learn(state, config, item)
    if _enabled(env, MoveKind.MODEL_ANCHORS_ON_DELETED) and config.stale_anchors():
        pool = config.scenario.server_pool
        anchor = _stale_anchor(state)
        if state.created < len(pool) and state.connected and anchor is not None:
            item = pool[state.created]
            yield (
                Move(MoveKind.MODEL_ANCHORS_ON_DELETED, None, item),
                _model_creates(state, item, anchor),
            )
    if _enabled(env, MoveKind.TIMEOUT):
        for index, task in enumerate(state.tasks):
            if task.pc is Pc.WAIT_ACKS and task.pending:
                yield Move(MoveKind.TIMEOUT, index), _finish(state, config, index, Pc.FAILED)
    if config.reconnects():
        if state.connected:
            yield Move(MoveKind.DISCONNECT), _disconnect(state, config)
        elif state.connected is Dropped.UNNOTICED:
            # the second `disconnect` of a drop: the session gives the dead connection up
            yield Move(MoveKind.DISCONNECT), evolve(state, connected=False)
        else:
            yield Move(MoveKind.CONNECT), _connect(state, config)


def fresh_id(item: str) -> str:
    """The id a model-created function call gets in the local context under
    `CallIds.FRESH`: another item, as far as any diff can tell."""
    return f"{item}-local"


def _may_learn(state: State, config: Config) -> bool:
    """Whether the local context can learn a model-created item now: at any moment, or,
    where the server's completion of it travels behind the events already on their
    way (`CompletionChannel.EVENTS`), only once no event is in flight to the client.

    Waiting for every event in flight, not only those sent before the completion,
    leaves no run out: the server's moves that would queue events behind the
    completion read nothing the client's moves change, so each can wait until the
    item is learned, and the run reaches the same states in another order
    (docs/model.md, "The server's completions")."""
    if config.shape.completion_channel is CompletionChannel.APART:
        return True
    return not state.to_client


def _learn(state: State, config: Config, item: str) -> State:
    """The local context learns a model-created item (tool execution starts, for a
    function call): under its server id, or under a fresh one where the shape says."""
    fresh = (
        config.shape.call_ids is CallIds.FRESH
        and config.scenario.kind(item) is ItemKind.FUNCTION_CALL
    )
    local = fresh_id(item) if fresh else item
    return evolve(state, local=_upsert(state.local, (local,)), learned=state.learned | {item})


def server_id(config: Config, item: str) -> str:
    """The server's id of `item`: the model-created function call it stands for where
    the local context holds it under a fresh id (`fresh_id`), else `item` itself."""
    if config.shape.call_ids is CallIds.FRESH:
        for created in config.scenario.server_pool:
            call = config.scenario.kind(created) is ItemKind.FUNCTION_CALL
            if call and item == fresh_id(created):
                return created
    return item


def _disconnect(state: State, config: Config) -> State:
    """The connection drops: every op and event in flight is lost, and a rebuild
    under way with them (it gives up the session lock it held or waited for).
    A shape with a drop window goes on treating the connection as active until
    the next `disconnect`, when it gives the dead connection up."""
    lock = state.provider_lock
    if REBUILD in lock.waiters:
        lock = attrs.evolve(lock, waiters=tuple(w for w in lock.waiters if w != REBUILD))
    if lock.owner == REBUILD:
        lock = lock.release()
    connected: bool | Dropped = (
        Dropped.UNNOTICED if config.shape.drop_window is not DropWindow.NONE else False
    )
    return evolve(state, connected=connected, to_server=(), to_client=(), provider_lock=lock)


def _connect(state: State, config: Config) -> State:
    """A new server session, as the rebuilding sessions open one: a request kept back
    becomes the mirror, the mirror (all of it, or what the shape rebuilds) goes to the
    new, empty server conversation, and the ops still awaited go again after it (then
    those queued while disconnected). The shape says whether the server holds the
    rebuild in this step with the mirror kept, or the mirror is emptied and the
    rebuild travels as creates whose added events fill it again."""
    shape = config.shape
    if shape.reconnect_resends is ReconnectResends.NONE:
        for index, task in enumerate(state.tasks):
            if task.pc is Pc.WAIT_ACKS:
                state = _finish(state, config, index, Pc.FAILED)
    mirror = state.mirror if state.kept is None else state.kept
    if shape.rebuilds is Rebuilds.NO_FUNCTION_ITEMS:
        mirror = tuple(item for item in mirror if not _function_item(config, item))
    if shape.open_messages is OpenMessages.LEFT_OUT:
        unended = _unended_messages(state, config)
        mirror = tuple(item for item in mirror if item not in unended)
    if shape.window_rebuild is WindowRebuild.UNQUEUED_THEN_QUEUE:
        # what the drop window queued goes once, behind the rebuild
        queued = {op.item for op in state.to_server if op.kind is OpKind.CREATE}
        mirror = tuple(item for item in mirror if item not in queued)
    resend = tuple(
        op
        for task in state.tasks
        if task.pc is Pc.WAIT_ACKS
        for op in task.ops
        if op.key in task.pending and op not in state.to_server
    )
    state = _end_interrupted(evolve(state, connected=True, kept=None))
    if shape.reconnect_mirror is ReconnectMirror.AT_ONCE:
        items = frozenset(mirror)
        return evolve(
            state,
            mirror=mirror,
            server=mirror,
            to_server=resend + state.to_server,
            reached=state.reached | items,
            sent=state.sent | items,
            rebuilt=state.rebuilt | (items & state.removed),
        )
    # The replay's creates head the new connection's FIFO and go to an empty
    # conversation that refuses none of them (docs/model.md): the server holds them
    # from this step on, and their added events are on their way to the mirror.
    items = frozenset(mirror)
    rebuild = tuple(
        Event(EventKind.ADDED, item, mirror[position - 1] if position else None, task=REBUILD)
        for position, item in enumerate(mirror)
    )
    state = evolve(
        state,
        mirror=(),
        server=mirror,
        to_server=resend + state.to_server,
        to_client=rebuild,
        reached=state.reached | items,
        sent=state.sent | items,
        rebuilt=state.rebuilt | (items & state.removed),
    )
    if rebuild and shape.reconnect_lock is ReconnectLock.SESSION_LOCK:
        state = evolve(state, provider_lock=state.provider_lock.take(REBUILD))
    return state


def _end_interrupted(state: State) -> State:
    """A reconnect ends the generation under way (the session closes it once the
    rebuild is sent): a task still waiting for its done event runs on, and a cancel
    queued while disconnected asks the new server to end nothing."""
    if not any(task.pc is Pc.WAIT_DONE for task in state.tasks):
        return state
    return evolve(
        state,
        to_server=tuple(op for op in state.to_server if op.kind is not OpKind.CANCEL),
        tasks=tuple(
            evolve(task, pc=Pc.ENDED) if task.pc is Pc.WAIT_DONE else task for task in state.tasks
        ),
    )


def _unended_messages(state: State, config: Config) -> frozenset[str]:
    """The messages of a generation that has not ended: the never-played items of each
    call still waiting for the done event that answers its cancel."""
    return frozenset(
        item
        for index, task in enumerate(state.tasks)
        if task.pc is Pc.WAIT_DONE
        for item in config.call(index).drops
        if not _function_item(config, item)
    )


def _function_item(config: Config, item: str) -> bool:
    return config.scenario.kind(item) in (ItemKind.FUNCTION_CALL, ItemKind.FUNCTION_OUTPUT)


def _rebuilding(state: State) -> bool:
    """Whether a create of the rebuild, or its answer, is still in flight."""
    return any(op.task == REBUILD for op in state.to_server) or any(
        event.task == REBUILD for event in state.to_client
    )


def _settle_rebuild_lock(state: State) -> State:
    """A rebuild that holds the session lock gives it up once it is answered."""
    if state.provider_lock.owner == REBUILD and not _rebuilding(state):
        return evolve(state, provider_lock=state.provider_lock.release())
    return state


def _orphans(state: State, config: Config, call: Call) -> frozenset[str]:
    """The function outputs of `call` the session drops: no function call in its mirror."""
    if config.shape.orphan_outputs is not OrphanOutputs.DROPPED:
        return frozenset()
    outputs = frozenset(
        item for item in call.adds if config.scenario.kind(item) is ItemKind.FUNCTION_OUTPUT
    )
    if not outputs or any(
        config.scenario.kind(item) is ItemKind.FUNCTION_CALL for item in state.mirror
    ):
        return frozenset()
    return outputs


def _without(call: Call, dropped: frozenset[str]) -> Call:
    if not dropped:
        return call
    return evolve(call, adds=tuple(item for item in call.adds if item not in dropped))


def _unanchored(state: State, config: Config, op: Op) -> bool:
    """A function output the server refuses: it holds no function call."""
    return (
        config.shape.orphan_outputs is OrphanOutputs.REFUSED
        and config.scenario.kind(op.item) is ItemKind.FUNCTION_OUTPUT
        and not any(config.scenario.kind(item) is ItemKind.FUNCTION_CALL for item in state.server)
    )


def _enabled(env: Environment, kind: MoveKind) -> bool:
    """Whether the environment allows moves of `kind` (`MOVES`: its option, if any)."""
    option = MOVES[kind].option
    return option is None or env.on(option)


def _server_apply(state: State, config: Config) -> State:
    op, rest = state.to_server[0], state.to_server[1:]
    if op.kind is OpKind.CANCEL:
        # the server ends the response and says so behind the answers it gave before
        done = Event(EventKind.DONE, RESPONSE, task=op.task)
        return evolve(state, to_server=rest, to_client=(*state.to_client, done))
    server = state.server
    if not config.shape.sends_deletes:
        # an append: no anchor and no id the server checks, so it goes at the tail,
        # even for an item the server holds already
        return _placed(state, op, (*server, op.item))
    if op.kind is OpKind.DELETE:
        if op.item not in server:
            return _reject(state, op)
        return evolve(
            state,
            to_server=rest,
            server=tuple(item for item in server if item != op.item),
            removed=state.removed | {op.item},
            to_client=(*state.to_client, Event(EventKind.DELETED, op.item, task=op.task)),
        )
    if op.item in server:
        return _reject(state, op, duplicate=True)
    if _unanchored(state, config, op):
        # pushed, yet never to arrive, when the call it answers had been on the server
        calls = {i for i in state.reached if config.scenario.kind(i) is ItemKind.FUNCTION_CALL}
        refused = state.refused | {op.item} if calls else state.refused
        return evolve(_reject(state, op), refused=refused)
    if op.after is not None and op.after not in server:
        refused = state.refused | {op.item} if op.after in state.removed else state.refused
        return evolve(_reject(state, op), refused=refused)
    return _placed(state, op, insert_after(server, op.item, op.after))


def _placed(state: State, op: Op, placed: tuple[str, ...]) -> State:
    """The server holds `placed` after applying create `op`, and says so."""
    recreated, rebuilt = state.recreated, state.rebuilt
    if op.item in state.removed:
        if op.task == REBUILD:
            rebuilt = rebuilt | {op.item}
        else:
            recreated = recreated | {(op.task, op.item)}
    return evolve(
        state,
        rebuilt=rebuilt,
        to_server=state.to_server[1:],
        server=placed,
        reached=state.reached | {op.item},
        recreated=recreated,
        to_client=(
            *state.to_client,
            Event(EventKind.ADDED, op.item, after=op.after, task=op.task),
        ),
    )


def _server_reject(state: State, op: Op) -> State:
    return _reject(state, op)


def _reject(state: State, op: Op, duplicate: bool = False) -> State:
    event = Event(EventKind.REJECTED, op.item, op=op.kind, task=op.task, duplicate=duplicate)
    return evolve(state, to_server=state.to_server[1:], to_client=(*state.to_client, event))


def _stale_anchor(state: State) -> str | None:
    """The deleted item the model's next item may be announced after: the last by
    name of those a delete removed and the server does not hold again.

    Which one does not matter to any session: each one's deleted event is ahead
    of the announcement in the FIFO, so by then no mirror driven by events holds it.
    """
    gone = sorted(item for item in state.removed if item not in state.server)
    return gone[-1] if gone else None


def _model_creates(state: State, item: str, anchor: str | None = None) -> State:
    """The model's item goes at the server's tail; the announcement names the
    server's last item, or `anchor` (an item the server has deleted) when given."""
    after = anchor if anchor is not None else (state.server[-1] if state.server else None)
    return evolve(
        state,
        server=(*state.server, item),
        reached=state.reached | {item},
        sent=state.sent | {item},
        created=state.created + 1,
        to_client=(*state.to_client, Event(EventKind.ADDED, item, after=after)),
    )


def _placeholder(state: State, config: Config, event: Event) -> State:
    """The agent's handler of an announced item (`RemoteItemAdded.APPENDED_AFTER_LAST`):
    the live local context gets the item when it lacks it and the item has no
    anchor or its anchor is the context's last item. A replacement bound to the
    live object (`Task.bound_to_local`) reads it at its diff, as the real
    `update_chat_ctx` pushes that object."""
    if config.shape.remote_item_added is not RemoteItemAdded.APPENDED_AFTER_LAST:
        return state
    if event.item in state.local or not _anchor_is_last(state, config, event):
        return state
    return evolve(state, local=(*state.local, event.item))


def _anchor_is_last(state: State, config: Config, event: Event) -> bool:
    """Whether the announced item's real anchor is the real local context's last item.

    The model's last item stands for the real one, with two facts of the records:
    a call's own item whose site puts it after a hidden item (`Site.after_hidden_call`,
    a tool output after its function call) has that item as its real anchor, which
    is the last one when the model's anchor is; a hidden item after the start's
    items (`SessionShape.local_tail`) is the real last item while the model's last
    is a start item, or there is none, so only an item with no anchor matches then."""
    local = state.local
    last = local[-1] if local else None
    task = _adder(config, event)
    if (
        task is not None
        and config.site(task).after_hidden_call
        and event.item in config.call(task).adds
    ):
        return event.after == last
    if event.after is None:
        return True
    hidden = config.shape.local_tail is LocalTail.LOCAL_ONLY and (
        last is None or last in config.scenario.initial_local
    )
    return event.after == last and not hidden


def _adder(config: Config, event: Event) -> int | None:
    """The task whose call adds the announced item, for `_anchor_is_last`: the sender;
    for a rebuild's announcement, the call whose new items hold it (the replay sends
    the mirror in order, where a tool output still follows its function call)."""
    if event.task != REBUILD:
        return event.task
    for index, call in enumerate(config.scenario.calls):
        if event.item in call.adds:
            return index
    return None


def _client_apply(state: State, config: Config) -> State:
    """The session applies the next event to its mirror (where the shape's mirror
    follows events, or its own handlers take the model's items) and resolves the
    ack it answers."""
    event, rest = state.to_client[0], state.to_client[1:]
    state = evolve(state, to_client=rest)
    if event.kind is EventKind.DONE:
        # the interrupted generation ends; its task runs on to its push by itself
        assert event.task is not None and state.tasks[event.task].pc is Pc.WAIT_DONE
        return state.with_task(event.task, pc=Pc.ENDED)
    shape = config.shape
    three_way = config.three_way()
    on_events = shape.mirror_update is MirrorUpdate.ON_EVENTS
    if event.kind is EventKind.ADDED:
        by_session = event.task is None and shape.model_items is ModelItems.BY_SESSION
        if on_events or by_session:
            mirror = state.mirror
            dropped = (
                event.after is not None
                and event.after not in mirror
                and shape.unknown_anchor is UnknownAnchor.DROPPED
            )
            if event.item not in mirror and not dropped:
                mirror = insert_after(mirror, event.item, event.after)
            state = evolve(state, mirror=mirror, acked=state.acked | {event.item})
        state = _placeholder(state, config, event)
        key = (OpKind.CREATE, event.item)
    elif event.kind is EventKind.DELETED:
        if on_events:
            mirror = tuple(item for item in state.mirror if item != event.item)
            gone = state.gone | {event.item} if three_way else state.gone
            state = evolve(state, mirror=mirror, gone=gone)
        key = (OpKind.DELETE, event.item)
    else:
        assert event.op is not None
        key = (event.op, event.item)
    state = _settle_rebuild_lock(state)
    if event.task is None:
        return state
    # the mirror-diff session resolves an added or deleted event by (kind, item),
    # whoever sent the op, as the real session's futures do; an error event answers
    # one sent event id, so only its own push, if that push still waits for it.
    # The three-way session keys every ack by op.
    own_only = three_way or event.kind is EventKind.REJECTED
    ignored = event.duplicate and shape.duplicate_rejection is DuplicateRejection.LEFT_WAITING
    tasks = tuple(
        evolve(task, pending=task.pending - {key})
        if task.pc is Pc.WAIT_ACKS
        and key in task.pending
        and (not own_only or index == event.task)
        and not ignored
        else task
        for index, task in enumerate(state.tasks)
    )
    if event.task == REBUILD:
        # the rebuild's answer settles above what a mirror-diff push waits for by
        # (kind, item); it answers no push's own op, so no push is its waiter
        return evolve(state, tasks=tasks)
    waiter = tasks[event.task]
    if waiter.pc is Pc.WAIT_ACKS and key in waiter.pending:
        # the answer to this push's own op has reached the session, and it waits on
        waiter = evolve(waiter, stalled=waiter.stalled | {key})
        tasks = _replace_task(tasks, event.task, waiter)
    outstanding = state.outstanding
    for position, op in enumerate(outstanding):
        if op.key == key and op.task == event.task:
            outstanding = outstanding[:position] + outstanding[position + 1 :]
            break
    return evolve(state, tasks=tasks, outstanding=outstanding)
