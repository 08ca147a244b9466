"""The model's reconnect against the real OpenAI plugin of livekit-agents 1.8.9,
over the gated server (`proofs.adapters.livekit.reconnect`)."""

from __future__ import annotations

import logging
from collections import deque
from typing import Any

import attrs
import pytest

from model import (
    SCENARIOS_BY_NAME,
    SHAPES_BY_NAME,
    VARIANTS_BY_NAME,
    Config,
    DropWindow,
    Environment,
    Invariant,
    Move,
    MoveKind,
    Pc,
    check,
    initial_state,
    step,
    successors,
)
from model.shapes import OpenMessages
from proofs.engines.conformance.steps import parse_move

RECONNECTS = Environment(reconnects=True)
#: Two drops, each brought back; under the released record a drop is two moves (the
#: socket's close opens the drop window, the session's notice of it ends it).
DROP_TWICE = [Move(MoveKind.DISCONNECT), Move(MoveKind.DISCONNECT), Move(MoveKind.CONNECT)] * 2
ONE_STEP_DROP_TWICE = [Move(MoveKind.DISCONNECT), Move(MoveKind.CONNECT)] * 2


@pytest.fixture(scope="module")
def reconnect(livekit_version: str) -> Any:
    if livekit_version != "1.8.9":
        pytest.skip("this module checks the installed 1.8.9")
    from proofs.adapters.livekit import reconnect

    return reconnect


def _config(scenario: str, shape: str = "openai-reconnect") -> Config:
    return Config(
        VARIANTS_BY_NAME["lock5"],
        SCENARIOS_BY_NAME[scenario],
        RECONNECTS,
        shape=SHAPES_BY_NAME[shape],
    )


def _model_item(config: Config, moves: list[Move], invariant: Invariant) -> str | None:
    state = initial_state(config)
    for move in moves:
        state = step(state, config, move)
    violation = check(state, config, invariant)
    return None if violation is None else violation.item


def test_a_second_drop_in_the_rebuild_window_loses_msg0_as_the_released_model_says(
    reconnect: Any,
) -> None:
    config = _config("overlapping-push")
    outcome = reconnect.run_reconnects(config, DROP_TWICE)
    assert outcome.connections == 3 and outcome.stuck is None
    assert outcome.lost == ("msg0",) and outcome.server == () and outcome.mirror == ()
    assert _model_item(config, DROP_TWICE, Invariant.AGREEMENT_AT_REST) == "msg0"
    # the one-step rebuild (the catalog's openai shape) predicts nothing lost here:
    # the real plugin shows that model wrong about this trace
    one_step = _config("overlapping-push", "openai")
    assert _model_item(one_step, ONE_STEP_DROP_TWICE, Invariant.AGREEMENT_AT_REST) is None


@pytest.mark.parametrize("scenario", ["spoken-during-tool-push", "replacement-first"])
def test_one_drop_costs_the_item_the_model_names(reconnect: Any, scenario: str) -> None:
    config = _config(scenario)
    moves = reconnect.shortest_with_drops(config, Invariant.NO_UNINTENDED_DELETE, 1)
    assert moves is not None and MoveKind.CONNECT in [m.kind for m in moves]
    item = _model_item(config, list(moves), Invariant.NO_UNINTENDED_DELETE)
    outcome = reconnect.run_reconnects(config, moves)
    assert outcome.stuck is None and item in outcome.unintended
    assert Invariant.NO_UNINTENDED_DELETE in outcome.broken


def test_the_python_rebuild_keeps_the_tool_s_function_call(reconnect: Any) -> None:
    """Case 5's Python side: the tool's function call (made by the scripted response
    at set-up) is re-created on the new connection, so no tool output is orphaned."""
    config = _config("overlapping-push")
    session = reconnect._Follow(config, reconnect.ReconnectAdapter)
    try:
        for move in DROP_TWICE[:3]:
            session.give(move)
        first, latest = session.adapter.connections()[0], session.adapter.connections()[-1]
        kinds = [item.get("type") for item in latest.conversation.items]
        assert "function_call" in [item.get("type") for item in first.conversation.items]
        assert "function_call" in kinds and latest is not first
    finally:
        session.close()


