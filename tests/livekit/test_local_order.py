"""The local context's order against livekit 1.8.9: which lock5 loss is real.

Two interleavings of `tests/model/test_local_order.py`, replayed against the
real `AgentSession`/`AgentActivity` over the stand-in realtime model:

* the explorer's depth-10 counterexample under the append order (a user turn;
  a tool output queued behind it; the application's replacement). The real
  code places the user message by its creation time, before the tool output,
  as the mirror has them, so the replacement deletes nothing: an artefact of
  the model's append order.
  With livekit's insert patched into an append (the mutant), the same replay
  deletes the message, so the test tells the two orders apart.
* the 15-step counterexample under the order by creation time (a tool output
  created while the user turn waits for the activity lock). The real code
  deletes the acknowledged user message and creates it again: real.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from attrs import evolve, frozen

from model import INTERNAL_MOVES, Config, Invariant, Move, MoveKind, initial_state, step
from model.environment import BASE
from model.invariants import check
from model.scenarios import Call, Scenario
from model.sites import SITES_BY_NAME, LocalPosition
from model.variants import VARIANTS_BY_NAME
from proofs.engines.explore import explore

LOCK5 = VARIANTS_BY_NAME["lock5"]
TAIL_USER_TURN = evolve(SITES_BY_NAME["user-turn"], local_position=LocalPosition.TAIL)

ARTEFACT = Scenario(
    name="user-turn + tool-outputs + replacement",
    summary="a user turn, a tool output queued behind it, then a replacement",
    calls=(
        Call("user-turn", adds=("user-turn-0",)),
        Call("tool-outputs", adds=("tool-outputs-1",)),
        Call("replacement", adds=("replacement-2",)),
    ),
    server=("msg0", "asst1"),
)
REAL = Scenario(
    name="tool-outputs + user-turn + tool-outputs + replacement",
    summary="a tool output created while the user turn waits for the activity lock",
    calls=(
        Call("tool-outputs", adds=("out0",)),
        Call("user-turn", adds=("hello",)),
        Call("tool-outputs", adds=("out2",)),
        Call("replacement"),
    ),
)
_C, _W, _R = MoveKind.CALL, MoveKind.WAKE, MoveKind.RESUME
_SA, _CA = MoveKind.SERVER_APPLY, MoveKind.CLIENT_APPLY
REAL_TRACE = (
    *(Move(_C, 0), Move(_C, 1), Move(_C, 2)),
    *(Move(_SA, 0, "out0"), Move(_CA, 0, "out0"), Move(_R, 0), Move(_W, 1)),
    *(Move(_SA, 1, "hello"), Move(_CA, 1, "hello"), Move(_R, 1), Move(_W, 2)),
    *(Move(_SA, 2, "out2"), Move(_CA, 2, "out2"), Move(_R, 2), Move(_C, 3)),
)


@frozen
class Run:
    """What the real code did under one interleaving."""

    #: Per stimulus: (label, local context, mirror), as scenario ids.
    steps: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]
    #: The scenario items of the final local context, in the order of their created_at.
    by_created_at: tuple[str, ...]
    local: tuple[str, ...]
    server: tuple[str, ...]
    #: Every delete sent: (item, whether it was acknowledged then).
    deletes: tuple[tuple[str | None, bool], ...]
    violations: dict[Invariant, Any]
    divergence: str | None


def _replay(config: Config, moves: tuple[Move, ...]) -> Run:
    from proofs.adapters.livekit.adapter import LivekitAdapter
    from proofs.engines.conformance.follow import Follow

    session = Follow(config, LivekitAdapter)
    adapter = session.adapter
    steps = []
    try:
        for move in moves:
            if move.kind in INTERNAL_MOVES:
                continue
            session.give(move)
            seen = adapter.observe()
            steps.append((move.label(), seen.local, seen.mirror))
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


def _artefact_trace() -> tuple[Move, ...]:
    config = Config(LOCK5, ARTEFACT, BASE, extra_sites=(TAIL_USER_TURN,))
    finding = explore(config).finding(Invariant.NO_UNINTENDED_DELETE)
    assert finding.trace is not None and finding.trace.depth == 10
    return tuple(s.move for s in finding.trace.steps)


@pytest.fixture(scope="module")
def runs(livekit_version: str) -> Iterator[dict[str, Run]]:
    from livekit.agents import llm

    found = {
        "artefact": _replay(Config(LOCK5, ARTEFACT, BASE), _artefact_trace()),
        "real": _replay(Config(LOCK5, REAL, BASE), REAL_TRACE),
    }
    # the mutant: livekit's insert by creation time turned into an append
    with pytest.MonkeyPatch.context() as patch:

        def at_the_tail(self: llm.ChatContext, *, created_at: float) -> int:
            return len(self.items)

        patch.setattr(llm.ChatContext, "find_insertion_index", at_the_tail)
        found["appending"] = _replay(Config(LOCK5, ARTEFACT, BASE), _artefact_trace())
    yield found


def _step(run: Run, label: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    for name, local, mirror in run.steps:
        if name == label:
            return local, mirror
    raise KeyError(label)


def test_the_depth_10_counterexample_is_not_real(runs: dict[str, Run]) -> None:
    run = runs["artefact"]
    # the append order's model: the replacement deletes the acknowledged user message
    config = Config(LOCK5, ARTEFACT, BASE, extra_sites=(TAIL_USER_TURN,))
    state = initial_state(config)
    for move in _artefact_trace():
        state = step(state, config, move)
    assert state.local == ("msg0", "asst1", "tool-outputs-1", "user-turn-0", "replacement-2")
    violation = check(state, config, Invariant.NO_UNINTENDED_DELETE)
    assert violation is not None and violation.item == "user-turn-0"
    # the real code: the user message enters by its creation time, before the
    # tool output, when its push returns (on its ack, in the same loop run)
    local, mirror = _step(run, "client-apply T0 user-turn-0")
    assert local == ("msg0", "asst1", "user-turn-0", "tool-outputs-1")
    assert mirror == ("msg0", "asst1", "user-turn-0")
    assert run.by_created_at == run.local
    assert run.deletes == () and run.violations == {}
    assert (
        run.local
        == run.server
        == (
            "msg0",
            "asst1",
            "user-turn-0",
            "tool-outputs-1",
            "replacement-2",
        )
    )
    # with livekit's insert made an append, the same replay loses the message
    appending = runs["appending"]
    assert ("user-turn-0", True) in appending.deletes
    assert appending.violations[Invariant.NO_UNINTENDED_DELETE].item == "user-turn-0"
    # where the real code first leaves the model is the tool push's wait for the
    # current speech (docs/livekit.md), not the order
    assert run.divergence is not None and "T1.pc: model wait-activity-lock" in run.divergence


def test_a_tool_output_created_while_the_user_turn_waits_is_a_real_loss(
    runs: dict[str, Run],
) -> None:
    run = runs["real"]
    # out2 was created before the user message, which reached the mirror first
    local, mirror = _step(run, "client-apply T2 out2")
    assert local == ("msg0", "out0", "out2", "hello")
    assert mirror == ("msg0", "out0", "hello", "out2")
    assert run.by_created_at.index("out2") < run.by_created_at.index("hello")
    # the replacement's diff deletes the acknowledged user message and creates it again
    assert ("hello", True) in run.deletes
    assert run.violations[Invariant.NO_UNINTENDED_DELETE].item == "hello"
    assert run.violations[Invariant.AGREEMENT_AT_REST].item == "hello"
    assert run.server == ("msg0", "out0", "out2", "hello")
    # the model predicts that loss on the same trace
    config = Config(LOCK5, REAL, BASE)
    state = initial_state(config)
    for move in REAL_TRACE:
        state = step(state, config, move)
    violation = check(state, config, Invariant.NO_UNINTENDED_DELETE)
    assert violation is not None and violation.item == "hello" and violation.task == 3
