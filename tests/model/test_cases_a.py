"""Casebook cases 1, 2 and 4 as records, and the two shape fields they need, step by
step on the readable model (no explorer here: `tests/proofs/test_casebook_a.py`)."""

from __future__ import annotations

from attrs import evolve

from model import SHAPES, Config, Environment, Move, MoveKind, OpKind, Pc, initial_state, step
from model.cases import CASES, CASES_BY_NAME, OPENAI_142
from model.invariants import intended_removals, removed_at_rest
from model.moves import fresh_id, server_id
from model.scenarios import Call, Scenario, validate
from model.shapes import CallIds, Withheld
from model.variants import VARIANTS_BY_NAME

MINE = ("livekit-agents-4960", "livekit-agents-4876", "livekit-agents-5886")


def test_cases_one_two_and_four_are_in_the_catalog_in_the_issue_order() -> None:
    names = [case.name for case in CASES if case.name in MINE]
    assert names == list(MINE)
    for name in MINE:
        case = CASES_BY_NAME[name]
        validate(case.scenario)
        assert case.scenario.name == name
        assert case.before.name == "before" and case.before.release == "livekit-agents==1.4.2"


def test_each_fix_says_what_it_is_and_an_unmerged_one_has_no_release() -> None:
    fixes = {(case.name, fix.name): fix for case in CASES for fix in case.fixes}
    assert fixes["livekit-agents-4960", "pr-4960"].status == "closed unmerged"
    assert fixes["livekit-agents-4960", "pr-5021"].status == "closed unmerged"
    assert fixes["livekit-agents-4960", "pr-4960"].release == ""
    assert fixes["livekit-agents-4960", "pr-5021"].release == ""
    assert fixes["livekit-agents-4876", "pr-4876"].status == "merged"
    assert fixes["livekit-agents-5886", "pr-5887"].status == "merged"


def test_the_catalog_shapes_withhold_nothing_and_keep_server_ids() -> None:
    for shape in SHAPES:
        assert shape.withheld_deletes == () and shape.call_ids is CallIds.SERVER


def _config(case: str, **shape_changes: object) -> Config:
    record = CASES_BY_NAME[case]
    return Config(
        VARIANTS_BY_NAME["unlocked"],
        record.scenario,
        record.scenario.environment,
        shape=evolve(record.before.shape, **shape_changes),
    )


def test_a_withheld_delete_is_not_sent_and_leaves_what_the_trim_meant_to_remove() -> None:
    config = _config("livekit-agents-5886")
    state = step(initial_state(config), config, Move(MoveKind.CALL, 0))
    assert state.to_server == () and state.tasks[0].pc is Pc.DONE
    violation = removed_at_rest(state, config)
    assert violation is not None and violation.item == "audio1"
    # the same push with the guard switched off sends the delete; at rest 5 holds
    config = _config("livekit-agents-5886", withheld_deletes=())
    state = step(initial_state(config), config, Move(MoveKind.CALL, 0))
    assert [(op.kind, op.item) for op in state.to_server] == [(OpKind.DELETE, "audio1")]
    for move in (
        Move(MoveKind.SERVER_APPLY, 0, "audio1"),
        Move(MoveKind.CLIENT_APPLY, 0, "audio1"),
    ):
        state = step(state, config, move)
    state = step(state, config, Move(MoveKind.RESUME, 0))
    assert state.at_rest() and removed_at_rest(state, config) is None


def test_a_fresh_id_reaches_the_local_context_and_maps_back() -> None:
    config = _config("livekit-agents-4876")
    state = initial_state(config)
    for move in (
        Move(MoveKind.MODEL_CREATES, None, "call1"),
        Move(MoveKind.CLIENT_APPLY, None, "call1"),
        Move(MoveKind.LEARN, None, "call1"),
    ):
        state = step(state, config, move)
    assert state.local == ("msg0", fresh_id("call1"))
    assert server_id(config, fresh_id("call1")) == "call1"
    state = step(state, config, Move(MoveKind.CALL, 0))
    assert [(op.kind, op.item) for op in state.to_server] == [
        (OpKind.DELETE, "call1"),
        (OpKind.CREATE, fresh_id("call1")),
    ]
    server_ids = _config("livekit-agents-4876", call_ids=CallIds.SERVER)
    assert server_id(server_ids, fresh_id("call1")) == fresh_id("call1")


def test_an_unlearned_call_is_withheld_only_until_the_local_context_learns_it() -> None:
    config = _config(
        "livekit-agents-4960",
        withheld_deletes=(Withheld.UNLEARNED_CALLS,),
        call_ids=CallIds.SERVER,
    )
    state = initial_state(config)
    for move in (
        Move(MoveKind.MODEL_CREATES, None, "call1"),
        Move(MoveKind.CLIENT_APPLY, None, "call1"),
    ):
        state = step(state, config, move)
    pushed = step(state, config, Move(MoveKind.CALL, 0))
    assert (OpKind.DELETE, "call1") not in {(op.kind, op.item) for op in pushed.to_server}
    # a copy taken now and pushed once the call is learned: the delete is sent
    stale = evolve(config, environment=Environment(server_items=True, stale_copies=True))
    for move in (Move(MoveKind.COPY, 0), Move(MoveKind.LEARN, None, "call1")):
        state = step(state, stale, move)
    assert state.local == ("msg0", "call1")
    pushed = step(state, stale, Move(MoveKind.CALL, 0))
    assert (OpKind.DELETE, "call1") in {(op.kind, op.item) for op in pushed.to_server}


def test_a_caller_means_to_remove_only_what_its_copy_had() -> None:
    scenario = Scenario(
        name="drop-unseen",
        summary="a replacement drops an item its copy never had",
        calls=(Call("replacement", drops=("msg0", "later")),),
        server=("msg0",),
    )
    config = Config(VARIANTS_BY_NAME["lock5"], scenario, scenario.environment, shape=OPENAI_142)
    assert intended_removals(config, 0, ("msg0",)) == ("msg0",)
    assert intended_removals(config, 0, None) == ("msg0", "later")
