"""Case 3 confirmed on the real code: the model's shortest counterexample before
livekit/agents #6964, replayed on the releases' own OpenAI realtime session over the
gated socket. livekit-plugins-openai 1.6.8 (before #6729 and #6964) drops the item
announced after a deleted one and leaves the re-create's push waiting after its
duplicate refusal; the installed 1.8.9 (which has both) loses nothing."""

from __future__ import annotations

from typing import Any

import pytest

from tests.livekit.conftest import _installed, _unavailable


@pytest.fixture(scope="module")
def before() -> dict[str, Any]:
    from proofs.adapters.livekit.cases_b import run_release
    from proofs.errors import ReleaseUnavailable

    _installed()
    try:
        return run_release("1.6.8", "before")
    except ReleaseUnavailable as error:
        _unavailable(str(error))
        raise


@pytest.fixture(scope="module")
def after() -> dict[str, Any]:
    from proofs.adapters.livekit.cases_b import replay_fix

    version = _installed()
    replay = replay_fix("pr-6964").to_json()
    assert replay["release"] == version
    return replay


def test_the_release_before_the_fix_loses_what_the_report_says(before: dict[str, Any]) -> None:
    assert before["release"] == "1.6.8"
    assert before["skipped"] == []  # every move of the trace has its counterpart
    assert before["agrees"] is True  # mirror and server as the model's, step by step
    last = before["steps"][-1]
    assert "asst1" in last["server"] and "asst1" not in last["mirror"]  # invariant 3
    # invariant 6: the duplicate refusal reached the session, and the push still waits
    assert before["errors"] == ["item_create_duplicate_item_id"]
    assert before["waiting"] == [1]


def test_the_release_after_the_fix_does_not(after: dict[str, Any]) -> None:
    assert after["agrees"] is True
    last = after["steps"][-1]
    # the stale announcement lands where the model's ordinary one does: the tail, in
    # the server's order (why `stale-anchors` is inert for this shape)
    assert last["mirror"] == last["server"] == ["msg0", "asst1"]
    # the fixed mirror holds asst1, so the second push sends nothing to be refused
    assert after["skipped"] == ["server-apply T1 asst1", "client-apply T1 asst1"]
    assert after["waiting"] == [] and after["errors"] == []


@pytest.fixture(scope="module")
def first_fixed() -> dict[str, dict[str, Any]]:
    """The before trace on the first release with each fix, beside that fix's model."""
    from proofs.adapters.livekit.cases_b import run_release
    from proofs.errors import ReleaseUnavailable

    _installed()
    try:
        return {"1.6.9": run_release("1.6.9", "pr-6729"), "1.7.1": run_release("1.7.1", "pr-6964")}
    except ReleaseUnavailable as error:
        _unavailable(str(error))
        raise


def test_the_first_release_with_6729_settles_the_refusal_but_still_drops_the_item(
    first_fixed: dict[str, dict[str, Any]],
) -> None:
    """pr-6729's record: invariant 6 closed, invariant 3 left open; so does 1.6.9."""
    replay = first_fixed["1.6.9"]
    assert replay["release"] == "1.6.9" and replay["agrees"] is True
    last = replay["steps"][-1]
    assert "asst1" in last["server"] and "asst1" not in last["mirror"]  # invariant 3
    assert replay["errors"] == ["item_create_duplicate_item_id"]
    assert replay["waiting"] == []  # the refusal ended the push's wait: invariant 6 holds


def test_the_first_release_with_6964_loses_nothing(
    first_fixed: dict[str, dict[str, Any]],
) -> None:
    replay = first_fixed["1.7.1"]
    assert replay["release"] == "1.7.1" and replay["agrees"] is True
    last = replay["steps"][-1]
    assert last["mirror"] == last["server"] == ["msg0", "asst1"]
    assert replay["waiting"] == [] and replay["errors"] == []
