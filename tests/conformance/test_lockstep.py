"""The implementation against the model: every catalog cell, every explorer trace."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from model import (
    SCENARIOS,
    SCENARIOS_BY_NAME,
    VARIANTS_BY_NAME,
    Config,
    Invariant,
    Move,
    MoveKind,
    Scenario,
    Variant,
    Verdict,
)
from model.environment import ALL as _ALL
from proofs.adapters.impl import impl_adapter
from proofs.adapters.impl.adapter import ImplAdapter
from proofs.engines.conformance.exhaustive import exhaust
from proofs.engines.conformance.lockstep import Lockstep, Mismatch, NotEnabled, trace_steps
from proofs.engines.conformance.run import check_cell
from proofs.engines.conformance.steps import format_steps, parse_steps
from proofs.engines.explore import explore
from tests.conformance.conftest import CELLS, cell_id, own
from tests.conformance.mutants import MirrorAtSend, NeverResumes

#: Every option the adapter interface can drive: it has no connection to drop.
ALL = attrs.evolve(_ALL, reconnects=False)


@pytest.mark.parametrize("cell", CELLS, ids=cell_id)
def test_every_cell_behaves_as_the_catalog_expects(cell: tuple[Variant, Scenario]) -> None:
    """Exhaustive to full depth under the scenario's own environment: no mismatch,
    and the implementation breaks exactly the invariants the catalog expects, each
    the way the model's shortest counterexample does."""
    report = check_cell(own(*cell), impl_adapter)
    assert not report.mismatches, report.mismatches[0].detail
    assert not report.exhaustion.truncated
    expected = {
        inv
        for inv in Invariant
        if cell[0].expected(cell[1].name, cell[1].environment, inv) is Verdict.COUNTEREXAMPLE
    }
    assert set(report.exhaustion.violations) == expected
    assert all(v.same_as_model for v in report.violations)
    assert all(trace.reproduced for trace in report.traces)
    assert report.as_expected


@pytest.mark.parametrize("cell", CELLS, ids=cell_id)
def test_every_explorer_counterexample_under_all_options_is_the_same_bug(
    cell: tuple[Variant, Scenario],
) -> None:
    config = Config(cell[0], cell[1], ALL)
    for finding in explore(config).findings:
        if finding.trace is None or finding.violation is None:
            continue
        run = Lockstep.replay_moves(config, finding.trace.moves, impl_adapter)
        # the trace's WAKE and RESUME moves happened on their own, and perhaps more
        assert run.model_moves >= len(finding.trace.moves)
        found = run.violations[finding.invariant]
        assert (found.item, found.task, found.site) == (
            finding.violation.item,
            finding.violation.task,
            finding.violation.site,
        )


def test_three_way_conforms_and_holds_under_every_option_at_full_depth() -> None:
    for scenario in SCENARIOS:
        result = exhaust(Config(VARIANTS_BY_NAME["three-way"], scenario, ALL), 12, impl_adapter)
        assert not result.mismatches, result.mismatches[0].detail
        # invariant 5 breaks where the server rejects a delete: nothing sends it again
        assert set(result.violations) <= {Invariant.REMOVED_AT_REST} and not result.truncated
    cleanup = SCENARIOS_BY_NAME["cleanup-during-tool-push"]
    no_rejections = attrs.evolve(ALL, rejections=False)
    config = Config(VARIANTS_BY_NAME["three-way"], cleanup, no_rejections)
    result = exhaust(config, 12, impl_adapter)
    assert not result.mismatches and not result.violations


@pytest.mark.parametrize("variant", ["lock5", "lock3"])
def test_locked_variants_conform_under_every_option(variant: str) -> None:
    for scenario in SCENARIOS:
        config = Config(VARIANTS_BY_NAME[variant], scenario, ALL)
        result = exhaust(config, 6, impl_adapter)
        assert not result.mismatches, result.mismatches[0].detail
        for invariant in result.violations:
            assert config.variant.expected(scenario.name, ALL, invariant) is Verdict.COUNTEREXAMPLE


def test_a_stimulus_the_model_does_not_allow_is_refused() -> None:
    config = own(VARIANTS_BY_NAME["lock5"], SCENARIOS_BY_NAME["overlapping-push"])
    with pytest.raises(NotEnabled, match="server-apply"):
        Lockstep.replay(config, parse_steps("server-apply T0 out1"), impl_adapter)


