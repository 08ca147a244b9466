"""The placeholder handler (`RemoteItemAdded`) as the model has it: off, the trim of
`trim-tool-output` holds under lock5; on, the explorer finds the interleaving the
real livekit releases take (`docs/livekit.md`, "A trim undone by the placeholder
handler"). With livekit's two facts (`LocalTail.LOCAL_ONLY`, the config-update
item; `Site.after_hidden_call`, a tool output's function call) it still finds the
trim and no longer hides the loss of a model-created function call."""

from __future__ import annotations

import attrs

from model import INTERNAL_MOVES, Config, Environment, Invariant
from model.move_table import MoveKind
from model.moves import Move, initial_state, step
from model.scenarios import SCENARIOS_BY_NAME, Call, Scenario
from model.shapes import SHAPES_BY_NAME, LocalTail, RemoteItemAdded
from model.sites import with_hidden_calls
from model.variants import VARIANTS_BY_NAME
from proofs.engines.compact import unsupported
from proofs.engines.explore import explore

TRIM = SCENARIOS_BY_NAME["trim-tool-output"]
OPENAI = SHAPES_BY_NAME["openai"]
HANDLER = attrs.evolve(OPENAI, remote_item_added=RemoteItemAdded.APPENDED_AFTER_LAST)
#: The handler as livekit's activity has it: a config-update item after the start's items.
LIVEKIT = attrs.evolve(HANDLER, local_tail=LocalTail.LOCAL_ONLY)
LOCK5 = VARIANTS_BY_NAME["lock5"]


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
    """Why the livekit release records also need `local_tail`: without livekit's
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


def _livekit(scenario: Scenario, hidden_calls: bool = True) -> Config:
    sites = with_hidden_calls() if hidden_calls else ()
    return Config(LOCK5, scenario, scenario.environment, extra_sites=sites, shape=LIVEKIT)


def test_with_the_config_update_item_the_loss_is_back() -> None:
    """The call is anchored on `msg0`, a start item: behind it is the config-update
    item, the real last one, so no placeholder, and the replacement deletes it."""
    scenario = SCENARIOS_BY_NAME["server-item-during-replacement"]
    finding = explore(_livekit(scenario)).finding(Invariant.NO_UNINTENDED_DELETE)
    assert finding.trace is not None and finding.violation is not None
    assert finding.violation.item == "call1"


def test_a_tool_output_is_anchored_on_its_hidden_call() -> None:
    """With the config-update item alone the trim would hold (its model anchor `msg0`
    is a start item); the function call before the output is its real anchor, the
    last item of the replacement's copy, so the handler fires as in the releases."""
    without = explore(_livekit(TRIM, hidden_calls=False)).finding(Invariant.REMOVED_AT_REST)
    assert without.trace is None
    finding = explore(_livekit(TRIM)).finding(Invariant.REMOVED_AT_REST)
    assert finding.trace is not None
    labels = [m.label() for m in finding.trace.moves if m.kind not in INTERNAL_MOVES]
    assert labels == ["call T0", "call T1", "server-apply T0 out1", "client-apply T0 out1"]


def test_an_item_anchored_on_a_later_last_item_gets_its_placeholder() -> None:
    """A model-created item anchored on an item added after the start (a tool output,
    the real last item then) is appended locally, config-update item or not."""
    scenario = Scenario(
        "call-after-output",
        "the model creates a function call after an acked tool output",
        (Call("tool-outputs", adds=("out1",)),),
        server_pool=("call1",),
        environment=Environment(server_items=True),
    )
    config = _livekit(scenario)
    state = initial_state(config)
    for move in (
        Move(MoveKind.CALL, 0),
        Move(MoveKind.SERVER_APPLY, 0, "out1"),
        Move(MoveKind.CLIENT_APPLY, 0, "out1"),
        Move(MoveKind.MODEL_CREATES, None, "call1"),
        Move(MoveKind.CLIENT_APPLY, None, "call1"),
    ):
        state = step(state, config, move)
    assert state.local == ("msg0", "out1", "call1")
