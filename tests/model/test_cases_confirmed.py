"""Each casebook configuration that says it was run on real code names the test that
runs it, and that test runs the release the sentence names."""

from __future__ import annotations

import json
import re
from pathlib import Path

from model import CASES

ROOT = Path(__file__).resolve().parents[2]
#: The lock the node replays install from (proofs/adapters/livekit/cases_js.py).
JS_LOCK = ROOT / "proofs" / "adapters" / "livekit" / "js" / "package-lock.json"
NPM_RELEASE = re.compile(r"(@livekit/[\w-]+) (\d+\.\d+\.\d+)")


def _locked(package: str) -> str | None:
    """The version the committed lock pins for an npm package, if any."""
    entry = json.loads(JS_LOCK.read_text())["packages"].get(f"node_modules/{package}")
    return None if entry is None else str(entry["version"])


def test_every_confirmation_names_a_test_that_runs_its_release() -> None:
    confirmed = [fix for case in CASES for fix in case.configurations if fix.confirmed]
    assert len(confirmed) >= 10
    for fix in confirmed:
        found = re.search(r"\((tests/[\w/]+\.py)\)$", fix.confirmed)
        assert found, fix.confirmed
        test = (ROOT / found.group(1)).read_text()
        npm = NPM_RELEASE.findall(fix.confirmed)
        for package, version in npm:
            # an npm release runs under node: the test drives the replay that
            # installs the lock, and the lock pins that very version
            assert "cases_js" in test, (fix.name, package)
            assert _locked(package) == version, (fix.name, package, version)
        python = NPM_RELEASE.sub("", fix.confirmed)
        for release in re.findall(r"\b1\.\d+\.\d+\b", python):
            # the release is named in the test, or is the installed one it runs
            assert release in test or release == "1.8.9", (fix.name, release)


def test_an_npm_release_the_lock_does_not_pin_is_caught() -> None:
    assert _locked("@livekit/agents") is not None
    assert _locked("@livekit/agents") != "1.6.4"
    assert NPM_RELEASE.findall("@livekit/agents 1.6.4 (tests/x.py)") == [
        ("@livekit/agents", "1.6.4")
    ]