def test_a_mismatch_says_what_differs_and_after_which_steps() -> None:
    config = own(VARIANTS_BY_NAME["lock5"], SCENARIOS_BY_NAME["overlapping-push"])
    with pytest.raises(Mismatch) as caught:
        Lockstep.replay(
            config,
            parse_steps("call T0"),
            ImplAdapter.factory(session_factory=MirrorAtSend),
        )
    assert "mirror: model [msg0], implementation [msg0, out1]" in caught.value.detail
    assert "after: call T0" in str(caught.value)


def test_an_implementation_that_stops_where_the_model_goes_on_is_caught() -> None:
    config = own(VARIANTS_BY_NAME["lock5"], SCENARIOS_BY_NAME["overlapping-push"])
    with pytest.raises(Mismatch, match="stopped where the model goes on: resume T0"):
        Lockstep.replay(
            config,
            parse_steps("call T0; server-apply T0 out1; client-apply T0 out1"),
            ImplAdapter.factory(session_factory=NeverResumes),
        )


def test_a_trace_that_postpones_a_resume_replays_as_a_burst() -> None:
    """z3's shortest stale-replacement trace lets the application copy between the
    user turn's last ack and its resume; the implementation would resume first, so
    the copy arrives in the same loop iteration as the ack."""
    config = own(VARIANTS_BY_NAME["lock5"], SCENARIOS_BY_NAME["stale-replacement"])
    trace = (
        Move(MoveKind.CALL, 0),
        Move(MoveKind.SERVER_APPLY, 0, "hello"),
        Move(MoveKind.CLIENT_APPLY, 0, "hello"),
        Move(MoveKind.COPY, 1),
        Move(MoveKind.RESUME, 0),
        Move(MoveKind.CALL, 1),
    )
    steps = trace_steps(config, trace)
    assert format_steps(steps) == (
        "call T0; server-apply T0 hello; client-apply T0 hello + copy T1; call T1"
    )
    found = Lockstep.replay_moves(config, trace, impl_adapter).violations[
        Invariant.NO_UNINTENDED_DELETE
    ]
    assert (found.item, found.site) == ("hello", "replacement")
    # one stimulus at a time, the user turn upserts hello before the copy: no bug
    eager = parse_steps("call T0; server-apply T0 hello; client-apply T0 hello; copy T1; call T1")
    assert not Lockstep.replay(config, eager, impl_adapter).violations


@pytest.mark.parametrize(
    ("variant", "scenario"),
    [
        ("lock5", "stale-replacement"),
        ("unlocked", "overlapping-push"),
        ("lock3", "cleanup-during-tool-push"),
    ],
)
def test_z3_counterexamples_are_the_same_bug_in_the_implementation(
    variant: str, scenario: str
) -> None:
    bmc = pytest.importorskip("proofs.engines.smt.bmc")
    config = own(VARIANTS_BY_NAME[variant], SCENARIOS_BY_NAME[scenario])
    for result in bmc.check_configs([config], timeout=60):
        if result.trace is None:
            continue
        found = Lockstep.replay_moves(config, result.trace.moves, impl_adapter).violations[
            result.invariant
        ]
        assert (found.item, found.site) == (result.violation.item, result.violation.site)


def test_a_break_beyond_the_depth_counts_only_through_its_replay(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`--depth 6` cannot reach unlocked's 8-stimulus loss of agreement at rest:
    the explorer trace replayed in the implementation is what shows it (the cell
    used to report it missed), and a replay that does not reproduce it is missed."""
    from proofs.engines.conformance import run

    config = own(VARIANTS_BY_NAME["unlocked"], SCENARIOS_BY_NAME["overlapping-push"])
    report = check_cell(config, impl_adapter, depth=6)
    assert Invariant.AGREEMENT_AT_REST not in report.exhaustion.violations
    assert report.as_expected and not report.missed

    replay = run.replay_trace

    def unreproduced(*args: Any, **kwargs: Any) -> run.TraceReplay:
        got = replay(*args, **kwargs)
        if got.invariant is Invariant.AGREEMENT_AT_REST:
            return attrs.evolve(got, reproduced=False, found=None)
        return got

    monkeypatch.setattr(run, "replay_trace", unreproduced)
    report = check_cell(config, impl_adapter, depth=6)
    assert report.missed == (Invariant.AGREEMENT_AT_REST,)
    assert not report.as_expected
