"""The local context's order against livekit 1.8.9: the model's traces, replayed.

The model places late entries by creation time (`model/local_order.py`). Its
traces of `tests/model/test_local_order.py`, replayed against the real
`AgentSession`/`AgentActivity` over the stand-in realtime model, under `lock5`
(a user turn, a tool output, the application's replacement); a `before-call`
step is the tool returning (`born`), and every other stimulus goes through
`Follow`, which keeps the model's state beside the real one:

* the moves of the append order's old depth-10 trace (the tool returning at its
  call): livekit puts the user message before the tool output, by creation
  time, as the mirror has them, and the replacement deletes nothing; so does
  the model now. With livekit's insert patched into an append (the mutant), the
  same replay deletes the message, so the replay tells the orders apart.
* the explorer's shortest loss, the tool output created before the user
  message (its generation called two tools; the first returned before the user
  turn, the second at the call: the adapter's own `born`): livekit puts the
  output before the message, the mirror has it after, and the replacement
  deletes the acknowledged message, at the step the model says, stepping with
  the model throughout.
* the 15-step trace (a tool output created while the user turn waits for the
  lock): real, as the model says.
* an interrupted generation's tool output, created when its tool returned
  (before the interruption): real, as the model says.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from attrs import frozen

from model import INTERNAL_MOVES, Config, Invariant, Move, initial_state, step
from model.environment import BASE
from model.invariants import check
from model.scenarios import Scenario
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


def _moves(labels: tuple[str, ...]) -> tuple[Move, ...]:
    return tuple(parse_move(label) for label in labels)


@frozen
class Run:
    """What the real code did under one interleaving."""

    #: Per step: (label, local context, mirror), as scenario ids.
    steps: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]
    #: The scenario items of the final local context, in the order of their created_at.
    by_created_at: tuple[str, ...]
    local: tuple[str, ...]
    server: tuple[str, ...]
    #: Every delete sent: (item, whether it was acknowledged then).
    deletes: tuple[tuple[str | None, bool], ...]
    violations: dict[Invariant, Any]
    divergence: str | None

    def at(self, label: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The local context and the mirror after the step `label`."""
        for name, local, mirror in self.steps:
            if name == label:
                return local, mirror
        raise KeyError(label)


def _replay(config: Config, labels: tuple[str, ...], build: Any = None) -> Run:
    from proofs.adapters.livekit.adapter import LivekitAdapter
    from proofs.adapters.livekit.replay import early_calls
    from proofs.engines.conformance.follow import Follow

    moves = _moves(labels)
    early = early_calls(moves)
    session = Follow(config, build or (lambda c: LivekitAdapter(c, early=early)))
    adapter = session.adapter
    steps = []
    try:
        for label in labels:
            move = parse_move(label)
            if move.kind not in INTERNAL_MOVES:
                # `before-call T` is the adapter's `born`: the tool returns then
                session.give(move)
            seen = adapter.observe()
            steps.append((label, seen.local, seen.mirror))
        server = adapter.server
        session.drain(lambda: (bool(server.to_server), bool(server.to_client)))
        seen = adapter.observe()
        named = [item for item in adapter.agent._chat_ctx.items if item.id in adapter.names]
        ordered = sorted(named, key=lambda item: item.created_at)
        return Run(
            steps=tuple(steps),
            by_created_at=tuple(adapter.names[item.id] for item in ordered),
            local=seen.local,
            server=seen.server,
            deletes=tuple((adapter.names.get(i), acked) for _, i, acked in server.deletes_sent),
            violations=dict(session.violations),
            divergence=session.divergence,
        )
    finally:
        session.close()


def _explorer_trace() -> tuple[str, ...]:
    finding = explore(Config(LOCK5, ARTEFACT, BASE)).finding(Invariant.NO_UNINTENDED_DELETE)
    assert finding.trace is not None and finding.trace.depth == 10
    return tuple(s.move.label() for s in finding.trace.steps)


def test_the_explorers_shortest_loss_is_the_early_output() -> None:
    assert _explorer_trace() == EARLY_TRACE


@pytest.fixture(scope="module")
def runs(livekit_version: str) -> Iterator[dict[str, Run]]:
    from livekit.agents import llm

    from proofs.adapters.livekit.adapter import LivekitAdapter

    artefact = Config(LOCK5, ARTEFACT, BASE)
    found = {
        "artefact": _replay(artefact, OLD_TRACE),
        "early": _replay(artefact, EARLY_TRACE),
        "real": _replay(Config(LOCK5, REAL, BASE), REAL_TRACE),
        # the interrupted generation runs on the activity's coroutine, so its
        # held speech does not hold back the user turn's
        "interrupted": _replay(
            Config(LOCK5, INTERRUPTED, BASE),
            INTERRUPTED_TRACE,
            lambda config: LivekitAdapter(config, direct=frozenset({1})),
        ),
    }
    # the mutant: livekit's insert by creation time turned into an append
    with pytest.MonkeyPatch.context() as patch:

        def at_the_tail(self: llm.ChatContext, *, created_at: float) -> int:
            return len(self.items)

        patch.setattr(llm.ChatContext, "find_insertion_index", at_the_tail)
        found["appending"] = _replay(artefact, OLD_TRACE)
    yield found


