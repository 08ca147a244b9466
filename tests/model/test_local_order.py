"""The local context's order: livekit inserts by creation time, the model's state appends.

livekit-agents 1.8.9 puts an item into the local context after the last item
created no later than it (`docs/model.md`, "The local context's order"). The
user turn's message is created when its push starts and enters the local
context when the push returns; a tool output is created when its tool returns
and enters when the generation task resumes. The model's `State` carries no
creation times yet, so these tests carry them beside each state (`born`: the
items in creation order, and a step `created T` for a site whose items are
created before its call) and place items with the model's own `_upsert`.

Under `lock5`, a user turn, a tool output and a replacement:

* the explorer's depth-10 trace, where the tool returns at its call (after the
  user message was created), is an artefact of the append order: placed by
  creation time, the local context has the mirror's order and nothing is lost;
* the same scenario loses the acknowledged user message, at the same depth,
  when the tool returned before the user message was created (`created T1`
  first): the output is older than the message and enters after it;
* and at the model's step grain, one call later (15 steps): a tool output
  created while the user turn waits for the lock.

`tests/livekit/test_local_order.py` replays all three against livekit 1.8.9.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from attrs import evolve, frozen

from model import Config, Invariant, Move, MoveKind, Pc, State, initial_state
from model.environment import BASE
from model.invariants import check
from model.moves import _upsert, successors
from model.scenarios import SCENARIOS, Call, Scenario
from model.sites import (
    LOCAL_ORDER,
    SITES,
    SITES_BY_NAME,
    Creation,
    LocalOrder,
    LocalPosition,
    LocalUpdate,
    RequestSource,
    local_order,
)
from model.variants import VARIANTS, VARIANTS_BY_NAME
from proofs.engines.explore import explore
from proofs.engines.sweep import mixes, shapes
from proofs.engines.sweep import scenario as sweep_scenario

LOCK5 = VARIANTS_BY_NAME["lock5"]

#: The explorer's three-call mix (as `ackguard explore --sweep 3` names it).
ARTEFACT = Scenario(
    name="user-turn + tool-outputs + replacement",
    summary="a user turn, a tool output queued behind it, then a replacement",
    calls=(
        Call("user-turn", adds=("user-turn-0",)),
        Call("tool-outputs", adds=("tool-outputs-1",)),
        Call("replacement", adds=("replacement-2",)),
    ),
    server=("msg0", "asst1"),
)

#: One call more: a tool output created while the user turn waits for the lock.
REAL = Scenario(
    name="tool-outputs + user-turn + tool-outputs + replacement",
    summary="a tool output created while the user turn waits for the activity lock",
    calls=(
        Call("tool-outputs", adds=("out0",)),
        Call("user-turn", adds=("hello",)),
        Call("tool-outputs", adds=("out2",)),
        Call("replacement"),
    ),
)

#: The old order: every site appends, and creates its items at its call.
OLD_ORDER: dict[str, LocalOrder] = {}


@frozen
class Clock:
    """A model config, and the local order of its sites."""

    config: Config
    orders: dict[str, LocalOrder] = LOCAL_ORDER

    def order(self, task: int) -> LocalOrder:
        return local_order(self.config.site(task), self.orders)


def _clock(scenario: Scenario, *, old: bool = False) -> Clock:
    return Clock(Config(LOCK5, scenario, BASE), OLD_ORDER if old else LOCAL_ORDER)


@frozen
class Birth:
    """The step a `before-call` site's items are created in (not a model move yet)."""

    task: int

    def label(self) -> str:
        return f"created T{self.task}"


Step = Move | Birth
Clocked = tuple[State, tuple[str, ...]]


def _created(clock: Clock, before: State, move: Move, after: State) -> tuple[str, ...]:
    """The items `move` creates (gives their creation time), in order."""
    if move.kind is MoveKind.LEARN:
        # the activity stamps a server's function call when its tool starts
        assert move.item is not None
        return (move.item,)
    if move.task is None or move.kind not in (MoveKind.CALL, MoveKind.WAKE):
        return ()
    created = clock.order(move.task).created
    adds = clock.config.call(move.task).adds
    if created is Creation.BEFORE_CALL:
        return ()
    snapshots = clock.config.site(move.task).request is RequestSource.MIRROR_SNAPSHOT
    if created is not Creation.AT_SNAPSHOT or not snapshots:
        return adds if move.kind is MoveKind.CALL else ()
    # created when the push takes its snapshot: the call, when the lock was free
    snapped = before.tasks[move.task].request is None and after.tasks[move.task].request is not None
    return adds if snapped else ()


