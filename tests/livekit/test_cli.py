"""`ackguard livekit` on the installed release: exit codes and JSON."""

from __future__ import annotations

import json

import pytest

from proofs.cli import main


def test_json_for_one_scenario(livekit_version: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["livekit", "--release", livekit_version, "--scenario", "overlapping-push"]
    assert main([*argv, "--no-sweep", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (release,) = data["releases"]
    assert release["release"] == livekit_version and not release["complete"]
    (row,) = release["scenarios"]
    assert row["scenario"] == "overlapping-push" and row["matches"] is True
    assert row["sequences"] == 0 and row["replays"]


def test_table(livekit_version: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["livekit", "--release", livekit_version, "--scenario", "stale-replacement"]
    assert main([*argv, "--no-sweep"]) == 0
    out = capsys.readouterr().out
    assert "stale-replacement" in out and "shortest, stale-replacement: call T0; copy T1" in out
    assert "not in this run" in out


def test_an_unknown_scenario_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["livekit", "--scenario", "nope"]) == 2
    assert "unknown scenario" in capsys.readouterr().err
