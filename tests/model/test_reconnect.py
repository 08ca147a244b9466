"""The reconnect as data: what is re-sent, the mirror's empty window, the rebuild's
lock, the verdicts of livekit 1.8.9's released reconnect (`openai-reconnect`), and
the drop window (what a push does between the drop and the session giving the
connection up)."""

from __future__ import annotations

import attrs
import pytest

from model import (
    SCENARIOS_BY_NAME,
    SHAPES_BY_NAME,
    VARIANTS_BY_NAME,
    Config,
    Environment,
    Invariant,
    Move,
    MoveKind,
    Pc,
    SessionShape,
    State,
    Verdict,
    initial_state,
    step,
)
from model.shape_verdicts import SHAPE_FAILURES
from model.shapes import (
    DropWindow,
    InterruptionEnd,
    OpenMessages,
    ReconnectLock,
    ReconnectMirror,
    ReconnectResends,
    SessionLock,
    WindowRebuild,
)
from model.sites import with_speech_turn
from model.state import REBUILD, Dropped, EventKind
from proofs.engines.explore import explore

RECONNECTS = Environment(reconnects=True)
TIMEOUTS = Environment(reconnects=True, timeouts=True)
RELEASED = SHAPES_BY_NAME["openai-reconnect"]


def _config(variant: str, scenario: str, shape: SessionShape = RELEASED) -> Config:
    return Config(VARIANTS_BY_NAME[variant], SCENARIOS_BY_NAME[scenario], RECONNECTS, shape=shape)


def _run(config: Config, labels: str) -> State:
    state = initial_state(config)
    for label in labels.split(";"):
        kind, *rest = label.split()
        task = int(rest[0][1:]) if rest and rest[0].startswith("T") else None
        item = rest[-1] if rest and not rest[-1].startswith("T") else None
        state = step(state, config, Move(MoveKind(kind), task, item))
    return state


def test_the_released_rebuild_empties_the_mirror_and_refills_it_from_its_events() -> None:
    config = _config("lock5", "overlapping-push")
    state = _run(config, "call T0;disconnect;disconnect;connect")
    assert state.mirror == () and state.server == ("msg0",)
    assert [(e.kind, e.item, e.task) for e in state.to_client] == [
        (EventKind.ADDED, "msg0", REBUILD)
    ]
    # the tool push's create, never answered, goes again behind the replay
    assert [(op.item, op.task) for op in state.to_server] == [("out1", 0)]
    state = _run(config, "call T0;disconnect;disconnect;connect;client-apply msg0")
    assert state.mirror == ("msg0",)


def test_only_the_current_push_is_re_sent_where_the_session_keeps_one_record() -> None:
    """With no session lock two pushes wait at once; the release's record holds only
    the later one's ops, the other value every push's."""
    unlockedish = attrs.evolve(RELEASED, session_lock=SessionLock.NONE)
    labels = "call T0;call T1;disconnect;disconnect;connect"
    current = _run(_config("unlocked", "overlapping-push", unlockedish), labels)
    assert [op.item for op in current.to_server] == ["hello"]
    every = attrs.evolve(unlockedish, reconnect_resends=ReconnectResends.AWAITED)
    assert [
        op.item for op in _run(_config("unlocked", "overlapping-push", every), labels).to_server
    ] == [
        "out1",
        "hello",
    ]
    failing = attrs.evolve(unlockedish, reconnect_resends=ReconnectResends.NONE)
    state = _run(_config("unlocked", "overlapping-push", failing), labels)
    assert not state.to_server and {t.pc for t in state.tasks} == {Pc.FAILED}


