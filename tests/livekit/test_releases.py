"""Both releases, driven for real, against the model's verdicts for their variants.

1.8.8 corresponds to `unlocked`, 1.8.9 to `lock5` (whose spoken-message site is
unlocked, as in 1.8.9). The reports come from `conftest.release_report`.
"""

from __future__ import annotations

from typing import Any

import pytest

from model import INTERNAL_MOVES, Config, Invariant
from model.scenarios import SCENARIOS, SCENARIOS_BY_NAME
from model.variants import VARIANTS_BY_NAME
from proofs.engines.explore import explore
from tests.livekit.conftest import release_report, scenario

INV1 = Invariant.NO_UNINTENDED_DELETE.value
INV2 = Invariant.AGREEMENT_AT_REST.value


def _model_trace(variant: str, name: str) -> list[str]:
    """The stimuli of the model's shortest counterexample to invariant 1."""
    sc = SCENARIOS_BY_NAME[name]
    finding = explore(Config(VARIANTS_BY_NAME[variant], sc, sc.environment)).finding(
        Invariant.NO_UNINTENDED_DELETE
    )
    assert finding.trace is not None
    return [m.label() for m in finding.trace.moves if m.kind not in INTERNAL_MOVES]


def test_every_verdict_is_the_models(report: dict[str, Any]) -> None:
    for row in report["scenarios"]:
        calls = SCENARIOS_BY_NAME[row["scenario"]].calls
        spoken = any(call.site == "spoken-message" for call in calls)
        if spoken and report["release"] == "1.8.8":
            assert row["applicable"] is False and row["matches"] is None
            continue
        assert row["matches"] is True, row
    assert report["as_expected"] is True
    assert [row["scenario"] for row in report["scenarios"]] == [s.name for s in SCENARIOS]


def test_every_push_place_of_the_audit_is_driven(report: dict[str, Any]) -> None:
    assert report["complete"] and report["uncovered"] == []
    pushes = 5 if report["release"] == "1.8.8" else 6
    assert len(report["coverage"]) == pushes
    for path in report["paths"]:
        absent = path["site"] == "spoken-message" and report["release"] == "1.8.8"
        assert path["drive"] == "public"
        assert path["reached"] is not absent and path["stepped_with_model"] is not absent


def test_nothing_else_is_lost_or_fails(report: dict[str, Any]) -> None:
    for row in report["scenarios"]:
        assert row["errors"] == [] and row["background_losses"] == [], row["scenario"]


def test_1_8_8_loses_the_tool_output_of_the_overlapping_push() -> None:
    row = scenario(release_report("1.8.8"), "overlapping-push")
    assert row["lost"] == ["out1"] and row["real_broken"] == [INV2, INV1]
    assert row["shortest"] == _model_trace("unlocked", "overlapping-push")
    assert row["shortest"] == [
        "call T0",
        "call T1",
        "server-apply T0 out1",
        "client-apply T0 out1",
    ]


def test_1_8_9_keeps_it() -> None:
    row = scenario(release_report("1.8.9"), "overlapping-push")
    assert row["lost"] == [] and row["real_broken"] == [] and row["shortest"] is None
    # the interleaving that loses it in 1.8.8 was replayed against 1.8.9 too
    sources = {replay["source"] for replay in row["replays"]}
    assert f"unlocked {INV1}" in sources


def test_what_1_8_9_still_fails_each_with_its_shortest_interleaving() -> None:
    failing = {
        row["scenario"]: row for row in release_report("1.8.9")["scenarios"] if row["real_broken"]
    }
    lock5 = VARIANTS_BY_NAME["lock5"]
    expected = {
        sc.name
        for sc in SCENARIOS
        if any(
            lock5.expected(sc.name, sc.environment, i).value == "counterexample" for i in Invariant
        )
    }
    assert set(failing) == expected
    assert {
        "stale-replacement",
        "server-item-during-replacement",
        "spoken-during-tool-push",
    } <= set(failing)
    for name, row in failing.items():
        assert row["shortest"] == _model_trace("lock5", name), name
    assert failing["spoken-during-tool-push"]["lost"] == ["out1", "spoken1"]
    assert failing["server-item-during-replacement"]["lost"] == ["call1"]
    # the stale copy also drops the user turn locally: a delete nobody meant, no disagreement
    assert failing["stale-replacement"]["real_broken"] == [INV1]


@pytest.mark.parametrize("version", ["1.8.8", "1.8.9"])
def test_every_catalog_interleaving_steps_with_the_model(version: str) -> None:
    """With the speech turn (`model.sites.SpeechTurn`) the model has the scheduler's
    wait, so the real code is in a state the model reaches after every stimulus."""
    report = release_report(version)
    for row in report["scenarios"]:
        if row["applicable"]:
            assert all(s["divergence"] is None for s in row["sweep"]), row["scenario"]


def test_without_the_speech_turn_a_tool_push_leaves_the_model() -> None:
    """The check above catches a model without the turn: the tool-output path waits
    for the current speech before it snapshots, so a user turn that starts first is
    never overtaken, where the catalog's records let the tool push go on."""
    from proofs.adapters.livekit.check import check_scenario
    from proofs.adapters.livekit.releases import RELEASES_BY_VERSION, installed_version

    version = installed_version()
    if version not in RELEASES_BY_VERSION:
        pytest.skip("livekit-agents is not installed")
    release = RELEASES_BY_VERSION[version]
    row = check_scenario(release, SCENARIOS_BY_NAME["overlapping-push"], speech_turn=False)
    diverged = [s for s in row["sweep"] if s["divergence"] is not None]
    assert diverged
    for sweep in diverged:
        assert sweep["stimuli"][0] == "call T1", sweep
        assert "T0.pc: model wait-" in sweep["divergence"]
        assert sweep["broken"] == [] and sweep["lost"] == []
