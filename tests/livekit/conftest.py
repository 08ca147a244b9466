"""The livekit tests need the `livekit` extra; under CI they must run, not skip.

The installed release (the extra pins 1.8.9) is checked in-process; the other
release is installed under `.cache/livekit/<version>` (`pip install --no-deps
--target`, seconds on a warm pip cache) and checked in a subprocess. Each
release's report is built once per session and shared by the tests.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from typing import Any

import pytest

from proofs.adapters.livekit.releases import (
    RELEASES,
    RELEASES_BY_VERSION,
    installed_version,
    run_release,
)
from proofs.errors import ReleaseUnavailable

INSTALL = "pip install -e '.[test,livekit]'"
VERSIONS = [release.version for release in RELEASES]


def _unavailable(reason: str) -> None:
    """Skip locally; fail under CI, where these tests may not be skipped."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI must run the livekit tests: {INSTALL})")
    pytest.skip(reason)


def _installed() -> str:
    version = installed_version()
    if version is None:
        _unavailable(f"livekit-agents is not installed; install the extra: {INSTALL}")
    assert version is not None
    if version not in RELEASES_BY_VERSION:
        _unavailable(f"livekit-agents {version} is installed; the extra pins 1.8.9")
    return version


@pytest.fixture(scope="session")
def livekit_version() -> str:
    """The installed release (livekit can be imported from here on)."""
    return _installed()


@pytest.fixture(scope="session")
def release_189(livekit_version: str) -> Any:
    """The installed release's record, for tests that name 1.8.9's lines (skipped
    when another release is installed)."""
    from proofs.adapters.livekit.releases import RELEASES_BY_VERSION

    if livekit_version != "1.8.9":
        pytest.skip("these runs name 1.8.9's lines")
    return RELEASES_BY_VERSION[livekit_version]


@pytest.fixture(autouse=True)
def _quiet_livekit() -> Iterator[None]:
    logger = logging.getLogger("livekit")
    level = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(level)


_REPORTS: dict[str, dict[str, Any]] = {}


def release_report(version: str) -> dict[str, Any]:
    """The full report of `version`, in-process if installed, else in a subprocess."""
    if version not in _REPORTS:
        installed = _installed()
        if version == installed:
            from proofs.adapters.livekit.check import check_release

            # the audited pairs have their own tests (test_pairs.py), sweeping them
            # here would double this shared report's time
            _REPORTS[version] = check_release(pairs=False)
        else:
            try:
                _REPORTS[version] = run_release(version, ["--pairs", "no"])
            except ReleaseUnavailable as error:
                _unavailable(str(error))
    return _REPORTS[version]


@pytest.fixture(scope="session", params=VERSIONS)
def report(request: pytest.FixtureRequest) -> dict[str, Any]:
    return release_report(str(request.param))


def scenario(report: dict[str, Any], name: str) -> dict[str, Any]:
    for row in report["scenarios"]:
        if row["scenario"] == name:
            return dict(row)
    raise KeyError(name)
