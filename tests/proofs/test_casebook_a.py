"""Casebook cases 1, 2 and 4 judged by the explorer, each verdict against its record;
the shape fields switched back to their defaults; invariant 5 on both encodings and
refused by z3."""

from __future__ import annotations

import pytest
from attrs import evolve

from model import SCENARIOS, VARIANTS_BY_NAME, Config, Environment, Invariant, Verdict
from model.cases import CASES_BY_NAME, Case, Fix
from model.shapes import CallIds, Withheld
from proofs.engines.casebook import CaseVerdict, config_of, judge
from proofs.engines.compact import unsupported
from proofs.engines.explore import explore
from proofs.engines.explore_readable import explore_readable

MINE = ("livekit-agents-4960", "livekit-agents-4876", "livekit-agents-5886")
INV1 = Invariant.NO_UNINTENDED_DELETE
INV5 = Invariant.REMOVED_AT_REST
SERVER = Environment(server_items=True)


@pytest.fixture(scope="module")
def judged() -> dict[str, tuple[CaseVerdict, ...]]:
    return {name: judge(CASES_BY_NAME[name]) for name in MINE}


@pytest.mark.parametrize("name", MINE)
def test_every_configuration_of_the_case_gets_the_verdict_its_record_expects(
    judged: dict[str, tuple[CaseVerdict, ...]], name: str
) -> None:
    rows = judged[name]
    case = CASES_BY_NAME[name]
    assert len(rows) == len(case.configurations) * len(case.environments) * len(case.invariants)
    wrong = [
        (r.fix, r.invariant.value, r.environment.name, r.verdict.value)
        for r in rows
        if not r.matches
    ]
    assert wrong == []


@pytest.mark.parametrize(
    ("name", "invariant", "environment", "item"),
    [
        ("livekit-agents-4960", INV1, SERVER, "call1"),
        ("livekit-agents-4876", INV1, SERVER, "call1"),
        ("livekit-agents-5886", INV5, Environment(), "audio1"),
    ],
)
def test_the_shortest_counterexample_before_the_fix_loses_the_reports_item(
    judged: dict[str, tuple[CaseVerdict, ...]],
    name: str,
    invariant: Invariant,
    environment: Environment,
    item: str,
) -> None:
    (row,) = [
        r
        for r in judged[name]
        if r.fix == "before" and r.invariant is invariant and r.environment == environment
    ]
    assert row.verdict is Verdict.COUNTEREXAMPLE
    assert row.violation is not None and row.violation.item == item


def _verdict(case: Case, fix: Fix, environment: Environment, invariant: Invariant) -> Verdict:
    return explore(config_of(case, fix, environment), (invariant,)).finding(invariant).verdict


def test_without_the_withheld_calls_each_proposal_deletes_the_call_again() -> None:
    case = CASES_BY_NAME["livekit-agents-4960"]
    for fix in case.fixes:
        assert _verdict(case, fix, SERVER, INV1) is Verdict.HOLDS
        kept = tuple(w for w in fix.shape.withheld_deletes if w is not Withheld.UNLEARNED_CALLS)
        undone = evolve(fix, shape=evolve(fix.shape, withheld_deletes=kept))
        assert _verdict(case, undone, SERVER, INV1) is Verdict.COUNTEREXAMPLE


def test_a_fresh_call_id_alone_deletes_the_learned_call() -> None:
    # close case 1's window (withhold unlearned calls): only the fresh id is left to fail
    case = CASES_BY_NAME["livekit-agents-4876"]
    closed = (*case.before.shape.withheld_deletes, Withheld.UNLEARNED_CALLS)
    for ids, verdict in ((CallIds.FRESH, Verdict.COUNTEREXAMPLE), (CallIds.SERVER, Verdict.HOLDS)):
        fix = evolve(
            case.before, shape=evolve(case.before.shape, withheld_deletes=closed, call_ids=ids)
        )
        finding = explore(config_of(case, fix, SERVER), (INV1,)).finding(INV1)
        assert finding.verdict is verdict
        if finding.trace is not None:
            assert "learn call1" in [s.move.label() for s in finding.trace.steps]


def test_the_empty_message_guard_is_what_keeps_the_trimmed_turn() -> None:
    case = CASES_BY_NAME["livekit-agents-5886"]
    base = Environment()
    guarded = case.before
    unguarded = evolve(guarded, shape=evolve(guarded.shape, withheld_deletes=()))
    assert _verdict(case, guarded, base, INV5) is Verdict.COUNTEREXAMPLE
    assert _verdict(case, unguarded, base, INV5) is Verdict.HOLDS
    (fix,) = case.fixes
    again = evolve(fix, shape=evolve(fix.shape, withheld_deletes=(Withheld.EMPTY_MESSAGES,)))
    assert _verdict(case, again, base, INV5) is Verdict.COUNTEREXAMPLE
    # and the guard is what spared the server's unlearned turn
    assert _verdict(case, fix, SERVER, INV1) is Verdict.COUNTEREXAMPLE
    assert _verdict(case, again, SERVER, INV1) is Verdict.HOLDS


def test_the_compact_encoding_leaves_the_new_fields_to_the_readable_model() -> None:
    case = CASES_BY_NAME["livekit-agents-4876"]
    assert unsupported(config_of(case, case.before, SERVER)) is not None
    plain = evolve(case.before.shape, withheld_deletes=(), call_ids=CallIds.SERVER)
    assert unsupported(config_of(case, evolve(case.before, shape=plain), SERVER)) is None


@pytest.mark.parametrize("variant", ["unlocked", "lock5", "three-way"])
@pytest.mark.parametrize(
    "environment", [Environment(), Environment(rejections=True, timeouts=True)]
)
def test_invariant_5_is_the_same_on_the_compact_and_the_readable_states(
    variant: str, environment: Environment
) -> None:
    for scenario in SCENARIOS:
        config = Config(VARIANTS_BY_NAME[variant], scenario, environment)
        compact = explore(config, (INV5,), symmetry=False).finding(INV5)
        readable = explore_readable(config, (INV5,)).finding(INV5)
        assert (compact.verdict, compact.depth) == (readable.verdict, readable.depth), scenario.name


def test_z3_has_no_property_for_invariant_5_and_leaves_it_to_the_explorer() -> None:
    from proofs.engines.smt.bmc import COUNTEREXAMPLE, check_configs
    from proofs.engines.smt.encoding import Encoding
    from proofs.errors import UnsupportedConfig

    scenario = next(s for s in SCENARIOS if s.name == "cleanup-during-tool-push")
    config = Config(VARIANTS_BY_NAME["lock3"], scenario, Environment())
    encoding = Encoding(config)
    with pytest.raises(UnsupportedConfig, match="removed-at-rest"):
        encoding.bad(encoding.initial(), INV5)
    (cell,) = check_configs([config], (INV5,), timeout=30)
    assert cell.method == "explore" and "removed-at-rest" in cell.reason
    assert cell.verdict == COUNTEREXAMPLE and cell.violation is not None
    assert cell.violation.item == "asst1"
