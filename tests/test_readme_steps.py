"""README step 3 is a command that finds places, in a file the clone provides."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from proofs.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_step_3_audits_the_example_and_finds_its_four_pushes(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    readme = (ROOT / "README.md").read_text()
    step = readme[readme.index("**3. Your own code.**") : readme.index("**4. ")]
    commands = re.findall(r"^ackguard audit .*$", step, flags=re.MULTILINE)
    assert len(commands) == 1
    monkeypatch.chdir(ROOT)
    assert main(shlex.split(commands[0])[1:]) == 0
    out = capsys.readouterr().out
    assert "4 places (4 pushes, 0 mirror reads), 0 breaking the lock discipline" in out
    # and without the flags, the same file gives nothing: why step 3 gives them
    assert main(["audit", shlex.split(commands[0])[2]]) == 0
    captured = capsys.readouterr()
    assert "0 places" in captured.out and "--session-attr" in captured.err
