"""The placeholder handler (`RemoteItemAdded`) as the model has it: off, the trim of
`trim-tool-output` holds under lock5; on, the explorer finds the interleaving the
real livekit releases take (`docs/livekit.md`, "A trim undone by the placeholder handler")."""

from __future__ import annotations

import attrs

from model import INTERNAL_MOVES, Config, Invariant
from model.move_table import MoveKind
from model.moves import Move, initial_state, step
from model.scenarios import SCENARIOS_BY_NAME
from model.shapes import SHAPES_BY_NAME, RemoteItemAdded
from model.variants import VARIANTS_BY_NAME
from proofs.engines.compact import unsupported
from proofs.engines.explore import explore

TRIM = SCENARIOS_BY_NAME["trim-tool-output"]
OPENAI = SHAPES_BY_NAME["openai"]
HANDLER = attrs.evolve(OPENAI, remote_item_added=RemoteItemAdded.APPENDED_AFTER_LAST)


def _config(handler: bool) -> Config:
    shape = HANDLER if handler else OPENAI
    return Config(VARIANTS_BY_NAME["lock5"], TRIM, TRIM.environment, shape=shape)


def test_without_the_handler_the_trim_holds() -> None:
    assert explore(_config(False)).finding(Invariant.REMOVED_AT_REST).trace is None


def test_with_it_the_explorer_finds_the_real_trace() -> None:
    finding = explore(_config(True)).finding(Invariant.REMOVED_AT_REST)
    assert finding.trace is not None
    labels = [m.label() for m in finding.trace.moves if m.kind not in INTERNAL_MOVES]
    assert labels == ["call T0", "call T1", "server-apply T0 out1", "client-apply T0 out1"]
    assert finding.violation is not None and finding.violation.item == "out1"


def test_the_placeholder_reaches_the_waiting_replacement() -> None:
    """T1's copy is the live local object: the appended output is in what it diffs,
    so it sends no delete, as the real `update_chat_ctx` pushes that object."""
    config = _config(True)
    state = initial_state(config)
    for move in (
        Move(MoveKind.CALL, 0),
        Move(MoveKind.CALL, 1),
        Move(MoveKind.SERVER_APPLY, 0, "out1"),
    ):
        state = step(state, config, move)
    assert "out1" not in state.local and state.tasks[1].bound_to_local
    state = step(state, config, Move(MoveKind.CLIENT_APPLY, 0, "out1"))
    assert state.local[-1] == "out1"


def test_the_compact_encoding_refuses_it() -> None:
    assert unsupported(_config(False)) is None
    assert unsupported(_config(True)) is not None


def test_the_handler_alone_hides_a_real_loss() -> None:
    """Why the livekit release records do not have the field yet: without livekit's
    local-only config-update item at the end of the start's local context, the
    handler appends the model's own function call where the real one never does,
    so the replacement keeps it and the real loss of `server-item-during-replacement`
    (invariant 1 under lock5) disappears from the model."""
    scenario = SCENARIOS_BY_NAME["server-item-during-replacement"]
    lock5 = VARIANTS_BY_NAME["lock5"]
    plain = Config(lock5, scenario, scenario.environment, shape=OPENAI)
    handler = Config(lock5, scenario, scenario.environment, shape=HANDLER)
    assert explore(plain).finding(Invariant.NO_UNINTENDED_DELETE).trace is not None
    assert explore(handler).finding(Invariant.NO_UNINTENDED_DELETE).trace is None
