"""Session shapes as data: the model reads their fields, never their names; the
new invariants catch what they claim to; a reconnect rebuilds from the mirror."""

from __future__ import annotations

import attrs
import pytest

from model import (
    CONFIGURATIONS,
    SCENARIOS_BY_NAME,
    SHAPES,
    SHAPES_BY_NAME,
    VARIANTS_BY_NAME,
    Config,
    Environment,
    EventKind,
    Invariant,
    Move,
    MoveKind,
    Op,
    OpKind,
    Pc,
    State,
    Task,
    Verdict,
    by_construction,
    check,
    configurations,
    initial_state,
    step,
)
from proofs.engines.explore import explore

_BASE = Environment()


def _config(variant: str, shape: str, scenario: str, env: Environment = _BASE) -> Config:
    return Config(
        VARIANTS_BY_NAME[variant], SCENARIOS_BY_NAME[scenario], env, shape=SHAPES_BY_NAME[shape]
    )


def _verdicts(config: Config) -> list[tuple[Verdict, int | None]]:
    return [(f.verdict, f.depth) for f in explore(config).findings]


def test_the_catalog_names_every_shape_of_the_brief_and_pairs_the_variants_with_them() -> None:
    assert [shape.name for shape in SHAPES] == [
        "openai",
        "duplex",
        "duplex-await",
        "gemini",
        "three-way",
    ]
    assert {(v.name, s.name) for v, s in configurations(shapes=("three-way",))} == {
        ("three-way", "three-way")
    }
    assert len(CONFIGURATIONS) == 4 * 4 + 1


@pytest.mark.parametrize("shape", ["duplex-await", "gemini"])
def test_the_model_reads_a_shapes_fields_not_its_name(shape: str) -> None:
    env = Environment(stale_copies=True)
    config = _config("lock5", shape, "two-replacements-during-user-turn", env)
    renamed = attrs.evolve(config, shape=attrs.evolve(config.shape, name="acme"))
    assert _verdicts(renamed) == _verdicts(config)


def test_an_openai_server_refuses_a_create_for_an_id_it_holds() -> None:
    config = _config("lock5", "openai", "overlapping-push")
    state = attrs.evolve(initial_state(config), to_server=(Op(OpKind.CREATE, "msg0", None, 0),))
    after = step(state, config, Move(MoveKind.SERVER_APPLY, 0, "msg0"))
    assert after.server == ("msg0",)
    assert after.to_client[-1].kind is EventKind.REJECTED


def test_an_append_only_server_holds_an_item_twice_and_invariant_4_says_so() -> None:
    config = _config("lock5", "duplex", "overlapping-push")
    state = attrs.evolve(initial_state(config), to_server=(Op(OpKind.CREATE, "msg0", None, 0),))
    after = step(state, config, Move(MoveKind.SERVER_APPLY, 0, "msg0"))
    assert after.server == ("msg0", "msg0")
    violation = check(after, config, Invariant.NOTHING_TWICE)
    assert violation is not None and violation.item == "msg0"
    assert check(state, config, Invariant.NOTHING_TWICE) is None


def test_invariant_3_catches_a_mirror_that_is_not_the_server_at_rest_only() -> None:
    config = _config("lock5", "openai", "overlapping-push")
    start = initial_state(config)
    untrue = attrs.evolve(start, mirror=())
    violation = check(untrue, config, Invariant.MIRROR_TRUE_AT_REST)
    assert violation is not None and violation.item == "msg0"
    busy = attrs.evolve(untrue, tasks=(Task(Pc.WAIT_ACKS), Task()))
    assert check(busy, config, Invariant.MIRROR_TRUE_AT_REST) is None
    assert check(start, config, Invariant.MIRROR_TRUE_AT_REST) is None


def test_invariant_2_counts_an_item_never_sent_and_not_one_the_server_rejected() -> None:
    config = _config("lock5", "gemini", "overlapping-push")
    start = initial_state(config)
    never_sent = attrs.evolve(start, local=("msg0", "out1"))
    violation = check(never_sent, config, Invariant.AGREEMENT_AT_REST)
    assert violation is not None and "never sent" in violation.reason
    rejected = attrs.evolve(never_sent, sent=start.sent | {"out1"})
    assert check(rejected, config, Invariant.AGREEMENT_AT_REST) is None
    # a request kept back is in flight: not at rest yet
    kept = attrs.evolve(never_sent, kept=("msg0", "out1"))
    assert check(kept, config, Invariant.AGREEMENT_AT_REST) is None


