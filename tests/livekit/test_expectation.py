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
