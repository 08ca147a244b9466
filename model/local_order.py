"""The local context's order: where livekit's `ChatContext` puts an item that enters late.

livekit-agents 1.8.9 inserts an item after the last item created no later than
it (`docs/model.md`, "The local context's order"). That differs from an append
only for an item that enters the local context after it was created, while
something younger entered in between. So the state keeps `State.born`: the
creation order of every item created since the oldest item that has yet to
enter, and nothing once no item waits. An item outside it is older than every
item in it.

The successor function calls `before_call` for the extra step of a site whose
items are created before its call, and `follow` on every other successor: it
records the items the move created and puts the items the move added to the
local context where their creation time puts them.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from typing import TYPE_CHECKING, TypeVar

from attrs import frozen

from model.move_table import MOVES, Actor, MoveKind
from model.sites import (
    LOCAL_ORDER,
    Creation,
    LocalOrder,
    LocalPosition,
    LocalUpdate,
    RequestSource,
    local_order,
)
from model.state import Pc, State, evolve

#: An item: its id in the model's states, or its number in the compact encoding's.
_I = TypeVar("_I", bound=Hashable)

if TYPE_CHECKING:
    from model.moves import Config

__all__ = [
    "Plan",
    "before_call",
    "follow",
    "late",
    "matching",
    "ordered",
    "plan",
    "request",
    "unordered",
    "upsert",
]

#: The moves a push task or its caller makes: the others are the environment's.
_OWN = frozenset(
    kind for kind, spec in MOVES.items() if spec.actor in (Actor.APPLICATION, Actor.TASK)
)
#: The program counters before a call.
_UNCALLED = frozenset({Pc.IDLE, Pc.COPIED})
#: The program counters once a push has returned or raised.
_ENDED = frozenset({Pc.DONE, Pc.FAILED})
#: The program counters of an interrupted generation waiting for its done event (or
#: past it, before its push): called, and its local update still to come.
_INTERRUPTED = frozenset({Pc.WAIT_DONE, Pc.ENDED})
#: The program counters before the step that takes a mirror snapshot.
_UNSNAPPED = _UNCALLED | {Pc.WAIT_ACTIVITY} | _INTERRUPTED


@frozen
class Plan:
    """What one task's order needs, read once per config from its records."""

    order: LocalOrder
    update: LocalUpdate
    adds: tuple[str, ...]
    #: Its request is a mirror snapshot (the user turn's message is made on it).
    snapshots: bool

    def entered(self, pc: Pc) -> bool:
        """Whether its items have entered the local context (or never will) at `pc`."""
        if self.update is LocalUpdate.AFTER_PUSH:
            return pc in _ENDED
        if self.update is LocalUpdate.NONE:
            return True
        # an interrupted generation's update comes when its done event has ended it
        return pc not in _UNCALLED and pc not in _INTERRUPTED

    def places_request(self) -> bool:
        """Whether its push inserts its items into its copy of the mirror by creation
        time (`LocalOrder.request`), where the others append them."""
        return (
            self.snapshots and bool(self.adds) and self.order.request is LocalPosition.BY_CREATED_AT
        )

    def waits(self, pc: Pc) -> bool:
        """Whether its items still wait at `pc` for a step that places them by creation
        time: their entry into the local context, or their request's snapshot."""
        return not self.entered(pc) or (self.places_request() and pc in _UNSNAPPED)

    def created_by(self, kind: MoveKind, before: Pc, after: Pc) -> bool:
        """Whether a move of `kind` by this task, from `before` to `after`, creates its
        items (a `before-call` site not yet created is created at its call)."""
        created = self.order.created
        if kind is MoveKind.BEFORE_CALL:
            return True
        if created is Creation.AT_SNAPSHOT and self.snapshots:
            if self.update is LocalUpdate.BEFORE_PUSH:
                # they enter the local context at the call, so they exist by then
                return kind is MoveKind.CALL
            # the step that takes the mirror snapshot: the call with the lock free,
            # or the wake of a call that waited for the activity lock
            if kind is MoveKind.CALL:
                return after is not Pc.WAIT_ACTIVITY
            return kind is MoveKind.WAKE and before is Pc.WAIT_ACTIVITY
        return kind is MoveKind.CALL


