"""Case 3's mechanisms as data (livekit/agents #6964): where an item with an unknown
anchor goes, whether a duplicate refusal settles its waiter, the stale-anchor move,
and invariant 6 on hand-made states."""

from __future__ import annotations

import attrs

from model import SHAPES, SHAPES_BY_NAME, VARIANTS_BY_NAME, Config, Environment, Invariant, check
from model.cases import CASES_BY_NAME, SCENARIO_6964
from model.move_table import MOVES, MoveKind
from model.moves import Move, initial_state, step, successors
from model.shapes import DuplicateRejection, UnknownAnchor
from model.state import Event, EventKind, Op, OpKind, Pc, Task

CASE = CASES_BY_NAME["livekit-agents-6964"]
REPORT = Environment(server_items=True, stale_anchors=True)


def config(
    anchor: UnknownAnchor, duplicate: DuplicateRejection, env: Environment = REPORT
) -> Config:
    shape = attrs.evolve(
        SHAPES_BY_NAME["openai"], unknown_anchor=anchor, duplicate_rejection=duplicate
    )
    return Config(VARIANTS_BY_NAME["unlocked"], SCENARIO_6964, env, shape=shape)


def test_every_catalog_shape_keeps_the_defaults_of_todays_model() -> None:
    for shape in SHAPES:
        assert shape.unknown_anchor is UnknownAnchor.TAIL
        assert shape.duplicate_rejection is DuplicateRejection.SETTLES


def test_the_case_record() -> None:
    assert [fix.name for fix in CASE.configurations] == ["before", "pr-6729", "pr-6964"]
    assert CASE.scenario.name == CASE.name == "livekit-agents-6964"
    before, middle, fixed = CASE.configurations
    assert before.shape.unknown_anchor is UnknownAnchor.DROPPED
    assert before.shape.duplicate_rejection is DuplicateRejection.LEFT_WAITING
    assert middle.shape.duplicate_rejection is DuplicateRejection.SETTLES
    assert fixed.shape.unknown_anchor is UnknownAnchor.TAIL
    assert [fix.release for fix in CASE.configurations] == [
        "livekit-plugins-openai==1.6.8",
        "livekit-plugins-openai==1.6.9",
        "livekit-plugins-openai==1.7.1",
    ]
    assert all(fix.status == "merged" for fix in CASE.fixes)


def test_the_option_is_inert_where_the_item_goes_to_the_tail() -> None:
    for shape in SHAPES:  # tail placement, or no deletes at all
        assert "stale-anchors" in dict(shape.inert_options()), shape.name
    assert not config(UnknownAnchor.TAIL, DuplicateRejection.SETTLES).stale_anchors()
    assert config(UnknownAnchor.DROPPED, DuplicateRejection.SETTLES).stale_anchors()


def test_the_stale_anchor_move_waits_for_a_deleted_item() -> None:
    cfg = config(UnknownAnchor.DROPPED, DuplicateRejection.SETTLES)
    assert MOVES[MoveKind.MODEL_ANCHORS_ON_DELETED].option == "stale-anchors"
    start = initial_state(cfg)
    kinds = {move.kind for move, _ in successors(start, cfg)}
    assert MoveKind.MODEL_ANCHORS_ON_DELETED not in kinds  # nothing deleted yet
    state = step(start, cfg, Move(MoveKind.CALL, 0))  # the replacement deletes old1
    state = step(state, cfg, Move(MoveKind.SERVER_APPLY, 0, "old1"))
    state = step(state, cfg, Move(MoveKind.MODEL_ANCHORS_ON_DELETED, None, "asst1"))
    assert state.server == ("msg0", "asst1")
    assert state.to_client[-1] == Event(EventKind.ADDED, "asst1", after="old1")
    off = attrs.evolve(cfg, environment=Environment(server_items=True))
    assert MoveKind.MODEL_ANCHORS_ON_DELETED not in {m.kind for m, _ in successors(state, off)}