def _placed(clock: Clock, move: Move, update: LocalUpdate) -> tuple[str, ...]:
    """The items `move` adds to the local context by creation time, for a site that
    updates it at `update` (after the push: on its return; before: at its call)."""
    if move.task is None or clock.order(move.task).position is not LocalPosition.BY_CREATED_AT:
        return ()
    if clock.config.local_update(move.task) is not update:
        return ()
    if update is LocalUpdate.AFTER_PUSH and move.kind in (MoveKind.RESUME, MoveKind.TIMEOUT):
        return clock.config.call(move.task).adds
    if update is LocalUpdate.BEFORE_PUSH and move.kind is MoveKind.CALL:
        return clock.config.call(move.task).adds
    return ()


def _unborn(clock: Clock, state: State, born: tuple[str, ...], task: int) -> bool:
    """A `before-call` task whose items are not created yet (it cannot be called)."""
    adds = clock.config.call(task).adds
    return (
        clock.order(task).created is Creation.BEFORE_CALL
        and state.tasks[task].pc is Pc.IDLE
        and any(item not in born for item in adds)
    )


def clocked_successors(clock: Clock, node: Clocked) -> Iterator[tuple[Step, Clocked]]:
    """The model's successors, with creation times kept and items placed by them."""
    state, born = node
    for task in range(len(state.tasks)):
        if _unborn(clock, state, born, task):
            yield Birth(task), (state, born + clock.config.call(task).adds)
    for move, after in successors(state, clock.config):
        called = move.task is not None and move.kind is MoveKind.CALL
        if called and move.task is not None and _unborn(clock, state, born, move.task):
            continue
        created = _created(clock, state, move, after)
        grown = tuple(item for item in born if item not in created) + created
        late = _placed(clock, move, LocalUpdate.AFTER_PUSH)
        if late:
            # `_finish` appended them to the local context it found; place them instead
            assert after.local == _upsert(state.local, late)
            after = evolve(after, local=_upsert(state.local, late, grown))
        early = _placed(clock, move, LocalUpdate.BEFORE_PUSH)
        if early:
            # the call appended them (`_apply`); place them by their creation time
            kept = tuple(item for item in after.local if item not in early)
            after = evolve(after, local=_upsert(kept, early, grown))
        yield move, (after, grown)


