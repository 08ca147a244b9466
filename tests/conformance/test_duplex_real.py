"""The failures the model predicts for livekit's duplex adapter, reproduced on the
real `_DuplexRealtimeSession` of livekit-agents 1.8.9.

The adapter's session is driven with the requests the model's trace computes, in
the trace's order, over a stand-in duplex session that records what it is asked
to append (the server conversation of an append-only protocol) and whose append
either never yields (`duplex`) or waits until the test lets it return
(`duplex-await`). The real mirror and the recorded server are then read back
into a model state, and the model's own invariant must name the same item as
the explorer's counterexample. These are the failures the catalog marks
"confirmed".
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import pytest

from model import (
    SCENARIOS_BY_NAME,
    SHAPES_BY_NAME,
    VARIANTS_BY_NAME,
    Config,
    Invariant,
    Verdict,
    check,
    parse_environment,
)
from proofs.engines.explore import explore

llm = pytest.importorskip("livekit.agents.llm")
duplex_adapter = pytest.importorskip("livekit.agents.llm.duplex_adapter")


class _StandInDuplex:
    """Only what `_DuplexRealtimeSession` touches in these runs: event hooks, an
    audio stream that stays silent, and `_append_items`."""

    def __init__(self, yields: bool) -> None:
        self.server: list[str] = []
        self.yields = yields
        self.gates: list[asyncio.Event] = []

    def on(self, *args: object, **kwargs: object) -> None:
        pass

    @property
    async def audio_stream(self) -> Any:  # never yields a frame
        await asyncio.Event().wait()
        yield

    async def _append_items(self, items: list[Any]) -> None:
        self.server.extend(item.id for item in items)
        if self.yields:
            gate = asyncio.Event()
            self.gates.append(gate)
            await gate.wait()


def _session(yields: bool, held: tuple[str, ...]) -> tuple[Any, _StandInDuplex]:
    duplex = _StandInDuplex(yields)
    session = object.__new__(duplex_adapter._DuplexRealtimeSession)
    duplex_adapter._DuplexRealtimeSession.__init__(
        session, adapter=None, duplex=duplex, gate=None, audio_timeout=1.0
    )
    session._chat_ctx = _ctx(held)
    duplex.server.extend(held)
    return session, duplex


def _ctx(ids: tuple[str, ...]) -> Any:
    return llm.ChatContext([llm.ChatMessage(id=i, role="user", content=[i]) for i in ids])


def _ids(ctx: Any) -> tuple[str, ...]:
    return tuple(item.id for item in ctx.items)


def _model_finding(variant: str, shape: str, scenario: str, env: str, invariant: Invariant) -> Any:
    config = Config(
        VARIANTS_BY_NAME[variant],
        SCENARIOS_BY_NAME[scenario],
        parse_environment(env),
        shape=SHAPES_BY_NAME[shape],
    )
    finding = explore(config, (invariant,)).findings[0]
    assert finding.verdict is Verdict.COUNTEREXAMPLE
    assert finding.trace is not None
    return config, finding


def _agrees(config: Config, finding: Any, mirror: tuple[str, ...], server: list[str]) -> None:
    """The real end state, read into the model's last state, breaks the same
    invariant on the same item."""
    last = finding.trace.last
    real = attrs.evolve(last, mirror=mirror, server=tuple(server))
    violation = check(real, config, finding.invariant)
    assert violation is not None
    assert violation.item == finding.violation.item


Run = Callable[[Any, _StandInDuplex], Awaitable[None]]


def _run(yields: bool, held: tuple[str, ...], body: Run) -> tuple[tuple[str, ...], list[str]]:
    async def main() -> tuple[tuple[str, ...], list[str]]:
        session, duplex = _session(yields, held)
        try:
            await body(session, duplex)
            return _ids(session._chat_ctx), duplex.server
        finally:
            session._segment_atask.cancel()

    return asyncio.run(main())


async def _let_go(duplex: _StandInDuplex, index: int) -> None:
    while len(duplex.gates) <= index:
        await asyncio.sleep(0)
    duplex.gates[index].set()
    await asyncio.sleep(0)


def test_a_cleanup_leaves_the_item_on_the_server_and_drops_it_from_the_mirror() -> None:
    config, finding = _model_finding(
        "lock5", "duplex", "cleanup-during-tool-push", "base", Invariant.MIRROR_TRUE_AT_REST
    )

    async def body(session: Any, duplex: _StandInDuplex) -> None:
        await session.update_chat_ctx(_ctx(("msg0",)))  # the cleanup drops asst1

    mirror, server = _run(False, ("msg0", "asst1"), body)
    assert (mirror, server) == (("msg0",), ["msg0", "asst1"])
    _agrees(config, finding, mirror, server)


def test_overlapping_pushes_with_an_awaiting_append_lose_the_first_from_the_mirror() -> None:
    config, finding = _model_finding(
        "unlocked", "duplex-await", "overlapping-push", "base", Invariant.MIRROR_TRUE_AT_REST
    )

    async def body(session: Any, duplex: _StandInDuplex) -> None:
        # both snapshot the mirror [msg0] before either append returns
        tool = asyncio.create_task(session.update_chat_ctx(_ctx(("msg0", "out1"))))
        await asyncio.sleep(0)
        user = asyncio.create_task(session.update_chat_ctx(_ctx(("msg0", "hello"))))
        await asyncio.sleep(0)
        await _let_go(duplex, 0)
        await tool
        await _let_go(duplex, 1)
        await user

    mirror, server = _run(True, ("msg0",), body)
    assert (mirror, server) == (("msg0", "hello"), ["msg0", "out1", "hello"])
    _agrees(config, finding, mirror, server)


def test_a_replacement_during_an_awaiting_append_sends_the_tool_output_again() -> None:
    config, finding = _model_finding(
        "unlocked", "duplex-await", "replacement-first", "base", Invariant.NOTHING_TWICE
    )

    async def body(session: Any, duplex: _StandInDuplex) -> None:
        tool = asyncio.create_task(session.update_chat_ctx(_ctx(("msg0", "out1"))))
        await asyncio.sleep(0)
        # the replacement copies the local context, which has out1 already
        replacement = asyncio.create_task(session.update_chat_ctx(_ctx(("msg0", "out1", "note1"))))
        await asyncio.sleep(0)
        await _let_go(duplex, 0)
        await _let_go(duplex, 1)
        await tool
        await replacement

    mirror, server = _run(True, ("msg0",), body)
    assert server == ["msg0", "out1", "out1", "note1"]
    _agrees(config, finding, mirror, server)


def test_a_stale_replacement_then_a_fresh_one_appends_the_user_turn_twice() -> None:
    config, finding = _model_finding(
        "lock5",
        "duplex",
        "two-replacements-during-user-turn",
        "stale-copies",
        Invariant.NOTHING_TWICE,
    )

    async def body(session: Any, duplex: _StandInDuplex) -> None:
        await session.update_chat_ctx(_ctx(("msg0", "hello")))  # the user turn
        await session.update_chat_ctx(_ctx(("msg0",)))  # a copy from before it
        await session.update_chat_ctx(_ctx(("msg0", "hello")))  # a copy from after it

    mirror, server = _run(False, ("msg0",), body)
    assert server == ["msg0", "hello", "hello"]
    _agrees(config, finding, mirror, server)
