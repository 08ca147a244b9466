"""A release run that goes wrong says what went wrong, not a JSON traceback."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from proofs.adapters.livekit import releases


def _run_printing(stdout: str, stderr: str) -> Any:
    def run(command: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(command, 0, stdout=stdout, stderr=stderr)

    return run


@pytest.mark.parametrize(
    ("stdout", "expected"),
    [
        ("Traceback (most recent call last): ...", "printed no JSON report"),
        ("[1, 2]", "reported release None"),
        ('{"release": "0.0.1"}', "reported release '0.0.1'"),
    ],
)
def test_a_run_without_its_report_raises_release_unavailable(
    monkeypatch: pytest.MonkeyPatch, stdout: str, expected: str
) -> None:
    monkeypatch.setattr(releases, "installed_version", lambda: "1.8.9")
    monkeypatch.setattr(releases.subprocess, "run", _run_printing(stdout, "boom"))
    with pytest.raises(releases.ReleaseUnavailable, match=expected):
        releases.run_release("1.8.9", [])