def test_a_second_drop_inside_the_rebuild_window_loses_the_conversation() -> None:
    found = explore(_config("lock5", "overlapping-push"), (Invariant.AGREEMENT_AT_REST,))
    (finding,) = found.findings
    assert finding.trace is not None and finding.violation is not None
    # each drop is two moves: the socket's close opens the drop window, the cancel of
    # the old send task ends it
    assert [m.kind for m in finding.trace.moves] == [
        MoveKind.DISCONNECT,
        MoveKind.DISCONNECT,
        MoveKind.CONNECT,
    ] * 2
    assert finding.violation.item == "msg0"
    # the one-step rebuild cannot show it: it keeps the mirror across the reconnect
    one_step = explore(_config("lock5", "overlapping-push", SHAPES_BY_NAME["openai"]))
    assert one_step.finding(Invariant.AGREEMENT_AT_REST).verdict is Verdict.HOLDS


def test_a_rebuild_that_holds_the_session_lock_opens_the_window_to_every_snapshot() -> None:
    """Under lock5 a tool push snapshots and diffs in one step, so the released rebuild
    (no lock) costs it nothing; a rebuild holding the session lock makes it wait
    between the two, and its diff deletes the rebuilt msg0."""
    config = _config("lock5", "spoken-during-tool-push")
    locked = attrs.evolve(
        config, shape=attrs.evolve(RELEASED, reconnect_lock=ReconnectLock.SESSION_LOCK)
    )
    state = _run(locked, "disconnect;disconnect;connect;call T0")
    assert state.provider_lock.owner == REBUILD and state.tasks[0].pc is Pc.WAIT_PROVIDER
    state = step(state, locked, Move(MoveKind.CLIENT_APPLY, None, "msg0"))
    assert state.provider_lock.owner == 0
    after = step(state, locked, Move(MoveKind.WAKE, 0))
    assert (0, "msg0", True) in after.deletes_sent
    released = _run(config, "disconnect;disconnect;connect;call T0;client-apply msg0")
    assert not released.deletes_sent


@pytest.mark.parametrize(
    "scenario", ["overlapping-push", "stale-replacement", "server-item-during-replacement"]
)
def test_the_released_reconnect_verdicts_are_the_catalogs(scenario: str) -> None:
    """The openai shape's records, and those `model.shape_verdicts` adds for
    `openai-reconnect`, are what the explorer finds under `reconnects`."""
    for name in ("unlocked", "lock5"):
        variant = VARIANTS_BY_NAME[name]
        for finding in explore(_config(name, scenario)).findings:
            expected = (
                Verdict.COUNTEREXAMPLE
                if Verdict.COUNTEREXAMPLE
                in (
                    variant.expected(scenario, RECONNECTS, finding.invariant, "openai"),
                    variant.expected(scenario, RECONNECTS, finding.invariant, RELEASED.name),
                )
                else Verdict.HOLDS
            )
            assert finding.verdict is expected, (name, finding.invariant)


def _catalog_says(name: str, scenario: str, invariant: Invariant) -> Verdict:
    variant = VARIANTS_BY_NAME[name]
    shapes = ("openai", RELEASED.name)
    failing = [variant.expected(scenario, RECONNECTS, invariant, shape) for shape in shapes]
    return Verdict.COUNTEREXAMPLE if Verdict.COUNTEREXAMPLE in failing else Verdict.HOLDS


@pytest.mark.parametrize("name", ["unlocked", "lock3", "lock5", "lock5-hoisted"])
def test_every_released_reconnect_verdict_of_the_trim_is_the_catalogs(name: str) -> None:
    """The cheapest later scenario, whole: every invariant, every locking variant."""
    for finding in explore(_config(name, "trim-tool-output")).findings:
        expected = _catalog_says(name, "trim-tool-output", finding.invariant)
        assert finding.verdict is expected, finding.invariant


