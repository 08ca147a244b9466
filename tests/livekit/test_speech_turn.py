"""The speech turn (`model.sites.SpeechTurn`): livekit's scheduler lets one speech be
current at a time, and which sites wait for it is data the successor function and
the compact encoding read.

Each check is shown to catch what it claims: the same scenario on the catalog's
site records (which wait for no turn) gives what the turn removes."""

from __future__ import annotations

import pytest

from model import SCENARIOS, SHAPES_BY_NAME, Config, Environment, Verdict
from model.move_table import MoveKind
from model.moves import Move, initial_state, step
from model.scenarios import SCENARIOS_BY_NAME, Call, Scenario
from model.sites import with_speech_turn
from model.variants import MOVED_BY_SPEECH_TURN, VARIANTS_BY_NAME, Invariant
from proofs.adapters.livekit.check import with_options
from proofs.engines.explore import explore

TURN = with_speech_turn()


def _config(variant: str, scenario: Scenario | str, turn: bool = True, **kwargs: object) -> Config:
    sc = SCENARIOS_BY_NAME[scenario] if isinstance(scenario, str) else scenario
    extra = TURN if turn else ()
    return Config(VARIANTS_BY_NAME[variant], sc, sc.environment, extra_sites=extra, **kwargs)  # type: ignore[arg-type]


def _run(config: Config, *labels: str) -> None:
    state = initial_state(config)
    for label in labels:
        kind, task, *item = label.split()
        state = step(state, config, Move(MoveKind(kind), int(task[1:]), *item))


#: The variants of the two releases the livekit checks run (`releases.py`), each
#: scenario under its own environment and with `timeouts` (`--with timeouts`);
#: `benchmarks/speech_turn_moves.py` enumerates every configuration and column.
RELEASE_VARIANTS = ("unlocked", "lock5")


def _columns(scenario: Scenario) -> tuple[Environment, ...]:
    return (scenario.environment, with_options(scenario.environment, ("timeouts",)))


def _moved() -> set[tuple[str, str, str, str]]:
    """Every (variant, scenario, environment, invariant) whose verdict the turn moves."""
    moved = set()
    for name in RELEASE_VARIANTS:
        for scenario in SCENARIOS:
            for env in _columns(scenario):
                plain = explore(Config(VARIANTS_BY_NAME[name], scenario, env))
                turn = explore(Config(VARIANTS_BY_NAME[name], scenario, env, extra_sites=TURN))
                for found in plain.findings:
                    if found.verdict is not turn.finding(found.invariant).verdict:
                        assert found.verdict is Verdict.COUNTEREXAMPLE  # the turn only removes runs
                        moved.add((name, scenario.name, env.name, found.invariant.value))
    return moved


def _recorded() -> set[tuple[str, str, str, str]]:
    return {
        (m.variant, m.scenario, env.name, m.invariant.value)
        for m in MOVED_BY_SPEECH_TURN
        if m.shape == "openai" and m.variant in RELEASE_VARIANTS
        for env in _columns(SCENARIOS_BY_NAME[m.scenario])
        if not any(env.on(option) for option in m.kept_by)
    }


def test_every_verdict_the_turn_moves_for_the_releases_is_recorded() -> None:
    assert _moved() == _recorded() != set()


def test_the_recorded_moves_of_other_shapes_are_found() -> None:
    for moved in MOVED_BY_SPEECH_TURN:
        if moved.shape == "openai":
            continue
        shape = SHAPES_BY_NAME[moved.shape]
        config = _config(moved.variant, moved.scenario, turn=False, shape=shape)
        assert explore(config).finding(moved.invariant).verdict is Verdict.COUNTEREXAMPLE
        config = _config(moved.variant, moved.scenario, shape=shape)
        assert explore(config).finding(moved.invariant).verdict is Verdict.HOLDS


def test_a_tool_push_waits_while_the_user_turn_holds_the_turn() -> None:
    # overlapping-push: T0 the tool outputs, T1 the user turn
    _run(_config("unlocked", "overlapping-push", turn=False), "call T1", "call T0")
    with pytest.raises(ValueError, match="call T0 is not enabled"):
        _run(_config("unlocked", "overlapping-push"), "call T1", "call T0")
    # the other order is the seed's overlapping push, which the turn keeps
    _run(_config("unlocked", "overlapping-push"), "call T0", "call T1")
    found = explore(_config("unlocked", "overlapping-push")).finding(Invariant.NO_UNINTENDED_DELETE)
    assert found.violation is not None and found.violation.item == "out1"


def test_one_generation_is_current_at_a_time() -> None:
    # cleanup-during-tool-push: T0 the cleanup, whose never-played asst1 is on the
    # server, so its generation is the current one; it holds the turn across its
    # push. T1's interrupted generation runs after it (gives the turn up when called)
    config = _config("lock3", "cleanup-during-tool-push")
    for blocked in (("call T1",), ("call T0", "call T1")):
        with pytest.raises(ValueError, match="call T1 is not enabled"):
            _run(config, *blocked)
    _run(
        config, "call T0", "server-apply T0 asst1", "client-apply T0 asst1", "resume T0", "call T1"
    )
    _run(_config("lock3", "cleanup-during-tool-push", turn=False), "call T1", "call T0")


def test_two_tool_generations_take_turns_either_way() -> None:
    # nothing of either is on the server, so either generation may be the current
    # one, and the other runs after it: the rule is symmetric, as the explorer's
    # symmetry reduction needs
    scenario = Scenario(
        "two-interrupted",
        "",
        (
            Call("interrupted-tool-outputs", ("iout1",)),
            Call("interrupted-tool-outputs", ("iout2",)),
        ),
    )
    _run(_config("unlocked", scenario), "call T0", "call T1")
    _run(_config("unlocked", scenario), "call T1", "call T0")
    found = explore(_config("unlocked", scenario)).finding(Invariant.NO_UNINTENDED_DELETE)
    assert found.verdict is Verdict.COUNTEREXAMPLE  # the two pushes still overlap
