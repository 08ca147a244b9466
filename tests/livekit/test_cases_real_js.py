"""Casebook case 5 (agents-js-1843) confirmed on the released agents-js session.

The model's counterexample before the fix, carried on through the tool output's
push, is replayed on `@livekit/agents-plugin-openai` 1.7.0 with `@livekit/agents`
1.7.0 (installed by `npm ci` from the committed lock) over the gated socket
(`proofs.adapters.livekit.cases_js`): the rebuild leaves call1 off the new
server, the orphaned out1 is sent and refused, and the loss is the model's:
the same item under the same invariant. #1843 is in no release, so its
configuration has nothing to run.

Needs node and npm: skipped, with the reason, only where node is absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from model import Config, Invariant, State, initial_state, step
from model.cases import CASES_BY_NAME
from proofs.adapters.livekit import cases_js
from proofs.engines.casebook import config_of
from proofs.engines.explore import explore
from proofs.errors import ReleaseUnavailable
from tests.livekit.conftest import _unavailable

CASE = CASES_BY_NAME[cases_js.CASE_NAME]
COLUMN = CASE.environments[-1]


def _config(fix: str) -> Config:
    record = next(f for f in CASE.configurations if f.name == fix)
    return config_of(CASE, record, COLUMN)


MOVES = cases_js.before_trace(_config("before"))


@pytest.fixture(scope="module")
def install() -> Path:
    missing = cases_js.node_missing()
    if missing is not None:
        pytest.skip(missing)
    try:
        return cases_js.ensure_release()[0]
    except ReleaseUnavailable as error:
        _unavailable(str(error))
        raise


@pytest.fixture(scope="module")
def before(install: Path) -> cases_js.JsReplay:
    return cases_js.replay_fix("before", MOVES, install)


def _disagreements(config: Config, run: cases_js.JsReplay) -> list[str]:
    """The steps where the real run's mirror or server differs from the model of
    `config` given the same moves (a move it does not enable ends the walk)."""
    state, out = initial_state(config), list[str]()
    views = iter(run.steps)
    for move in MOVES:
        try:
            state = step(state, config, move)
        except ValueError:
            return [*out, f"{move.label()}: not enabled"]
        if move.kind.value == "disconnect":
            continue
        view = next(views)
        if sorted(view.mirror) != sorted(state.mirror) or sorted(view.server) != sorted(
            state.server
        ):
            out.append(view.move)
    return out


def test_the_trace_pushes_the_tool_output_after_the_reconnect() -> None:
    labels = [move.label() for move in MOVES]
    assert labels.index("connect") < labels.index("call T0")
    assert CASE.before.release == "@livekit/agents-plugin-openai==1.7.0"


def test_the_release_is_the_pinned_one(before: cases_js.JsReplay) -> None:
    assert before.release == (cases_js.AGENTS_JS, cases_js.AGENTS_JS)
    assert before.connections == 2


def test_the_release_before_the_fix_steps_as_the_model_before(
    before: cases_js.JsReplay,
) -> None:
    assert len(before.steps) == len(MOVES) - 1
    assert before.agrees, [v for v in before.steps if not v.agrees]


def test_the_release_loses_the_models_item_under_the_models_invariant(
    before: cases_js.JsReplay,
) -> None:
    config = _config("before")
    finding = explore(config, (Invariant.AGREEMENT_AT_REST,)).finding(Invariant.AGREEMENT_AT_REST)
    assert finding.violation is not None
    assert finding.violation.item == "call1"
    assert before.broken == {Invariant.AGREEMENT_AT_REST}
    assert before.lost == ("call1",)
    # the longer trace ends as the model says: call1 lost, out1 refused, not lost
    end = _end(config)
    assert before.lost == cases_js.model_lost(end)
    assert before.refused == tuple(sorted(end.refused)) == ("out1",)
    assert before.server == end.server and before.mirror == end.mirror
    assert before.local == end.local
    assert "openai.RealtimeModel rejected part of a chat context update" in before.logged


def _end(config: Config) -> State:
    state = initial_state(config)
    for move in MOVES:
        state = step(state, config, move)
    return state


def test_the_comparison_fails_against_the_python_rebuild(before: cases_js.JsReplay) -> None:
    # the Python record differs from the connect on: its session notices the drop
    # only after a window (`DropWindow.UNRECORDED`) and its rebuild keeps call1
    assert _disagreements(_config("python"), before)[0] == "connect: not enabled"


def test_the_release_sends_what_pr_1843_would_drop(before: cases_js.JsReplay) -> None:
    # under #1843 the push drops out1 before sending; 1.7.0 sent it (and it was refused)
    config = _config("pr-1843")
    state = initial_state(config)
    for move in MOVES[:3]:
        state = step(state, config, move)
    assert MOVES[2].label() == "call T0" and state.to_server == ()
    assert "out1" not in state.local
    assert before.refused == ("out1",) and "out1" in before.local
    assert _disagreements(config, before) == ["server-apply T0 out1: not enabled"]


def test_no_release_has_pr_1843(install: Path) -> None:
    (record,) = [f for f in CASE.fixes if f.name == "pr-1843"]
    assert record.release == "" and record.status == "proposal"
    # the pinned release lacks the proposal's filter of orphaned outputs
    dist = install / "node_modules" / "@livekit" / "agents" / "dist"
    assert dist.is_dir()
    assert not any(
        "filterFunctionCallOutputsForRealtimeSession" in path.read_text()
        for path in dist.rglob("*.js")
    )


def test_the_first_event_after_a_reconnect_is_never_sent(before: cases_js.JsReplay) -> None:
    # not the report's mechanism: the dropped socket's sender still waits on the
    # session's queue and takes the next event (cases_js._Run.filler)
    assert before.unsent_fillers == 1