def test_each_later_released_reconnect_failure_is_found() -> None:
    """Every entry `model.shape_verdicts` gives `openai-reconnect` for the two later
    scenarios and invariant 5 (the whole catalog, checked once: 52 s, docs/model.md)
    is a counterexample the explorer finds."""
    later = ("cleanup-during-spoken", "trim-tool-output")
    entries = [
        (name, scenario, invariant)
        for name, scenario, invariant, _, shape, _, _ in SHAPE_FAILURES
        if shape == RELEASED.name and (scenario in later or invariant == "removed-at-rest")
    ]
    assert len(entries) == 16
    for name, scenario, invariant in entries:
        found = explore(_config(name, scenario), (Invariant(invariant),)).findings[0]
        assert found.verdict is Verdict.COUNTEREXAMPLE, (name, scenario, invariant)


def test_the_defaults_are_the_one_step_rebuild() -> None:
    shape = SHAPES_BY_NAME["gemini"]
    assert shape.reconnect_mirror is ReconnectMirror.AT_ONCE
    assert shape.reconnect_resends is ReconnectResends.AWAITED
    assert RELEASED.reconnect_mirror is ReconnectMirror.EMPTIED
    assert attrs.evolve(RELEASED, name="openai", summary="", source="") != SHAPES_BY_NAME["openai"]


# -- the drop window (`SessionShape.drop_window`) ---------------------------------------

GEMINI = SHAPES_BY_NAME["gemini"]


def _window(value: DropWindow, labels: str) -> State:
    shape = attrs.evolve(GEMINI, drop_window=value)
    return _run(_config("lock5", "overlapping-push", shape), labels)


def test_a_push_in_the_drop_window_does_what_the_shape_says() -> None:
    """After the drop the session still treats its connection as active: the tool push
    diffs and (queued, lost) sets its known state; only the second disconnect makes it
    keep requests back."""
    queued = _window(DropWindow.QUEUED, "disconnect;call T0")
    assert queued.connected is Dropped.UNNOTICED and queued.kept is None
    assert queued.mirror == ("msg0", "out1") and [op.item for op in queued.to_server] == ["out1"]
    lost = _window(DropWindow.LOST, "disconnect;call T0")
    assert lost.mirror == ("msg0", "out1") and not lost.to_server and "out1" in lost.sent
    refused = _window(DropWindow.REFUSED, "disconnect;call T0")
    assert refused.mirror == ("msg0",) and not refused.to_server
    assert refused.tasks[0].pc is Pc.FAILED and "out1" not in refused.sent
    noticed = _window(DropWindow.QUEUED, "disconnect;disconnect;call T0")
    assert noticed.connected is False and noticed.kept == ("msg0", "out1")
    none = _window(DropWindow.NONE, "disconnect;call T0")
    assert none.connected is False and none.kept == ("msg0", "out1")


def test_the_queued_append_goes_after_a_rebuild_that_holds_its_item() -> None:
    state = _window(DropWindow.QUEUED, "disconnect;call T0;disconnect;connect")
    assert state.server == ("msg0", "out1") and [op.item for op in state.to_server] == ["out1"]
    config = _config("lock5", "overlapping-push", GEMINI)
    found = explore(config, (Invariant.NOTHING_TWICE,)).findings[0]
    assert found.verdict is Verdict.COUNTEREXAMPLE and found.violation is not None
    assert found.violation.item == "out1"


def test_a_rebuild_that_leaves_out_the_queued_items_sends_each_once() -> None:
    """The other `WindowRebuild` value: a session that knows which ids it queued and has
    not sent (Gemini's `_unsent_item_ids` is such a set) rebuilds without them."""
    fixed = attrs.evolve(GEMINI, window_rebuild=WindowRebuild.UNQUEUED_THEN_QUEUE)
    config = _config("lock5", "overlapping-push", fixed)
    state = _run(config, "disconnect;call T0;disconnect;connect")
    assert state.server == ("msg0",) and [op.item for op in state.to_server] == ["out1"]
    found = explore(config, (Invariant.NOTHING_TWICE,)).findings[0]
    assert found.verdict is Verdict.HOLDS


