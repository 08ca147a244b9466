"""Every stimulus kind has a handler in each dispatch of the harness, and one without fails.

The dispatches are module-level mappings keyed by `MoveKind`: how a stimulus
reaches an adapter (`STIMULUS_HANDLERS`), which channel it occupies in a burst
(`BURST_KEYS`, read off `model.MOVES`), and how the Hypothesis machine splits
its rules (`RULE_TARGETS`, read off `model.MOVES` too).
"""

from __future__ import annotations

import pytest

from model import SCENARIOS_BY_NAME, STIMULI, VARIANTS_BY_NAME, Move, MoveKind
from proofs.adapters.impl import impl_adapter
from proofs.engines.conformance import lockstep, machine
from proofs.engines.conformance.lockstep import (
    BURST_KEYS,
    STIMULUS_HANDLERS,
    Lockstep,
    burst_compatible,
    stimulate,
)
from proofs.engines.conformance.machine import RULE_TARGETS, conformance_machine
from proofs.errors import InternalError, NotEnabled
from tests.conformance.conftest import own

CONFIG = own(VARIANTS_BY_NAME["lock5"], SCENARIOS_BY_NAME["overlapping-push"])


def test_the_harness_gives_the_models_stimuli() -> None:
    assert lockstep.STIMULI == STIMULI


@pytest.mark.parametrize("table", [STIMULUS_HANDLERS, BURST_KEYS, RULE_TARGETS])
def test_every_stimulus_kind_has_a_handler(table: dict[MoveKind, object]) -> None:
    assert set(table) >= STIMULI


def test_a_stimulus_without_a_handler_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(STIMULUS_HANDLERS, MoveKind.CALL)
    run = Lockstep(CONFIG, impl_adapter)
    try:
        with pytest.raises(InternalError, match="no handler for the stimulus 'call'"):
            stimulate(run.adapter, Move(MoveKind.CALL, 0))
    finally:
        run.close()


def test_an_internal_move_is_refused_not_dropped() -> None:
    run = Lockstep(CONFIG, impl_adapter)
    try:
        with pytest.raises(NotEnabled, match="internal"):
            stimulate(run.adapter, Move(MoveKind.RESUME, 0))
    finally:
        run.close()


def test_a_burst_of_a_kind_without_a_channel_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(BURST_KEYS, MoveKind.LEARN)
    with pytest.raises(InternalError, match="no burst channel for the move kind 'learn'"):
        burst_compatible([Move(MoveKind.LEARN, item="i1")])


def test_a_machine_for_a_kind_without_a_rule_split_raises(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(machine.RULE_TARGETS, MoveKind.TIMEOUT)
    with pytest.raises(InternalError, match="no rule split for the stimulus 'timeout'"):
        conformance_machine(CONFIG, impl_adapter)


def _m(kind: MoveKind, task: int | None = None, item: str | None = None) -> Move:
    return Move(kind, task, item)


@pytest.mark.parametrize(
    ("moves", "together"),
    [
        # one head per FIFO: the server takes one op, the client one event
        ([_m(MoveKind.SERVER_APPLY, 0, "a"), _m(MoveKind.SERVER_REJECT, 1, "b")], False),
        ([_m(MoveKind.CLIENT_APPLY, 0, "a"), _m(MoveKind.CLIENT_APPLY, 1, "b")], False),
        # the model's next item is one append to the client's FIFO, beside its head
        ([_m(MoveKind.CLIENT_APPLY, 0, "a"), _m(MoveKind.MODEL_CREATES, item="i1")], True),
        ([_m(MoveKind.MODEL_CREATES, item="i1"), _m(MoveKind.MODEL_CREATES, item="i2")], False),
        # a task makes one move at a time; two tasks may move together
        ([_m(MoveKind.CALL, 0), _m(MoveKind.TIMEOUT, 0)], False),
        ([_m(MoveKind.COPY, 0), _m(MoveKind.CALL, 0)], False),
        ([_m(MoveKind.CALL, 0), _m(MoveKind.CALL, 1)], True),
        ([_m(MoveKind.CALL, 0), _m(MoveKind.SERVER_APPLY, 0, "a")], True),
        # the local context learns each item once
        ([_m(MoveKind.LEARN, item="i1"), _m(MoveKind.LEARN, item="i2")], True),
        ([_m(MoveKind.LEARN, item="i1"), _m(MoveKind.LEARN, item="i1")], False),
        # a drop empties both FIFOs: no move taking a FIFO head beside it; a call may be
        ([_m(MoveKind.DISCONNECT), _m(MoveKind.SERVER_APPLY, 0, "a")], False),
        ([_m(MoveKind.CLIENT_APPLY, 0, "a"), _m(MoveKind.CONNECT)], False),
        ([_m(MoveKind.CALL, 1), _m(MoveKind.DISCONNECT)], True),
    ],
)
def test_burst_channels_read_off_the_move_table(moves: list[Move], together: bool) -> None:
    assert burst_compatible(moves) is together


def test_the_machine_splits_rules_by_what_a_move_names() -> None:
    assert {kind for kind, split in RULE_TARGETS.items() if split == "task"} == {
        MoveKind.COPY,
        MoveKind.BEFORE_CALL,
        MoveKind.CALL,
        MoveKind.TIMEOUT,
    }
    assert {kind for kind, split in RULE_TARGETS.items() if split == "item"} == {MoveKind.LEARN}
    rules = {name for name in vars(conformance_machine(CONFIG, impl_adapter)) if "_T" in name}
    assert "call_T0" in rules and "call_T1" in rules
