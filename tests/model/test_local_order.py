"""The local context's order: the model places an item as livekit's `ChatContext` does.

livekit-agents 1.8.9 puts an item into the local context after the last item
created no later than it (`docs/model.md`, "The local context's order"). The
user turn's message is created when its push takes its snapshot and enters
the local context when the push returns; a tool output is created when its
tool returns (`before-call`, a step of its own) and enters at its call. The
state keeps the creation order of what a late entry can still pass
(`State.born`), and `model.local_order` places late entries by it.

Under `lock5`, a user turn, a tool output and a replacement:

* the explorer's shortest loss is 10 steps, with the tool output created
  before the user message (`before-call T1` first): the older output enters
  after the message and goes before it, while the mirror has it after;
* the moves of the old depth-10 trace (the tool returning at its call, after
  the user message was created) lose nothing now: that loss was an artefact
  of the append order, and with the order table emptied (every site appends)
  the same moves lose the message again;
* at the model's step grain with one call more (15 steps): a tool output
  created while the user turn waits for the lock;
* an interrupted generation's tool output, created before the interruption.

`tests/livekit/test_local_order.py` replays these against livekit 1.8.9.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import model
import model.local_order
import model.sites
from model import Config, Invariant, State, initial_state, step
from model.environment import BASE
from model.invariants import check
from model.local_order import upsert
from model.scenarios import Scenario
from model.sites import (
    LOCAL_ORDER,
    SITES_BY_NAME,
    Creation,
    LocalOrder,
    LocalPosition,
    local_order,
)
from model.variants import VARIANTS_BY_NAME
from proofs.engines.conformance.steps import parse_move
from proofs.engines.explore import explore
from tests.model.local_order_cases import (
    ARTEFACT,
    EARLY_TRACE,
    INTERRUPTED,
    INTERRUPTED_TRACE,
    OLD_TRACE,
    REAL,
    REAL_TRACE,
)

LOCK5 = VARIANTS_BY_NAME["lock5"]


def run(scenario: Scenario, labels: tuple[str, ...]) -> tuple[Config, State]:
    """The model's state after `labels` under lock5 (ValueError if one is not enabled)."""
    config = Config(LOCK5, scenario, BASE)
    state = initial_state(config)
    for label in labels:
        state = step(state, config, parse_move(label))
    return config, state


def loses(scenario: Scenario, labels: tuple[str, ...], item: str) -> bool:
    config, state = run(scenario, labels)
    violation = check(state, config, Invariant.NO_UNINTENDED_DELETE)
    return violation is not None and violation.item == item