def test_what_holds_by_construction_is_said_and_holds() -> None:
    assert by_construction(Invariant.NO_UNINTENDED_DELETE, SHAPES_BY_NAME["duplex"])
    assert by_construction(Invariant.NOTHING_TWICE, SHAPES_BY_NAME["openai"])
    assert by_construction(Invariant.NOTHING_TWICE, SHAPES_BY_NAME["gemini"]) is None
    assert by_construction(Invariant.MIRROR_TRUE_AT_REST, SHAPES_BY_NAME["openai"]) is None


def test_a_reconnect_does_nothing_for_a_shape_without_one() -> None:
    for shape in ("duplex", "duplex-await", "three-way"):
        variant = "three-way" if shape == "three-way" else "lock5"
        on = _config(variant, shape, "overlapping-push", Environment(reconnects=True))
        off = _config(variant, shape, "overlapping-push")
        assert "reconnects" in dict(on.shape.inert_options())
        assert on.behaviour() == off.behaviour()
        assert not any(m.kind is MoveKind.DISCONNECT for m, _ in _moves(on))


def _moves(config: Config) -> list[tuple[Move, State]]:
    from model import successors

    return list(successors(initial_state(config), config))


def test_a_reconnect_rebuilds_the_server_from_the_mirror_and_resends_what_is_awaited() -> None:
    config = _config("lock5", "openai", "overlapping-push", Environment(reconnects=True))
    state = step(initial_state(config), config, Move(MoveKind.CALL, 0))
    assert state.tasks[0].pc is Pc.WAIT_ACKS and state.tasks[0].ops
    state = step(state, config, Move(MoveKind.SERVER_APPLY, 0, "out1"))
    dropped = step(state, config, Move(MoveKind.DISCONNECT))
    assert not dropped.connected and not dropped.to_client and not dropped.to_server
    back = step(dropped, config, Move(MoveKind.CONNECT))
    # the rebuild is the mirror ([msg0]); the create still awaited goes again after it
    assert back.server == ("msg0",)
    assert [(op.kind, op.item) for op in back.to_server] == [(OpKind.CREATE, "out1")]


def test_a_kept_back_request_is_adopted_and_sent_on_connect() -> None:
    config = _config("lock5", "gemini", "overlapping-push", Environment(reconnects=True))
    dropped = step(initial_state(config), config, Move(MoveKind.DISCONNECT))
    # the session notices the drop (the end of its drop window), then keeps requests
    dropped = step(dropped, config, Move(MoveKind.DISCONNECT))
    pushed = step(dropped, config, Move(MoveKind.CALL, 0))
    assert pushed.kept == ("msg0", "out1") and pushed.tasks[0].pc is Pc.DONE
    assert pushed.mirror == ("msg0",) and not pushed.to_server
    back = step(pushed, config, Move(MoveKind.CONNECT))
    assert back.mirror == back.server == ("msg0", "out1") and back.kept is None


def test_the_explorer_finds_the_reconnect_loss_of_a_timed_out_push() -> None:
    config = _config(
        "lock5", "openai", "overlapping-push", Environment(timeouts=True, reconnects=True)
    )
    finding = explore(config, (Invariant.AGREEMENT_AT_REST,)).findings[0]
    assert finding.verdict is Verdict.COUNTEREXAMPLE and finding.trace is not None
    kinds = [move.kind for move in finding.trace.moves]
    assert MoveKind.TIMEOUT in kinds and MoveKind.CONNECT in kinds
    assert finding.violation is not None and finding.violation.item == "out1"
    # neither option alone loses it
    for alone in (Environment(timeouts=True), Environment(reconnects=True)):
        cell = _config("lock5", "openai", "overlapping-push", alone)
        assert explore(cell, (Invariant.AGREEMENT_AT_REST,)).findings[0].verdict is Verdict.HOLDS