#: Plans by config identity (the config is kept with its plan, so its id stays its
#: own): hashing a config on every move would cost more than the moves.
_PLANS: dict[int, tuple[Config, tuple[Plan, ...]]] = {}


def plan(config: Config) -> tuple[Plan, ...]:
    """Each task's `Plan` under `config`."""
    found = _PLANS.get(id(config))
    if found is not None and found[0] is config:
        return found[1]
    if len(_PLANS) > 512:
        _PLANS.clear()
        _ORDERED.clear()
    made = _plan(config)
    _PLANS[id(config)] = (config, made)
    return made


#: `ordered(plans)` by the identity of the plans `plan` keeps (`follow` asks on every
#: successor).
_ORDERED: dict[int, tuple[tuple[Plan, ...], bool]] = {}


def _ordered(plans: tuple[Plan, ...]) -> bool:
    found = _ORDERED.get(id(plans))
    if found is not None and found[0] is plans:
        return found[1]
    answer = ordered(plans)
    _ORDERED[id(plans)] = (plans, answer)
    return answer


def _plan(config: Config) -> tuple[Plan, ...]:
    return tuple(
        Plan(
            local_order(config.site(task), _table(config)),
            config.local_update(task),
            config.call(task).adds,
            config.site(task).request is RequestSource.MIRROR_SNAPSHOT,
        )
        for task in range(len(config.scenario.calls))
    )


def _table(config: Config) -> dict[str, LocalOrder] | None:
    """The local-order table of `config`: none under the model of appends, else the
    catalog's with the config's own records (`Config.local_orders`) first."""
    if config.appends_locally:
        return {}
    if not config.local_orders:
        return None
    return {**LOCAL_ORDER, **dict(config.local_orders)}


def ordered(plans: tuple[Plan, ...]) -> bool:
    """Whether anything reads the creation order: a site placing by it, or one whose
    items are created before its call. Without one, `State.born` stays empty."""
    return any(
        task_plan.order.position is LocalPosition.BY_CREATED_AT
        or (task_plan.order.created is Creation.BEFORE_CALL and bool(task_plan.adds))
        or task_plan.places_request()
        for task_plan in plans
    )


def late(task_plan: Plan) -> bool:
    """Whether a task's items can be created before they enter the local context."""
    if not task_plan.adds:
        return False
    return (
        task_plan.order.created is Creation.BEFORE_CALL
        or task_plan.update is LocalUpdate.AFTER_PUSH
    )


def upsert(
    items: tuple[_I, ...], adds: tuple[_I, ...], born: tuple[_I, ...] = ()
) -> tuple[_I, ...]:
    """Each add not yet in `items`, placed as livekit's `ChatContext.insert` places it.

    The real insert walks back from the tail to the last item created no later
    than the new one and puts it right after. `born` lists items in the order
    they were created; an item outside it is older than every item in it, and
    an add outside it is created now, so it goes at the tail. With no `born`
    every add is appended.
    """
    if not born:
        return items + tuple(item for item in adds if item not in items)
    rank = {item: position for position, item in enumerate(born)}
    placed = list(items)
    for item in adds:
        if item in placed:
            continue
        mine = rank.get(item)
        if mine is None:
            placed.append(item)
            continue
        position = len(placed)
        while position and rank.get(placed[position - 1], -1) > mine:
            position -= 1
        placed.insert(position, item)
    return tuple(placed)


def request(
    task_plan: Plan, items: tuple[_I, ...], adds: tuple[_I, ...], born: tuple[_I, ...]
) -> tuple[_I, ...]:
    """A snapshot push's request: `items` (the mirror's copy, its drops gone) with
    `adds` appended, or placed by creation time (`born`) where the site inserts
    them into its copy (`Plan.places_request`; livekit 1.8.9's `say()` push,
    `rt_chat_ctx.insert(spoken_msg)`). The copy's items carry no stamps of their
    own in the model: each is ranked by its place in `born`, and one outside it
    is older than every item in it."""
    return upsert(items, adds, born if task_plan.places_request() else ())