def shortest(clock: Clock, invariant: Invariant) -> tuple[tuple[Step, ...], State] | None:
    """Breadth-first over the clocked states: the shortest violation, or None."""
    start: Clocked = (initial_state(clock.config), ())
    parents: dict[Clocked, tuple[Clocked, Step] | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if check(node[0], clock.config, invariant) is not None:
            steps: list[Step] = []
            at = parents[node]
            while at is not None:
                steps.append(at[1])
                at = parents[at[0]]
            return tuple(reversed(steps)), node[0]
        for move, successor in clocked_successors(clock, node):
            if successor not in parents:
                parents[successor] = (node, move)
                queue.append(successor)
    return None


# -- the helper --------------------------------------------------------------------


def test_upsert_places_an_item_after_the_last_one_created_before_it() -> None:
    # hello was created before out1 and enters after it: it goes before out1
    assert _upsert(("msg0", "out1"), ("hello",), born=("hello", "out1")) == (
        "msg0",
        "hello",
        "out1",
    )
    # created after out1: the tail, as an append
    assert _upsert(("msg0", "out1"), ("hello",), born=("out1", "hello")) == (
        "msg0",
        "out1",
        "hello",
    )
    # items outside `born` are older than every item in it
    assert _upsert(("msg0", "asst1"), ("hello",), born=("hello",)) == ("msg0", "asst1", "hello")
    # an add outside `born` is created now; with no `born` every add is appended
    assert _upsert(("out1",), ("hello",), born=("out1",)) == ("out1", "hello")
    assert _upsert(("msg0",), ("msg0", "hello")) == ("msg0", "hello")


def test_the_catalog_says_where_each_site_puts_its_items() -> None:
    user_turn = local_order(SITES_BY_NAME["user-turn"])
    assert user_turn == LocalOrder(LocalPosition.BY_CREATED_AT, Creation.AT_SNAPSHOT)
    assert local_order(SITES_BY_NAME["replacement"]) == LocalOrder()
    for name in ("tool-outputs", "interrupted-tool-outputs", "spoken-message"):
        order = local_order(SITES_BY_NAME[name])
        assert order == LocalOrder(LocalPosition.BY_CREATED_AT, Creation.BEFORE_CALL)
    assert set(LOCAL_ORDER) == set(SITES_BY_NAME)


# -- the counterexample -------------------------------------------------------------


def run_clocked(clock: Clock, steps: tuple[Step, ...]) -> Clocked:
    """Follow `steps` through the clocked model (AssertionError if one is not enabled)."""
    node: Clocked = (initial_state(clock.config), ())
    for wanted in steps:
        for taken, successor in clocked_successors(clock, node):
            if taken == wanted:
                node = successor
                break
        else:
            raise AssertionError(f"{wanted.label()} is not enabled")
    return node


def _explorer_trace() -> tuple[Move, ...]:
    finding = explore(_clock(ARTEFACT).config).finding(Invariant.NO_UNINTENDED_DELETE)
    assert finding.trace is not None
    return tuple(step.move for step in finding.trace.steps)


def test_the_clocked_model_with_the_old_order_is_the_model() -> None:
    """Every site appending and creating at its call: the clocked search is the explorer."""
    clock = _clock(ARTEFACT, old=True)
    found = shortest(clock, Invariant.NO_UNINTENDED_DELETE)
    assert found is not None
    steps, last = found
    assert steps == _explorer_trace()
    violation = check(last, clock.config, Invariant.NO_UNINTENDED_DELETE)
    assert violation is not None and violation.item == "user-turn-0"
    assert len(steps) == 10
    # the user message entered the local context after the tool output
    assert last.local[-3:] == ("tool-outputs-1", "user-turn-0", "replacement-2")
    assert last.mirror[-2:] == ("user-turn-0", "tool-outputs-1")


def _with_births(moves: tuple[Move, ...], clock: Clock) -> tuple[Step, ...]:
    """The moves, with each `before-call` site's items created right before its call."""
    steps: list[Step] = []
    for move in moves:
        called = move.kind is MoveKind.CALL and move.task is not None
        if (
            called
            and move.task is not None
            and clock.order(move.task).created is Creation.BEFORE_CALL
        ):
            steps.append(Birth(move.task))
        steps.append(move)
    return tuple(steps)


def test_the_explorers_depth_10_trace_is_an_artefact_of_the_append_order() -> None:
    """The tool returns at its call, after the user message: no loss by creation time."""
    clock = _clock(ARTEFACT)
    state, _ = run_clocked(clock, _with_births(_explorer_trace(), clock))
    assert check(state, clock.config, Invariant.NO_UNINTENDED_DELETE) is None
    assert state.local == ("msg0", "asst1", "user-turn-0", "tool-outputs-1", "replacement-2")
    assert state.mirror == ("msg0", "asst1", "user-turn-0", "tool-outputs-1")
    # the old order, on the same trace, delete the acknowledged user message
    old = _clock(ARTEFACT, old=True)
    state, _ = run_clocked(old, _explorer_trace())
    assert check(state, old.config, Invariant.NO_UNINTENDED_DELETE) is not None


def test_the_same_loss_is_real_when_the_tool_returned_first() -> None:
    """By creation time the shortest loss is as short, with the tool's return first."""
    clock = _clock(ARTEFACT)
    found = shortest(clock, Invariant.NO_UNINTENDED_DELETE)
    assert found is not None
    steps, last = found
    assert tuple(step.label() for step in steps) == EARLY_TRACE
    violation = check(last, clock.config, Invariant.NO_UNINTENDED_DELETE)
    assert violation is not None and violation.item == "user-turn-0"
    # the older output went before the user message; the mirror has it after
    assert last.local == ("msg0", "asst1", "tool-outputs-1", "user-turn-0", "replacement-2")
    assert last.mirror == ("msg0", "asst1", "user-turn-0", "tool-outputs-1")
    # the old order appends the output and see no loss on these moves
    old = _clock(ARTEFACT, old=True)
    moves = tuple(step for step in steps if isinstance(step, Move))
    state, _ = run_clocked(old, moves)
    assert check(state, old.config, Invariant.NO_UNINTENDED_DELETE) is None


def test_the_loss_is_real_one_call_later() -> None:
    """A tool output created while the user turn waits: created first, mirrored last."""
    clock = _clock(REAL)
    moves = tuple(_parse(label) for label in REAL_TRACE)
    state, _ = run_clocked(clock, _with_births(moves, clock))
    violation = check(state, clock.config, Invariant.NO_UNINTENDED_DELETE)
    assert violation is not None and violation.item == "hello"
    assert violation.site == "replacement"
    assert state.local == ("msg0", "out0", "out2", "hello")
    assert state.mirror == ("msg0", "out0", "hello", "out2")
    # so does the old order on the same moves
    old = _clock(REAL, old=True)
    state, _ = run_clocked(old, moves)
    assert check(state, old.config, Invariant.NO_UNINTENDED_DELETE) is not None


def _parse(label: str) -> Move:
    kind, task, *item = label.split()
    return Move(MoveKind(kind), int(task.removeprefix("T")), item[0] if item else None)


#: The shortest loss by creation time (`tests/livekit/test_local_order.py` replays it).
EARLY_TRACE = (
    "created T1",
    "call T0",
    "server-apply T0 user-turn-0",
    "client-apply T0 user-turn-0",
    "resume T0",
    "call T1",
    "server-apply T1 tool-outputs-1",
    "client-apply T1 tool-outputs-1",
    "resume T1",
    "call T2",
)

#: The loss at the model's step grain with a third call (each tool returns at its call).
REAL_TRACE = (
    "call T0",
    "call T1",
    "call T2",
    "server-apply T0 out0",
    "client-apply T0 out0",
    "resume T0",
    "wake T1",
    "server-apply T1 hello",
    "client-apply T1 hello",
    "resume T1",
    "wake T2",
    "server-apply T2 out2",
    "client-apply T2 out2",
    "resume T2",
    "call T3",
)


def test_every_mix_with_a_user_turn_keeps_its_lock5_verdict() -> None:
    """Up to three calls of the sweep's shapes: the order changes which runs lose, not
    whether one does (the artefact is replaced by a real loss)."""
    alphabet = shapes(SITES)
    mixed = 0
    for mix in mixes(alphabet, 3):
        if not any(shape.site == "user-turn" for shape in mix):
            continue
        scenario = evolve(sweep_scenario(mix), server_pool=())
        by_creation = shortest(_clock(scenario), Invariant.NO_UNINTENDED_DELETE)
        appending = shortest(_clock(scenario, old=True), Invariant.NO_UNINTENDED_DELETE)
        assert (by_creation is None) == (appending is None), scenario.name
        mixed += 1
    assert mixed == 36


def test_every_catalog_verdict_stays_under_its_own_environment() -> None:
    """The catalog's scenarios are too small for the order to matter: by creation time
    each variant keeps the verdict of each invariant it has under the append order."""
    compared = 0
    for variant in VARIANTS:
        for scenario in SCENARIOS:
            config = Config(variant, scenario, scenario.environment)
            for invariant in (Invariant.NO_UNINTENDED_DELETE, Invariant.AGREEMENT_AT_REST):
                by_creation = shortest(Clock(config), invariant)
                appending = shortest(Clock(config, OLD_ORDER), invariant)
                assert (by_creation is None) == (appending is None), (variant.name, scenario.name)
                compared += 1
    assert compared == 2 * len(VARIANTS) * len(SCENARIOS)
