"""Each casebook configuration that says it was run on real code names the test that
runs it, and that test runs the release the sentence names."""

from __future__ import annotations

import re
from pathlib import Path

from model import CASES

ROOT = Path(__file__).resolve().parents[2]


def test_every_confirmation_names_a_test_that_runs_its_release() -> None:
    confirmed = [fix for case in CASES for fix in case.configurations if fix.confirmed]
    assert len(confirmed) >= 9
    for fix in confirmed:
        found = re.search(r"\((tests/[\w/]+\.py)\)$", fix.confirmed)
        assert found, fix.confirmed
        test = (ROOT / found.group(1)).read_text()
        for release in re.findall(r"\b1\.\d+\.\d+\b", fix.confirmed):
            # the release is named in the test, or is the installed one it runs
            assert release in test or release == "1.8.9", (fix.name, release)
