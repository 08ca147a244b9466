"""Interrupted generations driven as the speech turn has them, over the real plugin
of the installed release (1.8.9 in-process; the 1.8.8 rows are in the report's
tests): one generation at a time, each call's push reached."""

from __future__ import annotations

from typing import Any

import pytest

from model.scenarios import SCENARIOS_BY_NAME, Scenario
from proofs.adapters.livekit.pairs import pair_scenario


def _row(scenario: Scenario) -> dict[str, Any]:
    from proofs.adapters.livekit.check import check_scenario
    from proofs.adapters.livekit.releases import RELEASES_BY_VERSION, installed_version

    version = installed_version()
    if version != "1.8.9":
        pytest.skip("livekit-agents 1.8.9 is not the installed release")
    return check_scenario(RELEASES_BY_VERSION[version], scenario, provider="plugin")


def test_a_tool_reply_beside_an_interrupted_generation_runs() -> None:
    # the tool's reply is set up before the interrupted generation: started after
    # it, the reply queued behind it and the interruption cancelled it unrun
    row = _row(pair_scenario("interrupted-tool-outputs", "tool-outputs", (4808, 4922)))
    assert row["push_lines"] == [4808, 4922]
    assert row["sequences"] and row["stepped_with_model"] == row["sequences"]
    assert row["matches"] is True


def test_two_interrupted_generations_run_one_after_the_other() -> None:
    # the cleanup's generation is the set-up's; the interrupted tool generation is
    # a real reply started at its call, once the cleanup's push has returned
    row = _row(SCENARIOS_BY_NAME["cleanup-during-tool-push"])
    assert row["push_lines"] == [4758, 4808]
    # one run in each reading: two generations, and one generation's two pushes
    assert row["readings"] == ["as called", "one generation"]
    assert row["stepped_with_model"] == row["sequences"] == 2
    assert row["matches"] is True and row["real_broken"] == row["model_broken"] == []
