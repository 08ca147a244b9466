"""The explorer reproduces every finding of the seed discussion, and every
catalog expectation, from the model alone."""

import pytest

from model import (
    CONFIGURATIONS,
    ENVIRONMENTS,
    SCENARIOS,
    SCENARIOS_BY_NAME,
    VARIANTS,
    VARIANTS_BY_NAME,
    Config,
    Environment,
    Invariant,
    MoveKind,
    Verdict,
    by_construction,
    check,
)
from proofs.engines.explore import Finding, explore
from proofs.engines.trace import replay

INV1 = Invariant.NO_UNINTENDED_DELETE
INV2 = Invariant.AGREEMENT_AT_REST


def finding(
    variant: str, scenario: str, invariant: Invariant, env: Environment | None = None
) -> Finding:
    sc = SCENARIOS_BY_NAME[scenario]
    cfg = Config(VARIANTS_BY_NAME[variant], sc, sc.environment if env is None else env)
    return explore(cfg).finding(invariant)


def test_overlapping_pushes_lose_the_tool_output_without_the_lock() -> None:
    found = finding("unlocked", "overlapping-push", INV1)
    assert found.verdict is Verdict.COUNTEREXAMPLE
    assert found.violation is not None
    assert (found.violation.item, found.violation.site) == ("out1", "user-turn")
    assert found.depth == 6


def test_overlapping_pushes_keep_the_tool_output_with_lock3() -> None:
    assert finding("lock3", "overlapping-push", INV1).verdict is Verdict.HOLDS
    assert finding("lock3", "overlapping-push", INV2).verdict is Verdict.HOLDS


def test_replacement_first_breaks_lock3_not_lock5() -> None:
    found = finding("lock3", "replacement-first", INV1)
    assert found.violation is not None
    assert (found.violation.item, found.violation.site) == ("note1", "tool-outputs")
    assert finding("lock5", "replacement-first", INV1, Environment()).verdict is Verdict.HOLDS


def test_stale_replacement_still_breaks_lock5() -> None:
    found = finding("lock5", "stale-replacement", INV1)
    assert found.violation is not None
    assert (found.violation.item, found.violation.site) == ("hello", "replacement")
    assert found.trace is not None
    kinds = [(move.kind, move.task) for move in found.trace.moves]
    # the copy is taken while the user turn waits for its ack, before it upserts hello
    assert kinds.index((MoveKind.COPY, 1)) < kinds.index((MoveKind.RESUME, 0))


def test_stale_replacement_needs_a_stale_copy_under_lock5() -> None:
    # with the copy taken when update_chat_ctx is called, the user turn's upsert
    # lands in the replacement's own (live) object while it waits for the lock
    assert finding("lock5", "stale-replacement", INV1, Environment()).verdict is Verdict.HOLDS


def test_cleanup_against_a_late_tool_push_breaks_lock3_not_lock5() -> None:
    found = finding("lock3", "cleanup-during-tool-push", INV2)
    assert found.violation is not None
    assert (found.violation.item, found.violation.site) == ("asst1", "interrupted-tool-outputs")
    assert finding("lock5", "cleanup-during-tool-push", INV2).verdict is Verdict.HOLDS


def test_hoisting_the_user_turn_does_not_save_a_stale_copy() -> None:
    assert finding("lock5-hoisted", "stale-replacement", INV1).verdict is Verdict.COUNTEREXAMPLE


def test_the_spoken_message_site_of_1_8_9_breaks_lock5() -> None:
    found = finding("lock5", "spoken-during-tool-push", INV1)
    assert found.violation is not None
    assert (found.violation.item, found.violation.site) == ("out1", "spoken-message")


@pytest.mark.parametrize(("variant", "shape"), CONFIGURATIONS, ids=lambda x: x.name)
def test_every_verdict_matches_the_catalog(variant, shape) -> None:  # type: ignore[no-untyped-def]
    for scenario in SCENARIOS:
        for env in ENVIRONMENTS:
            result = explore(Config(variant, scenario, env, shape=shape))
            for found in result.findings:
                expected = variant.expected(scenario.name, env, found.invariant, shape.name)
                assert found.verdict is expected, (scenario.name, env.name, found.invariant)
                if by_construction(found.invariant, shape) is not None:
                    assert found.verdict is Verdict.HOLDS


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_every_counterexample_replays_to_its_violation(variant) -> None:  # type: ignore[no-untyped-def]
    for scenario in SCENARIOS:
        cfg = Config(variant, scenario, scenario.environment)
        for found in explore(cfg).findings:
            if found.trace is None:
                continue
            trace = replay(cfg, found.trace.moves)
            assert check(trace.last, cfg, found.invariant) == found.violation
            # shortest: no prefix already violates
            for prefix in range(found.trace.depth):
                assert (
                    check(replay(cfg, found.trace.moves[:prefix]).last, cfg, found.invariant)
                    is None
                )


def test_two_replacements_orphan_the_user_turns_upsert_under_lock5_not_hoisted() -> None:
    found = finding("lock5", "two-replacements-during-user-turn", INV1)
    assert found.violation is not None
    assert (found.violation.item, found.violation.site) == ("hello", "replacement")
    assert found.depth == 7
    assert (
        finding("lock5-hoisted", "two-replacements-during-user-turn", INV1).verdict is Verdict.HOLDS
    )


def test_a_timed_out_cleanup_costs_a_tool_output_under_lock5() -> None:
    found = finding("lock5", "cleanup-during-tool-push", INV2, Environment(timeouts=True))
    assert found.violation is not None
    assert found.violation.item == "out1"
    assert MoveKind.TIMEOUT in [move.kind for move in (found.trace.moves if found.trace else ())]