def before_call(state: State, config: Config) -> Iterator[tuple[int, State]]:
    """The `before-call` steps enabled in `state`: a site whose items are created before
    its call (a tool returns, a playout starts) may create them at any moment before
    it; the call creates them itself if this step has not."""
    for index, task_plan in enumerate(plan(config)):
        if task_plan.order.created is not Creation.BEFORE_CALL or not task_plan.adds:
            continue
        if state.tasks[index].pc not in _UNCALLED:
            continue
        if all(item in state.born for item in task_plan.adds):
            continue
        if not _others_may_create(state, config, index):
            # created now or at the call: nothing comes in between, the same order
            continue
        yield index, _record(state, config, state.born, task_plan.adds)


def _others_may_create(state: State, config: Config, index: int) -> bool:
    """Whether an item can still be created by a call other than `index`, or by the
    environment (a server item the local context has yet to learn)."""
    pool = config.scenario.server_pool
    if any(item not in state.local for item in pool):
        return True
    for other, task_plan in enumerate(plan(config)):
        if other == index or not task_plan.adds:
            continue
        if not uncreated(task_plan, state.tasks[other].pc, state.born):
            continue
        return True
    return False


def uncreated(task_plan: Plan, pc: Pc, born: tuple[str, ...]) -> bool:
    """Whether a task at `pc` has yet to create its items (`born`: the creation order)."""
    created = task_plan.order.created
    if created is Creation.AT_SNAPSHOT and task_plan.snapshots:
        if task_plan.update is LocalUpdate.BEFORE_PUSH:
            return pc in _UNCALLED
        return pc in _UNCALLED or pc is Pc.WAIT_ACTIVITY
    if pc not in _UNCALLED:
        return False
    return created is not Creation.BEFORE_CALL or not all(i in born for i in task_plan.adds)


def follow(before: State, config: Config, kind: MoveKind, task: int | None, after: State) -> State:
    """`after` (the successor of a move of `kind`, naming `task` or none) with the items
    the move created recorded, and the items it added to the local context placed
    by creation time where their site's position says so."""
    plans = plan(config)
    if not _ordered(plans):
        return after
    own = kind in _OWN and task is not None
    placed: tuple[str, ...] = ()
    # a push entering its items: its own step, a timeout, a reconnect that ends it
    for index, task_plan in enumerate(plans if after.local != before.local else ()):
        if task_plan.order.position is not LocalPosition.BY_CREATED_AT:
            continue
        if task_plan.entered(before.tasks[index].pc):
            continue
        placed += tuple(
            item for item in task_plan.adds if item in after.local and item not in before.local
        )
    created: tuple[str, ...] = ()
    if own and task is not None:
        task_plan = plans[task]
        if task_plan.created_by(kind, before.tasks[task].pc, after.tasks[task].pc):
            created = tuple(item for item in task_plan.adds if item not in before.born)
    elif not own:
        # the environment's items (a learned function call, an announced item the
        # agent writes locally) are created as they enter: at the tail
        created = tuple(
            item for item in after.local if item not in before.local and item not in placed
        )
    if not created and not placed and not before.born:
        return after
    born = before.born + created
    if placed:
        kept = tuple(item for item in after.local if item not in placed)
        after = evolve(after, local=upsert(kept, placed, born))
    return _record(after, config, born, ())


def _record(state: State, config: Config, born: tuple[str, ...], created: tuple[str, ...]) -> State:
    """`state` with `born` plus `created` as its creation order, less the items
    nothing waiting can pass: those created before the oldest item still to enter."""
    born = born + tuple(item for item in created if item not in born)
    waiting = {
        item
        for index, task_plan in enumerate(plan(config))
        if task_plan.waits(state.tasks[index].pc)
        for item in task_plan.adds
    }
    start = 0
    while start < len(born) and born[start] not in waiting:
        start += 1
    born = born[start:]
    return state if born == state.born else evolve(state, born=born)


def unordered(state: State) -> State:
    """`state` without its creation order: what a harness can observe of it (an
    implementation keeps no creation times the model could read)."""
    return state if not state.born else evolve(state, born=())


def matching(observed: State, expected: Iterable[State]) -> State:
    """The state of `expected` that `observed` (with no creation order) is, or
    `observed` itself when none is: the harness takes the order from the model."""
    for state in expected:
        if unordered(state) == observed:
            return state
    return observed