@pytest.fixture
def appending(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The append order: every site appends and creates its items at its call."""
    monkeypatch.setattr(model.sites, "LOCAL_ORDER", {})
    model.local_order._PLANS.clear()
    yield
    model.local_order._PLANS.clear()


# -- the helper and the table -------------------------------------------------------


def test_upsert_places_an_item_after_the_last_one_created_before_it() -> None:
    # hello was created before out1 and enters after it: it goes before out1
    assert upsert(("msg0", "out1"), ("hello",), born=("hello", "out1")) == (
        "msg0",
        "hello",
        "out1",
    )
    # created after out1: the tail, as an append
    assert upsert(("msg0", "out1"), ("hello",), born=("out1", "hello")) == (
        "msg0",
        "out1",
        "hello",
    )
    # items outside `born` are older than every item in it
    assert upsert(("msg0", "asst1"), ("hello",), born=("hello",)) == ("msg0", "asst1", "hello")
    # an add outside `born` is created now; with no `born` every add is appended
    assert upsert(("out1",), ("hello",), born=("out1",)) == ("out1", "hello")
    assert upsert(("msg0",), ("msg0", "hello")) == ("msg0", "hello")


def test_the_catalog_says_where_each_site_puts_its_items() -> None:
    user_turn = local_order(SITES_BY_NAME["user-turn"])
    assert user_turn == LocalOrder(LocalPosition.BY_CREATED_AT, Creation.AT_SNAPSHOT)
    assert local_order(SITES_BY_NAME["replacement"]) == LocalOrder()
    for name in ("tool-outputs", "interrupted-tool-outputs", "spoken-message"):
        order = local_order(SITES_BY_NAME[name])
        assert order == LocalOrder(LocalPosition.BY_CREATED_AT, Creation.BEFORE_CALL)
    assert set(LOCAL_ORDER) == set(SITES_BY_NAME)


# -- the state keeps only what a late entry can pass ---------------------------------


def test_the_creation_order_is_kept_only_while_an_item_waits_to_enter() -> None:
    config, state = run(ARTEFACT, ("before-call T1",))
    assert state.born == ("tool-outputs-1",)
    # the user turn's message is created with its snapshot and waits for its push
    state = step(state, config, parse_move("call T0"))
    assert state.born == ("tool-outputs-1", "user-turn-0")
    # the message enters as its push returns; the output still waits for its call
    for label in EARLY_TRACE[2:5]:
        state = step(state, config, parse_move(label))
    assert state.born == ("tool-outputs-1", "user-turn-0")
    assert state.local[-1] == "user-turn-0"
    # nothing waits once the call enters the output (before the message: older)
    state = step(state, config, parse_move("call T1"))
    assert state.born == ()
    assert state.local[-2:] == ("tool-outputs-1", "user-turn-0")
    # a call makes its items itself where no before-call step came first
    config, state = run(ARTEFACT, ("call T1",))
    assert state.born == () and state.local[-1] == "tool-outputs-1"


def test_before_call_is_one_step_per_call_and_only_before_it() -> None:
    config, state = run(ARTEFACT, ())
    enabled = [move.label() for move, _ in model.successors(state, config)]
    assert "before-call T1" in enabled and "before-call T0" not in enabled
    config, state = run(ARTEFACT, ("before-call T1",))
    assert "before-call T1" not in [move.label() for move, _ in model.successors(state, config)]
    config, state = run(ARTEFACT, ("call T1",))
    assert "before-call T1" not in [move.label() for move, _ in model.successors(state, config)]


# -- the three forms of the loss, found by the explorer --------------------------------


def _shortest(scenario: Scenario) -> tuple[tuple[str, ...], State]:
    finding = explore(Config(LOCK5, scenario, BASE), invariants=(Invariant.NO_UNINTENDED_DELETE,))
    trace = finding.finding(Invariant.NO_UNINTENDED_DELETE).trace
    assert trace is not None
    return tuple(s.move.label() for s in trace.steps), trace.last


def test_the_shortest_loss_has_the_tool_output_created_first() -> None:
    labels, last = _shortest(ARTEFACT)
    assert labels == EARLY_TRACE
    # the older output went before the user message; the mirror has it after
    assert last.local == ("msg0", "asst1", "tool-outputs-1", "user-turn-0", "replacement-2")
    assert last.mirror == ("msg0", "asst1", "user-turn-0", "tool-outputs-1")
    assert loses(ARTEFACT, EARLY_TRACE, "user-turn-0")


def test_the_append_orders_depth_10_loss_is_gone(appending: None) -> None:
    """With every site appending, the old trace loses the message; by creation time
    the same moves put it before the output, as the mirror has it, and lose nothing."""
    assert loses(ARTEFACT, OLD_TRACE, "user-turn-0")
    model.local_order._PLANS.clear()
    model.sites.LOCAL_ORDER.update(LOCAL_ORDER)
    assert not loses(ARTEFACT, OLD_TRACE, "user-turn-0")
    _, state = run(ARTEFACT, OLD_TRACE)
    assert state.local == ("msg0", "asst1", "user-turn-0", "tool-outputs-1", "replacement-2")


def test_the_append_order_misses_the_early_output(appending: None) -> None:
    """The explorer's loss needs the creation order: appending, the same moves lose
    nothing (and `before-call` is no move at all)."""
    assert not loses(ARTEFACT, tuple(label for label in EARLY_TRACE[1:]), "user-turn-0")


def test_a_tool_output_created_while_the_user_turn_waits_is_lost() -> None:
    _, state = run(REAL, REAL_TRACE)
    assert state.local == ("msg0", "out0", "out2", "hello")
    assert state.mirror == ("msg0", "out0", "hello", "out2")
    assert loses(REAL, REAL_TRACE, "hello")
    # and the explorer's shortest loss in that scenario is the early-output form
    labels, _ = _shortest(REAL)
    assert labels[0] == "before-call T0" and len(labels) == 10


def test_an_interrupted_generations_older_output_is_lost() -> None:
    _, state = run(INTERRUPTED, INTERRUPTED_TRACE)
    assert state.local == ("msg0", "asst1", "out1", "hello", "note2")
    assert loses(INTERRUPTED, INTERRUPTED_TRACE, "hello")
    # created at its call instead, the output is the younger one: nothing lost
    assert not loses(INTERRUPTED, INTERRUPTED_TRACE[1:], "hello")
    labels, _ = _shortest(INTERRUPTED)
    assert len(labels) == 10 and labels[0] == "before-call T1"