def test_the_drop_windows_are_gemini_s_and_the_released_openai_reconnect_s() -> None:
    """The duplex and three-way sessions have no reconnect; the catalog's one-step openai
    record leaves the window out, the released reconnect's record has it (docs/model.md,
    "The drop window")."""
    windows = {s.name: s.drop_window for s in SHAPES_BY_NAME.values()}
    assert {name for name, w in windows.items() if w is not DropWindow.NONE} == {
        "gemini",
        "openai-reconnect",
    }
    assert windows["openai-reconnect"] is DropWindow.UNRECORDED


def test_a_push_in_the_released_window_is_lost_and_not_sent_again() -> None:
    """The tool push's create goes into the closed socket and is not recorded: the
    reconnect sends only the rebuild, and the push waits until it times out. The
    `lost` value records it and sends it again."""
    labels = "disconnect;call T0;disconnect;connect"
    state = _run(_config("lock5", "overlapping-push"), labels)
    assert "out1" in state.sent and not state.to_server and state.server == ("msg0",)
    assert state.tasks[0].pc is Pc.WAIT_ACKS and state.tasks[0].pending
    timeouts = attrs.evolve(_config("lock5", "overlapping-push"), environment=TIMEOUTS)
    timed_out = step(_run(timeouts, labels), timeouts, Move(MoveKind.TIMEOUT, 0))
    assert timed_out.tasks[0].pc is Pc.FAILED
    recorded = attrs.evolve(RELEASED, drop_window=DropWindow.LOST)
    resent = _run(_config("lock5", "overlapping-push", recorded), labels)
    assert [(op.item, op.task) for op in resent.to_server] == [("out1", 0)]


# -- the messages of a generation not yet ended (`SessionShape.open_messages`) -------------

#: The released reconnect with the release's interruption: the cleanup's call sends a
#: cancel and its push waits for the `response.done` that answers it.
INTERRUPTING = attrs.evolve(RELEASED, interruption_end=InterruptionEnd.ON_DONE_EVENT)


def _interrupting(shape: SessionShape = INTERRUPTING) -> Config:
    return attrs.evolve(
        _config("lock5", "cleanup-during-tool-push", shape), extra_sites=with_speech_turn()
    )


def test_a_reconnect_before_the_done_event_leaves_the_generation_s_message_out() -> None:
    """The never-played `asst1` is empty in the mirror until `response.done` (livekit
    1.8.9 openai.py :2309-2313), and the rebuild copies the mirror without empty
    messages (:1006): neither the new server nor the new mirror gets it."""
    config = _interrupting()
    for labels in (
        "disconnect;call T0;disconnect;connect",
        "call T0;disconnect;disconnect;connect",
    ):
        state = _run(config, labels)
        assert state.server == ("msg0",), labels
        assert [e.item for e in state.to_client] == ["msg0"] and state.tasks[0].pc is Pc.ENDED
    rebuilt = _interrupting(attrs.evolve(INTERRUPTING, open_messages=OpenMessages.REBUILT))
    state = _run(rebuilt, "disconnect;call T0;disconnect;connect")
    assert state.server == ("msg0", "asst1")


def test_a_reconnect_after_the_done_event_rebuilds_the_message() -> None:
    """Once the done event has reached the session its message has content: rebuilt."""
    labels = "call T0;server-apply T0 response;client-apply T0 response;disconnect;disconnect"
    state = _run(_interrupting(), labels + ";connect")
    assert state.tasks[0].pc is Pc.ENDED and state.server == ("msg0", "asst1")


def test_the_field_is_inert_where_a_generation_ends_at_once() -> None:
    """The catalog's records end an interrupted generation in the call's step, so no
    connect finds one under way: the field moves none of their runs."""
    assert RELEASED.open_messages is OpenMessages.LEFT_OUT
    assert SHAPES_BY_NAME["openai"].open_messages is OpenMessages.REBUILT
    config = _config("lock5", "cleanup-during-tool-push")
    state = _run(config, "disconnect;call T0;disconnect;connect")
    assert state.tasks[0].pc is not Pc.WAIT_DONE and "asst1" in state.server
