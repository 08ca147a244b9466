"""livekit-agents 1.8.8 with its own OpenAI plugin, over the gated socket, in a subprocess."""

from __future__ import annotations

from typing import Any

import pytest

from tests.livekit.conftest import _installed, _unavailable


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    from proofs.adapters.livekit.releases import run_release
    from proofs.errors import ReleaseUnavailable

    _installed()
    args = ["--provider", "plugin", "--no-sweep", "--pairs", "no"]
    for name in ("overlapping-push", "replacement-first"):
        args += ["--scenario", name]
    try:
        return run_release("1.8.8", args)
    except ReleaseUnavailable as error:
        _unavailable(str(error))
        raise


def test_the_plugin_of_1_8_8_loses_what_the_model_says(report: dict[str, Any]) -> None:
    assert report["provider"] == "plugin"
    rows = {row["scenario"]: row for row in report["scenarios"]}
    seed = rows["overlapping-push"]
    assert seed["matches"] is True
    assert seed["lost"] == ["out1"]
    assert seed["model_items"]["no-unintended-delete"] == "out1"
    assert rows["replacement-first"]["lost"] == ["note1"]
    assert rows["replacement-first"]["matches"] is True
    assert report["as_expected"]