def _moves(labels: str) -> list[Move]:
    return [parse_move(label) for label in labels.split(";")]


def test_a_push_in_the_drop_window_is_lost_and_its_create_never_sent_again(
    reconnect: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The tool push runs after the socket closed and before the session cancels its old
    send task: send_str fails, the failure is only logged (openai.py :1170) and the event
    is not recorded (:1164-1165), so the replay leaves it out. The released record
    (`DropWindow.UNRECORDED`) predicts that; `lost`, which records the op, re-sends it."""
    moves = _moves("disconnect;call T0;disconnect;connect")
    config = _config("overlapping-push")
    state = initial_state(config)
    for move in moves:
        state = step(state, config, move)
    assert not state.to_server and state.tasks[0].pending
    with caplog.at_level(logging.ERROR):
        outcome = reconnect.run_reconnects(config, moves)
    assert outcome.stuck is None and outcome.connections == 2
    assert "failed to send event" in caplog.text
    # the create reached no server: the local context holds out1, both servers lack it
    assert outcome.local == ("msg0", "out1") and outcome.server == state.server == ("msg0",)
    recorded = attrs.evolve(config.shape, drop_window=DropWindow.LOST)
    resent = attrs.evolve(config, shape=recorded)
    state = initial_state(resent)
    for move in moves:
        state = step(state, resent, move)
    assert [op.item for op in state.to_server] == ["out1"]


# -- a push inside the drop window whose call interrupts a generation ---------------------

#: The window rows of `benchmarks/reconnect_agreement.py` whose first call interrupts
#: a generation: its cancel goes into the dead socket and the reconnect ends it.
INTERRUPTING = ("cleanup-during-tool-push", "cleanup-during-spoken", "trim-tool-output")


@attrs.frozen
class _WindowRun:
    config: Config
    #: Content of every message in the real mirror just before `connect`, by item id.
    contents: dict[str, list[Any]]
    #: The `previous_item_id` of every create the new connection received, by item id.
    anchors: dict[str, str | None]
    outcome: Any


def _window_run(reconnect: Any, name: str) -> _WindowRun:
    config = reconnect.released_reconnect("lock5", SCENARIOS_BY_NAME[name], RECONNECTS)
    moves = reconnect.window_moves(config)
    session = reconnect._Follow(config, reconnect.ReconnectAdapter)
    try:
        for move in moves[:-1]:
            session.give(move)
        mirror = session.adapter.rt._remote_chat_ctx.to_chat_ctx().items
        contents = {item.id: list(item.content) for item in mirror if item.type == "message"}
        session.give(moves[-1])
        latest = session.adapter.connections()[-1]
        received: list[dict[str, Any]] = []
        latest.to_server = _Recording(latest.to_server, received)
        session.drain(session.adapter.in_flight)
        outcome = reconnect._outcome(session, None)
    finally:
        session.close()
    names = session.adapter.names
    anchors = {
        names.get(event["item"]["id"], event["item"]["id"]): event.get("previous_item_id")
        for event in received
        if event.get("type") == "conversation.item.create"
    }
    return _WindowRun(config, contents, anchors, outcome)


class _Recording(deque):  # type: ignore[type-arg]
    """The connection's FIFO of client events, keeping a copy of each one taken off."""

    def __init__(self, queued: deque, log: list[dict[str, Any]]) -> None:  # type: ignore[type-arg]
        super().__init__(queued)
        self._log = log
        self._log.extend(queued)

    def append(self, event: Any) -> None:
        self._log.append(event)
        super().append(event)


@pytest.fixture(scope="module")
def window_runs(reconnect: Any) -> dict[str, _WindowRun]:
    return {name: _window_run(reconnect, name) for name in INTERRUPTING}


def _model_server(reconnect: Any, config: Config) -> tuple[str, ...]:
    state = initial_state(config)
    for move in reconnect.window_moves(config):
        state = step(state, config, move)
    return tuple(reconnect.settled(state, config).server)


@pytest.mark.parametrize("scenario", INTERRUPTING)
def test_a_call_interrupting_in_the_drop_window_ends_as_the_model_says(
    reconnect: Any, window_runs: dict[str, _WindowRun], scenario: str
) -> None:
    run = window_runs[scenario]
    assert run.outcome.stuck is None and run.outcome.connections == 2
    assert run.outcome.server == _model_server(reconnect, run.config)


@pytest.mark.parametrize("scenario", ["cleanup-during-tool-push", "cleanup-during-spoken"])
def test_the_rebuild_leaves_out_the_message_of_the_generation_under_way(
    reconnect: Any, window_runs: dict[str, _WindowRun], scenario: str
) -> None:
    """The fact that decides the cleanup rows: the never-played `asst1` has no content
    in the mirror (only `response.done` fills it, and the cancel that would cause one
    died with the socket), so the rebuild (`exclude_empty_message`) sends no create for
    it. The model without that (`open_messages = rebuilt`) keeps asst1 on the server."""
    run = window_runs[scenario]
    assert run.contents["asst1"] == [] and run.contents["msg0"]
    assert "asst1" not in run.anchors and run.outcome.server == ("msg0",)
    rebuilt = attrs.evolve(run.config.shape, open_messages=OpenMessages.REBUILT)
    assert _model_server(reconnect, attrs.evolve(run.config, shape=rebuilt)) == ("msg0", "asst1")


def test_the_interrupted_tool_push_diffs_against_the_emptied_mirror(
    reconnect: Any, window_runs: dict[str, _WindowRun]
) -> None:
    """The fact that decides the trim row: the reconnect ends the generation, and its
    tool push runs at once, before any of the rebuild's added events reaches the
    mirror, so it creates `out1` at the head (`root`). Settling the model with
    deliveries alone (the benchmark before) never runs that push."""
    run = window_runs["trim-tool-output"]
    assert run.anchors["out1"] == "root" and run.outcome.server == ("out1", "msg0")
    state = initial_state(run.config)
    for move in reconnect.window_moves(run.config):
        state = step(state, run.config, move)
    deliveries = (MoveKind.SERVER_APPLY, MoveKind.CLIENT_APPLY)
    while moves := [
        after for move, after in successors(state, run.config) if move.kind in deliveries
    ]:
        state = moves[0]
    assert state.server == ("msg0",) and state.tasks[0].pc is Pc.ENDED


def test_a_trace_with_a_move_between_a_generation_s_end_and_its_push_is_not_driven(
    reconnect: Any,
) -> None:
    """The real interrupted tool push runs in the loop turn of the reconnect that ends
    its generation, before the harness can give anything else: `undriven` says so of a
    trace that calls the trim there (1.8.8's `unlocked` counterexamples of the trim)."""
    config = reconnect.released_reconnect(
        "lock5", SCENARIOS_BY_NAME["trim-tool-output"], RECONNECTS
    )
    moves = _moves("call T0;disconnect;disconnect;connect")
    session = reconnect._Follow(config, reconnect.ReconnectAdapter)
    try:
        for move in moves:
            session.give(move)
        real = session.adapter.observe().local
    finally:
        session.close()
    state = initial_state(config)
    for move in moves:
        state = step(state, config, move)
    assert real == ("msg0", "out1") and state.local == ("msg0",)
    assert state.tasks[0].pc is Pc.ENDED
    assert reconnect.undriven(config, [*moves, Move(MoveKind.CALL, 1)]) is not None
    assert reconnect.undriven(config, [*moves, Move(MoveKind.WAKE, 0)]) is None