def _model_loses(scenario: Scenario, labels: tuple[str, ...], item: str) -> bool:
    """Whether the model deletes acknowledged `item` on these moves."""
    config = Config(LOCK5, scenario, BASE)
    state = initial_state(config)
    for move in _moves(labels):
        state = step(state, config, move)
    violation = check(state, config, Invariant.NO_UNINTENDED_DELETE)
    return violation is not None and violation.item == item


def test_the_append_orders_depth_10_trace_loses_nothing(runs: dict[str, Run]) -> None:
    run = runs["artefact"]
    assert not _model_loses(ARTEFACT, OLD_TRACE, "user-turn-0")
    # the user message enters by its creation time, before the tool output, when
    # its push returns (on its ack, in the same loop run)
    local, mirror = run.at("client-apply T0 user-turn-0")
    assert local == ("msg0", "asst1", "user-turn-0", "tool-outputs-1")
    assert mirror == ("msg0", "asst1", "user-turn-0")
    assert run.by_created_at == run.local
    assert run.deletes == () and run.violations == {}
    final = ("msg0", "asst1", "user-turn-0", "tool-outputs-1", "replacement-2")
    assert run.local == run.server == final
    # where the real code first leaves the model is the tool push's wait for the
    # current speech (docs/livekit.md), not the order
    assert run.divergence is not None and "T1.pc: model wait-activity-lock" in run.divergence
    # with livekit's insert made an append, the same replay loses the message
    appending = runs["appending"]
    assert ("user-turn-0", True) in appending.deletes
    assert appending.violations[Invariant.NO_UNINTENDED_DELETE].item == "user-turn-0"


def test_a_tool_output_created_before_the_user_message_is_a_real_loss(
    runs: dict[str, Run],
) -> None:
    run = runs["early"]
    local, mirror = run.at("call T1")
    assert local == ("msg0", "asst1", "tool-outputs-1", "user-turn-0")
    assert mirror == ("msg0", "asst1", "user-turn-0")
    assert ("user-turn-0", True) in run.deletes
    assert run.violations[Invariant.NO_UNINTENDED_DELETE].item == "user-turn-0"
    # the model loses it on the same moves, and the run steps with it throughout:
    # the generation's second tool (outside the scenario) returns at the call, and
    # its output's create and ack go through as soon as they head their FIFOs
    # (`LivekitAdapter._pass_background`; before, the push waited on that ack)
    assert _model_loses(ARTEFACT, EARLY_TRACE, "user-turn-0")
    assert run.divergence is None


def test_a_tool_output_created_while_the_user_turn_waits_is_a_real_loss(
    runs: dict[str, Run],
) -> None:
    run = runs["real"]
    # out2 was created before the user message, which reached the mirror first
    local, mirror = run.at("client-apply T2 out2")
    assert local == ("msg0", "out0", "out2", "hello")
    assert mirror == ("msg0", "out0", "hello", "out2")
    assert run.by_created_at.index("out2") < run.by_created_at.index("hello")
    # the replacement's diff deletes the acknowledged user message and creates it again
    assert ("hello", True) in run.deletes
    assert run.violations[Invariant.NO_UNINTENDED_DELETE].item == "hello"
    assert run.violations[Invariant.AGREEMENT_AT_REST].item == "hello"
    assert run.server == ("msg0", "out0", "out2", "hello")
    assert _model_loses(REAL, REAL_TRACE, "hello")


def test_an_interrupted_generations_tool_output_is_a_real_loss(runs: dict[str, Run]) -> None:
    run = runs["interrupted"]
    # the tool returned before the interruption, so its output is the older one
    assert run.by_created_at.index("out1") < run.by_created_at.index("hello")
    local, mirror = run.at("client-apply T1 out1")
    assert local == ("msg0", "asst1", "out1", "hello")
    assert mirror == ("msg0", "asst1", "hello", "out1")
    assert ("hello", True) in run.deletes
    assert run.violations[Invariant.NO_UNINTENDED_DELETE].item == "hello"
    assert _model_loses(INTERRUPTED, INTERRUPTED_TRACE, "hello")
    assert run.divergence is None
