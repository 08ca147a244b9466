"""The local context's order: livekit inserts by creation time, the model's state appends.

livekit-agents 1.8.9 puts an item into the local context after the last item
created no later than it (`docs/model.md`, "The local context's order"). The
user turn's message is created when its push starts and enters the local
context when the push returns, so it can land before items that entered while
it was pushed. The model's `State` carries no creation times yet, so these
tests carry them beside each state (`born`: items in creation order) and place
the late items with the model's own `_upsert`. That is enough to say which
counterexamples depend on the order:

* under `lock5`, the explorer's depth-10 counterexample (a user turn, a tool
  output, then the application's replacement deleting the acknowledged user
  message) is an artefact of the append order: placed by creation time, it is
  gone from the whole state space, and the old append order (a site record
  with `local_position=tail`, the mutant) still finds it;
* the same loss is real with one call more (a tool output pushed while the user
  turn waits for the lock): the tool output is created before the user message
  but reaches the mirror after it, so both orders find it.
  `tests/livekit/test_local_order.py` replays both against livekit 1.8.9.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from attrs import evolve

from model import Config, Invariant, Move, MoveKind, State, initial_state
from model.environment import BASE
from model.invariants import check
from model.moves import _upsert, successors
from model.scenarios import Call, Scenario
from model.sites import (
    SITES_BY_NAME,
    Creation,
    LocalPosition,
    LocalUpdate,
    RequestSource,
)
from model.variants import VARIANTS_BY_NAME
from proofs.engines.explore import explore

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

#: The old append order: the catalog's user turn with its message at the tail.
TAIL_USER_TURN = evolve(SITES_BY_NAME["user-turn"], local_position=LocalPosition.TAIL)


def _config(scenario: Scenario, *, tail: bool = False) -> Config:
    return Config(LOCK5, scenario, BASE, extra_sites=(TAIL_USER_TURN,) if tail else ())


def _created(config: Config, before: State, move: Move, after: State) -> tuple[str, ...]:
    """The items `move` creates (gives their creation time), in order."""
    if move.kind is MoveKind.LEARN:
        # the activity stamps a server's function call when its tool starts
        assert move.item is not None
        return (move.item,)
    if move.task is None or move.kind not in (MoveKind.CALL, MoveKind.WAKE):
        return ()
    site = config.site(move.task)
    adds = config.call(move.task).adds
    at_snapshot = (
        site.created is Creation.AT_SNAPSHOT and site.request is RequestSource.MIRROR_SNAPSHOT
    )
    if not at_snapshot:
        return adds if move.kind is MoveKind.CALL else ()
    # created when the push takes its snapshot: the call, when the lock was free
    snapped = before.tasks[move.task].request is None and after.tasks[move.task].request is not None
    return adds if snapped else ()


def _late(config: Config, before: State, move: Move) -> tuple[str, ...]:
    """The items a late local update (after the push, by creation time) adds in `move`."""
    if move.kind not in (MoveKind.RESUME, MoveKind.TIMEOUT) or move.task is None:
        return ()
    site = config.site(move.task)
    if site.local_position is not LocalPosition.BY_CREATED_AT:
        return ()
    if config.local_update(move.task) is not LocalUpdate.AFTER_PUSH:
        return ()
    return config.call(move.task).adds


Clocked = tuple[State, tuple[str, ...]]


def clocked_successors(config: Config, node: Clocked) -> Iterator[tuple[Move, Clocked]]:
    """The model's successors, with creation times kept and late items placed by them."""
    state, born = node
    for move, after in successors(state, config):
        created = _created(config, state, move, after)
        if created:
            born = tuple(item for item in node[1] if item not in created) + created
        else:
            born = node[1]
        late = _late(config, state, move)
        if late:
            # `_finish` appended them to the local context it found; place them instead
            assert after.local == _upsert(state.local, late)
            after = evolve(after, local=_upsert(state.local, late, born))
        yield move, (after, born)


def shortest(config: Config, invariant: Invariant) -> tuple[tuple[Move, ...], State] | None:
    """Breadth-first over the clocked states: the shortest violation, or None."""
    start: Clocked = (initial_state(config), ())
    parents: dict[Clocked, tuple[Clocked, Move] | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if check(node[0], config, invariant) is not None:
            moves: list[Move] = []
            at = parents[node]
            while at is not None:
                moves.append(at[1])
                at = parents[at[0]]
            return tuple(reversed(moves)), node[0]
        for move, successor in clocked_successors(config, node):
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


def test_the_catalog_records_where_each_site_puts_its_items() -> None:
    user_turn = SITES_BY_NAME["user-turn"]
    assert user_turn.local_position is LocalPosition.BY_CREATED_AT
    assert user_turn.created is Creation.AT_SNAPSHOT
    assert SITES_BY_NAME["replacement"].local_position is LocalPosition.TAIL


# -- the counterexample -------------------------------------------------------------


def test_the_clocked_model_with_the_append_order_is_the_model() -> None:
    """With the old order the clocked search finds what the explorer finds."""
    config = _config(ARTEFACT, tail=True)
    found = shortest(config, Invariant.NO_UNINTENDED_DELETE)
    assert found is not None
    moves, last = found
    finding = explore(config).finding(Invariant.NO_UNINTENDED_DELETE)
    assert finding.trace is not None
    assert moves == tuple(step.move for step in finding.trace.steps)
    violation = check(last, config, Invariant.NO_UNINTENDED_DELETE)
    assert violation is not None and violation.item == "user-turn-0"
    assert len(moves) == 10
    # the user message entered the local context after the tool output
    assert last.local[-3:] == ("tool-outputs-1", "user-turn-0", "replacement-2")
    assert last.mirror[-2:] == ("user-turn-0", "tool-outputs-1")


def test_the_depth_10_counterexample_is_an_artefact_of_the_append_order() -> None:
    """Placed by creation time, no interleaving deletes an acknowledged item."""
    config = _config(ARTEFACT)
    assert shortest(config, Invariant.NO_UNINTENDED_DELETE) is None
    assert shortest(config, Invariant.AGREEMENT_AT_REST) is None


def test_the_loss_is_real_one_call_later() -> None:
    """A tool output created while the user turn waits: created first, mirrored last."""
    config = _config(REAL)
    found = shortest(config, Invariant.NO_UNINTENDED_DELETE)
    assert found is not None
    moves, last = found
    assert tuple(move.label() for move in moves) == REAL_TRACE
    violation = check(last, config, Invariant.NO_UNINTENDED_DELETE)
    assert violation is not None and violation.item == "hello"
    assert violation.site == "replacement"
    assert last.local == ("msg0", "out0", "out2", "hello")
    assert last.mirror == ("msg0", "out0", "hello", "out2")
    # the append order reaches the same loss, and sooner, through the artefact
    found = shortest(_config(REAL, tail=True), Invariant.NO_UNINTENDED_DELETE)
    assert found is not None and len(found[0]) == 10


#: The shortest counterexample by creation time (`tests/livekit/test_local_order.py`
#: replays it against livekit 1.8.9).
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
