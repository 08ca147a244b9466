"""Hypothesis searches the model at random: it finds (and shrinks) the bugs of
the failing variants, and finds nothing in the cells that hold."""

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from model import SCENARIOS_BY_NAME, VARIANTS_BY_NAME, Config, Environment, Invariant
from model.environment import ALL
from proofs.engines.explore import explore
from proofs.engines.stateful import model_machine

#: Budget for a cell expected to hold: 12 runs of up to 25 moves each (the
#: longest counterexample in the catalog is 12 moves). Every cell held here is also
#: explored exhaustively, every reachable state checked against every invariant:
#: tests/proofs/test_z3_catalog.py (`test_every_verdict_is_the_catalogs_expectation`)
#: settles each (variant, scenario) in each environment column, `all` included, on
#: the readable model's own `successors` where a reconnect is on (three-way under
#: `all`, as here) and on the compact encoding elsewhere, which
#: tests/proofs/test_explore_compact.py shows has the readable model's graph. So a
#: random walk here adds no state those miss; it stays as the check that the
#: Hypothesis machine runs the holding cells (the failing ones below keep their
#: budget: there Hypothesis must find and shrink a bug on its own). It was 60.
HOLD_SETTINGS = settings(
    max_examples=12,
    stateful_step_count=25,
    derandomize=True,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
FIND_SETTINGS = settings(
    max_examples=1000,
    report_multiple_bugs=False,
    stateful_step_count=16,
    derandomize=True,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
#: The same search without shrinking: each bug below is found in under half a second
#: and its run is already short (3 to 7 moves); shrinking it took 3 to 19 s a cell,
#: so it is shown once, on lock5's cell (`test_hypothesis_shrinks_...`).
FIND_ONLY = settings(FIND_SETTINGS, phases=(Phase.explicit, Phase.reuse, Phase.generate))


def config(variant: str, scenario: str, env: Environment | None = None) -> Config:
    sc = SCENARIOS_BY_NAME[scenario]
    return Config(VARIANTS_BY_NAME[variant], sc, sc.environment if env is None else env)


#: One cell per variant expected to fail (the explorer's tests cover every
#: seed finding; here Hypothesis must find each variant's bug on its own).
FAILING = [
    ("unlocked", "overlapping-push", "out1"),
    ("lock3", "replacement-first", "note1"),
    ("lock5", "spoken-during-tool-push", "out1"),
    ("lock5-hoisted", "server-item-during-replacement", "call1"),
]


def _found(cfg: Config, budget: settings) -> str:
    """What Hypothesis reports for the first run of `cfg` that breaks an invariant."""
    with pytest.raises(AssertionError) as raised:
        run_state_machine_as_test(model_machine(cfg), settings=budget)
    return str(raised.value)


def _moves(message: str) -> list[str]:
    return message.split(" after: ")[1].split(", ")


@pytest.mark.parametrize(("variant", "scenario", "item"), FAILING)
def test_hypothesis_finds_the_bug(variant: str, scenario: str, item: str) -> None:
    message = _found(config(variant, scenario), FIND_ONLY)
    assert f": {item}:" in message
    assert len(_moves(message)) <= 12, message  # a short list of moves


def test_hypothesis_shrinks_a_bug_to_the_explorers_shortest_run() -> None:
    """Found with 7 moves, shrunk to the 6 of the explorer's shortest counterexample."""
    cfg = config("lock5", "spoken-during-tool-push")
    found = _moves(_found(cfg, FIND_ONLY))
    message = _found(cfg, FIND_SETTINGS)
    assert ": out1:" in message
    shortest = explore(cfg, (Invariant.NO_UNINTENDED_DELETE,)).finding(
        Invariant.NO_UNINTENDED_DELETE
    )
    assert shortest.depth is not None
    assert len(_moves(message)) == shortest.depth < len(found), message


@pytest.mark.parametrize("variant", ["lock5", "lock5-hoisted"])
@pytest.mark.parametrize(
    "scenario", ["overlapping-push", "replacement-first", "cleanup-during-tool-push"]
)
def test_the_five_locks_hold_under_hypothesis(variant: str, scenario: str) -> None:
    run_state_machine_as_test(model_machine(config(variant, scenario)), settings=HOLD_SETTINGS)


def test_lock3_holds_the_seed_case_under_hypothesis() -> None:
    cfg = config("lock3", "overlapping-push")
    run_state_machine_as_test(model_machine(cfg), settings=HOLD_SETTINGS)


@pytest.mark.parametrize("scenario", sorted(SCENARIOS_BY_NAME))
def test_three_way_holds_under_hypothesis_in_every_environment(scenario: str) -> None:
    cfg = config("three-way", scenario, ALL)
    run_state_machine_as_test(model_machine(cfg), settings=HOLD_SETTINGS)


def test_hypothesis_finds_the_duplex_mirror_that_forgets_a_dropped_item() -> None:
    from model import SHAPES_BY_NAME

    cfg = Config(
        VARIANTS_BY_NAME["lock5"],
        SCENARIOS_BY_NAME["cleanup-during-tool-push"],
        Environment(),
        shape=SHAPES_BY_NAME["duplex"],
    )
    with pytest.raises(AssertionError) as raised:
        run_state_machine_as_test(model_machine(cfg), settings=FIND_SETTINGS)
    assert str(raised.value).startswith("mirror-true-at-rest: asst1:"), raised.value
