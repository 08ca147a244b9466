"""The suite's own runs never reach the command line's last-resort handler.

`proofs.cli.main` appends a line to `$ACKGUARD_CRASH_LOG` each time it turns an
unexpected exception into exit 3. The whole session shares one log (subprocesses
inherit the variable), and each test fails if the log grew while it ran; a test
that means to reach the handler points the variable elsewhere for itself.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from proofs.cli.main import CRASH_LOG


@pytest.fixture(scope="session")
def crash_log(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    log = tmp_path_factory.mktemp("crashes") / "crash.log"
    log.touch()
    before = os.environ.get(CRASH_LOG)
    os.environ[CRASH_LOG] = str(log)
    yield log
    if before is None:
        del os.environ[CRASH_LOG]
    else:
        os.environ[CRASH_LOG] = before


@pytest.fixture(autouse=True)
def _no_last_resort(crash_log: Path) -> Iterator[None]:
    size = crash_log.stat().st_size
    yield
    with crash_log.open(encoding="utf-8") as log:
        log.seek(size)
        fired = log.read()
    assert not fired, f"the last-resort handler fired during this test: {fired}"