def _announced(anchor: UnknownAnchor) -> tuple[str, ...]:
    """The mirror once the model's asst1, announced after the deleted old1, arrives."""
    cfg = config(anchor, DuplicateRejection.SETTLES)
    state = attrs.evolve(
        initial_state(cfg),
        server=("msg0", "asst1"),
        mirror=("msg0",),
        removed=frozenset({"old1"}),
        to_client=(Event(EventKind.ADDED, "asst1", after="old1"),),
    )
    state = step(state, cfg, Move(MoveKind.CLIENT_APPLY, None, "asst1"))
    assert "asst1" in state.acked  # the event arrived, whatever the mirror did with it
    return state.mirror


def test_an_unknown_anchor_goes_to_the_tail_or_nowhere() -> None:
    assert _announced(UnknownAnchor.TAIL) == ("msg0", "asst1")
    assert _announced(UnknownAnchor.DROPPED) == ("msg0",)


def _refused(duplicate: bool, setting: DuplicateRejection) -> Task:
    """A push waiting on its create of x when the server's refusal of it arrives."""
    cfg = config(UnknownAnchor.TAIL, setting)
    waiting = Task(pc=Pc.WAIT_ACKS, pending=frozenset({(OpKind.CREATE, "x")}))
    state = attrs.evolve(
        initial_state(cfg),
        tasks=(waiting, Task(pc=Pc.DONE)),
        to_client=(Event(EventKind.REJECTED, "x", op=OpKind.CREATE, task=0, duplicate=duplicate),),
    )
    after = step(state, cfg, Move(MoveKind.CLIENT_APPLY, 0, "x"))
    violation = check(after, cfg, Invariant.NO_WAIT_ON_SETTLED)
    assert (violation is not None) == bool(after.tasks[0].stalled)
    return after.tasks[0]


def test_a_duplicate_refusal_settles_or_is_left_waiting() -> None:
    assert _refused(True, DuplicateRejection.SETTLES).pending == frozenset()
    left = _refused(True, DuplicateRejection.LEFT_WAITING)
    assert left.pending == left.stalled == frozenset({(OpKind.CREATE, "x")})
    # any other refusal settles its waiter under either setting
    assert _refused(False, DuplicateRejection.LEFT_WAITING).stalled == frozenset()


def test_the_server_marks_a_refused_create_of_an_item_it_holds_as_a_duplicate() -> None:
    cfg = config(UnknownAnchor.TAIL, DuplicateRejection.LEFT_WAITING)
    state = attrs.evolve(
        initial_state(cfg),
        tasks=(Task(pc=Pc.WAIT_ACKS, pending=frozenset({(OpKind.CREATE, "msg0")})), Task()),
        to_server=(Op(OpKind.CREATE, "msg0", None, 0),),
    )
    after = step(state, cfg, Move(MoveKind.SERVER_APPLY, 0, "msg0"))
    assert after.to_client == (
        Event(EventKind.REJECTED, "msg0", op=OpKind.CREATE, task=0, duplicate=True),
    )


def test_a_timed_out_push_leaves_its_stall_on_record() -> None:
    cfg = config(
        UnknownAnchor.TAIL,
        DuplicateRejection.LEFT_WAITING,
        Environment(server_items=True, stale_anchors=True, timeouts=True),
    )
    stalled = Task(
        pc=Pc.WAIT_ACKS,
        pending=frozenset({(OpKind.CREATE, "x")}),
        stalled=frozenset({(OpKind.CREATE, "x")}),
    )
    state = attrs.evolve(initial_state(cfg), tasks=(stalled, Task(pc=Pc.DONE)))
    after = step(state, cfg, Move(MoveKind.TIMEOUT, 0))
    assert after.tasks[0].pc is Pc.FAILED
    violation = check(after, cfg, Invariant.NO_WAIT_ON_SETTLED)
    assert violation is not None and violation.item == "x" and violation.task == 0
