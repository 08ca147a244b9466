"""A scenario's expectation is the explorer's verdict on it, never a lookup by name."""

from __future__ import annotations

import pytest

from model.scenarios import SCENARIOS_BY_NAME, Scenario


@pytest.fixture(scope="module")
def outside(livekit_version: str) -> dict[str, object]:
    """spoken-during-tool-push under a name the catalog does not know (1.8.9 loses an item)."""
    from proofs.adapters.livekit.check import check_scenario
    from proofs.adapters.livekit.releases import RELEASES_BY_VERSION

    if livekit_version != "1.8.9":
        pytest.skip("the scenario breaks the release's variant in 1.8.9 (lock5)")
    known = SCENARIOS_BY_NAME["spoken-during-tool-push"]
    scenario = Scenario(
        "say-while-a-tool-push-waits",
        "not in the catalog",
        known.calls,
        environment=known.environment,
    )
    return check_scenario(RELEASES_BY_VERSION[livekit_version], scenario, sweep=False)


def test_a_scenario_outside_the_catalog_is_judged_by_the_explorer(
    outside: dict[str, object],
) -> None:
    assert outside["real_broken"], "the real code loses an item here"
    assert outside["model_broken"] == outside["real_broken"]
    assert outside["matches"] is True
    assert outside["expectation"] == "explorer"
    assert outside["catalog_broken"] is None  # the catalog has no row for it


def test_the_model_names_an_item_the_real_code_lost(outside: dict[str, object]) -> None:
    model_items = outside["model_items"]
    real_items = outside["real_items"]
    assert isinstance(model_items, dict)
    assert isinstance(real_items, dict)
    for invariant, item in model_items.items():
        assert item in real_items[invariant]


def test_a_call_that_never_ran_makes_a_row_not_match(
    livekit_version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mutant adapter whose tool never returns: the tool-output push never starts,
    and nothing is lost (the output never reaches the local context). The broken
    invariants agree with the model's (`same_broken`, the comparison `matches` had
    alone), but which calls ran does not, so the row does not match."""
    import proofs.adapters.livekit.check as check
    from proofs.adapters.livekit.adapter import LivekitAdapter
    from proofs.adapters.livekit.releases import RELEASES_BY_VERSION
    from proofs.report.livekit import render

    class ToolNeverReturns(LivekitAdapter):
        def call(self, task: int) -> None:
            if self.config.call(task).site == "tool-outputs":
                self.called.add(task)
                return
            super().call(task)

    release = RELEASES_BY_VERSION[livekit_version]
    scenario = SCENARIOS_BY_NAME["replacement-first"]  # a replacement, then a tool output
    honest = check.check_scenario(release, scenario)
    assert honest["matches"] is True and honest["calls_ran_as_model"] is True
    original = check.ran_runner
    monkeypatch.setattr(
        check, "ran_runner", lambda provider: original(provider, build=ToolNeverReturns)
    )
    row = check.check_scenario(release, scenario)
    assert row["real_broken"] == [] and row["lost"] == []
    # 1.8.9 (lock5) holds here, so the old comparison passes the mutant
    if livekit_version == "1.8.9":
        assert row["model_broken"] == [] and row["same_broken"] is True
    assert row["calls_ran_as_model"] is False and row["matches"] is False
    for run in row["sweep"]:
        # the tool's push never starts (and a run stuck on its op gives no more calls)
        assert run["calls_ran"][1] == "no push", run
        assert run["model_calls_ran"] == [["returned", "returned"]]
        assert run["ran_as_model"] is False
    report = {
        "release": release.version,
        "variant": release.variant,
        "summary": release.summary,
        "seconds": 0,
        "scenarios": [row],
        "paths": [],
        "coverage": [],
        "complete": False,
    }
    text = "\n".join(render(report))
    off = sum(1 for run in [*row["replays"], *row["sweep"]] if not run["ran_as_model"])
    assert off == len(row["replays"]) + len(row["sweep"]) > 0
    assert f"replacement-first: in {off} run(s) the calls did not push as the model's" in text
    assert "real [returned, no push], model [returned, returned]" in text
    assert "calls did not push" not in "\n".join(render({**report, "scenarios": [honest]}))
