"""Every pair of the push places the audit finds becomes a scenario, run for real."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="module")
def paths(livekit_version: str) -> list[dict[str, Any]]:
    """Each site alone over the stand-in: the line of the installed release it pushes from."""
    from proofs.adapters.livekit.check import PATHS, check_path
    from proofs.adapters.livekit.releases import RELEASES_BY_VERSION

    release = RELEASES_BY_VERSION[livekit_version]
    return [check_path(release, scenario) for scenario in PATHS]


def test_every_pair_of_audited_places_is_a_scenario(
    livekit_version: str, paths: list[dict[str, Any]]
) -> None:
    from proofs.adapters.livekit.pairs import audited_pairs, push_places
    from proofs.adapters.livekit.releases import RELEASES_BY_VERSION

    places = sorted({place.line for place in push_places()})
    driven = sorted({line for path in paths for line in path["push_lines"]})
    assert driven == places  # every audited place is some site's push, alone
    scenarios = audited_pairs(RELEASES_BY_VERSION[livekit_version], paths)
    n = len(places)
    assert len(scenarios) == n * (n + 1) // 2
    named = {tuple(int(x) for x in s.name.split("-")[1:]) for s in scenarios}
    assert named == {(a, b) for a in places for b in places if a <= b}


def test_an_audited_pair_over_the_plugin_loses_what_the_model_says(
    livekit_version: str, paths: list[dict[str, Any]]
) -> None:
    from proofs.adapters.livekit.check import check_scenario
    from proofs.adapters.livekit.pairs import audited_pairs
    from proofs.adapters.livekit.releases import RELEASES_BY_VERSION

    if livekit_version != "1.8.9":
        pytest.skip("the pair's lines are 1.8.9's")
    release = RELEASES_BY_VERSION[livekit_version]
    (pair,) = [s for s in audited_pairs(release, paths) if s.name == "pair-812-3459"]
    row = check_scenario(release, pair, sweep=False, provider="plugin")
    assert row["matches"] is True and row["lost"] == ["note1"]  # say() beside a replacement
