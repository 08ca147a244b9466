"""Without the extra the livekit tests skip with the install command; under CI they fail."""

from __future__ import annotations

import pytest

from tests.livekit import conftest


def test_missing_extra_skips_locally_and_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conftest, "installed_version", lambda: None)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"\.\[test,livekit\]"):
        conftest._installed()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must run the livekit tests"):
        conftest._installed()


def test_an_unknown_release_is_not_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conftest, "installed_version", lambda: "0.9.0")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"pins 1\.8\.9"):
        conftest._installed()
