"""Both releases, driven for real, against the model's verdicts for their variants.

1.8.8 corresponds to `unlocked`, 1.8.9 to `lock5` (whose spoken-message site is
unlocked, as in 1.8.9). The reports come from `conftest.release_report`.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from model import INTERNAL_MOVES, Config, Invariant
from model.scenarios import SCENARIOS, SCENARIOS_BY_NAME, Call, Scenario
from model.variants import VARIANTS_BY_NAME
from proofs.engines.explore import explore
from tests.livekit.conftest import release_report, scenario

INV1 = Invariant.NO_UNINTENDED_DELETE.value
INV2 = Invariant.AGREEMENT_AT_REST.value
INV5 = Invariant.REMOVED_AT_REST.value

#: The interrupted generation ends on its cancel's done event (`interruption_end`).
TRIM_SHORTEST = [
    "call T0",
    "server-apply T0 response",
    "client-apply T0 response",
    "call T1",
    "server-apply T0 out1",
    "client-apply T0 out1",
]
#: A tool output pushed by a generation that was not interrupted: no cancel.
NEW_OUTPUT_SHORTEST = ["call T0", "call T1", "server-apply T0 out1", "client-apply T0 out1"]


def _assert_trim_undone(row: dict[str, Any]) -> None:
    """The trim row as both releases have it, and the release model with the
    placeholder handler (`release_shape`): the trimmed `out1` is back on the server
    and locally (invariant 5, nothing lost), in every interleaving with the model."""
    assert row["applicable"] is True and row["matches"] is True
    assert row["model_broken"] == [INV5] and row["model_items"] == {INV5: "out1"}
    # the catalog's own records have no handler: its table still says it holds
    assert row["catalog_broken"] == []
    assert row["real_broken"] == [INV5] and row["real_items"] == {INV5: ["out1"]}
    assert row["same_items"] is True
    assert row["lost"] == [] and row["recreated"] == [] and row["errors"] == []
    assert row["shortest"] == TRIM_SHORTEST
    assert row["stepped_with_model"] == row["sequences"] == 6
    undone = [s for s in row["sweep"] if s["broken"]]
    # the two interleavings with the replacement called while the output's push waits
    ended = ["call T0", "server-apply T0 response", "client-apply T0 response"]
    assert [s["stimuli"][:4] for s in undone] == [
        [*ended, "call T1"],
        [*ended, "server-apply T0 out1"],
    ]


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
        if row["scenario"] == "trim-tool-output":
            _assert_trim_undone(row)
        assert row["matches"] is True, row
    # the shared report runs no pairs (test_pairs.py has them): every row is the model's
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
    """The only items outside the scenario a push deletes are second tools' outputs
    (a tool-output push whose output is made before its call has a generation with a
    second tool, `LivekitAdapter.early`), each pushed with its scenario output and
    deleted with it: that output is lost too."""
    for row in report["scenarios"]:
        assert row["errors"] == [], row["scenario"]
        for item in row["background_losses"]:
            assert item.startswith("later_"), (row["scenario"], item)
            assert item.removeprefix("later_") in row["lost"], (row["scenario"], item)


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
    rows = release_report("1.8.9")["scenarios"]
    failing = {row["scenario"]: row for row in rows if row["real_broken"]}
    # the explorer's verdicts with livekit's speech turn: the catalog's own table is
    # for the records without it, where `cleanup-during-spoken` fails under lock5
    # (the cleanup holds the turn across its push, so say() never overlaps it)
    expected = {row["scenario"] for row in rows if row["model_broken"]}
    lock5 = VARIANTS_BY_NAME["lock5"]
    spoken = SCENARIOS_BY_NAME["cleanup-during-spoken"]
    assert lock5.expected(spoken.name, spoken.environment, Invariant.REMOVED_AT_REST).value == (
        "counterexample"
    )
    assert "cleanup-during-spoken" not in expected | set(failing)
    assert set(failing) == expected
    assert {
        "stale-replacement",
        "server-item-during-replacement",
        "spoken-during-tool-push",
        "trim-tool-output",
    } <= set(failing)
    for name, row in failing.items():
        if name == "trim-tool-output":
            # no invariant-1 counterexample: the release model's own, with its handler
            _assert_trim_undone(row)
        else:
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


def test_the_sweep_drives_the_runs_that_create_an_item_before_its_call(
    livekit_version: str,
) -> None:
    """The model's runs with a `before-call` step are driven (a tool returns, a playout
    starts, `LivekitAdapter.born`); the sweep of each reading (`check.set_ups`) leaves
    out only the runs `drivable` names a reason for, each counted in `not_driven`,
    none dropped unseen."""
    from proofs.adapters.livekit.check import release_config, set_ups
    from proofs.adapters.livekit.drivable import undrivable
    from proofs.adapters.livekit.releases import RELEASES_BY_VERSION
    from proofs.engines.conformance.follow import sequences

    report = release_report(livekit_version)
    release = RELEASES_BY_VERSION[livekit_version]
    by_name = {row["scenario"]: row for row in report["scenarios"]}
    early_driven = 0
    for case in SCENARIOS:
        row = by_name[case.name]
        if not row["applicable"]:
            continue
        readings = set_ups(release_config(release.variant, case, case.environment))
        every = [(reading, moves) for reading in readings for moves in sequences(reading)]
        left = [m for reading, m in every if undrivable(reading, m) is not None]
        assert row["sequences"] == len(every) - len(left), case.name
        # the sweep's runs left out, and the replayed counterexamples left out too
        assert row["not_driven"] >= len(left), case.name
        assert sum(row["not_driven_why"].values()) == row["not_driven"], case.name
        early_driven += sum(
            1 for s in row["sweep"] if any(x.startswith("before-call") for x in s["stimuli"])
        )
    assert early_driven > 0


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
        called = [label for label in sweep["stimuli"] if label.startswith("call")]
        assert called[0] == "call T1", sweep
        assert "T0.pc: model wait-" in sweep["divergence"]
        assert sweep["broken"] == [] and sweep["lost"] == []


def test_the_trim_is_undone_by_the_placeholder_handler(monkeypatch: pytest.MonkeyPatch) -> None:
    """The handler in the release model is the real one: the installed release breaks
    invariant 5 on the trim as the model does, in every interleaving with it. With
    the activity's `_on_remote_item_added` made a no-op (a release without it) the
    real code keeps the trim and the rows stop matching, so the comparison sees the
    handler. The normal tool-output path (a scenario outside the catalog) alike."""
    from proofs.adapters.livekit.check import check_scenario
    from proofs.adapters.livekit.releases import RELEASES_BY_VERSION, installed_version

    version = installed_version()
    if version not in RELEASES_BY_VERSION:
        pytest.skip("livekit-agents is not installed")
    from livekit.agents.voice.agent_activity import AgentActivity

    release = RELEASES_BY_VERSION[version]
    trim = SCENARIOS_BY_NAME["trim-tool-output"]
    normal = Scenario(
        name="trim-new-tool-output",
        summary="an application trims a new tool output whose push is still under way",
        calls=(Call("tool-outputs", adds=("out1",)), Call("replacement", drops=("out1",))),
    )
    _assert_trim_undone(check_scenario(release, trim))
    undone = check_scenario(release, normal)
    assert undone["model_broken"] == [INV5] and undone["real_broken"] == [INV5]
    assert undone["matches"] is True and undone["shortest"] == NEW_OUTPUT_SHORTEST
    assert undone["stepped_with_model"] == undone["sequences"] == 4
    monkeypatch.setattr(AgentActivity, "_on_remote_item_added", lambda self, ev: None)
    for case, stepped, sequences in ((trim, 4, 6), (normal, 2, 4)):
        row = check_scenario(release, case)
        assert row["real_broken"] == [] and row["model_broken"] == [INV5], case.name
        assert row["matches"] is False, case.name
        assert row["stepped_with_model"] == stepped and row["sequences"] == sequences, case.name


@pytest.mark.parametrize("fact", ["local_tail", "after_hidden_call"])
def test_each_fact_of_the_handler_is_needed(monkeypatch: pytest.MonkeyPatch, fact: str) -> None:
    """The handler's two facts, each taken out of the release model, on the real code:
    without the config-update item (`local_tail`) the model's replacement keeps the
    model's function call, which both releases lose; without the function call
    before a tool output (`after_hidden_call`) the model keeps the trim, which both
    releases undo. Each makes its row stop matching."""
    import proofs.adapters.livekit.check as check
    from model.shapes import LocalTail
    from proofs.adapters.livekit.releases import RELEASES_BY_VERSION, installed_version

    version = installed_version()
    if version not in RELEASES_BY_VERSION:
        pytest.skip("livekit-agents is not installed")
    release = RELEASES_BY_VERSION[version]
    if fact == "local_tail":
        shape = check.release_shape
        monkeypatch.setattr(
            check,
            "release_shape",
            lambda variant: attrs.evolve(shape(variant), local_tail=LocalTail.NONE),
        )
        name, lost = "server-item-during-replacement", [INV2, INV1]
    else:
        monkeypatch.setattr(check, "with_hidden_calls", lambda sites: sites)
        name, lost = "trim-tool-output", [INV5]
    row = check.check_scenario(release, SCENARIOS_BY_NAME[name])
    assert row["real_broken"] == lost and row["model_broken"] == []
    assert row["matches"] is False


def test_the_table_says_the_trim_was_undone(report: dict[str, Any]) -> None:
    """The trim loses nothing and deletes nothing: the table says what it broke."""
    from proofs.report.livekit import render

    (line,) = [line for line in render(report) if line.startswith("  trim-tool-output ")]
    assert "kept an item a push meant to remove" in line and "deleted" not in line
