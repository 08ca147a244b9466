"""The failures the model predicts for livekit's duplex adapter, reproduced on the
real `_DuplexRealtimeSession` of livekit-agents 1.8.9.

The adapter's session is driven with the requests the model's trace computes, in
the trace's order, over a stand-in duplex session that records what it is asked
to append (the server conversation of an append-only protocol) and whose append
either never yields (`duplex`) or waits until the test lets it return
(`duplex-await`). The real mirror and the recorded server are then read back
into a model state, and the model's own invariant must name the same item as
the explorer's counterexample. The rest of the file drives the lockstep
adapter of `proofs/adapters/duplex` (the same class, every model move one step
of it): the catalog in lockstep, every "confirmed" mark of
`model/shape_verdicts.py` checked against it, and two mutants that show the
checks can fail.
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
    Environment,
    Invariant,
    Verdict,
    check,
    parse_environment,
)
from model.shape_verdicts import SHAPE_FAILURES
from proofs.engines.conformance import Lockstep, Mismatch, compose, parse_steps
from proofs.engines.conformance.lockstep import trace_steps
from proofs.engines.conformance.run import check_variant, replay_trace
from proofs.engines.explore import explore

llm = pytest.importorskip("livekit.agents.llm")
duplex_adapter = pytest.importorskip("livekit.agents.llm.duplex_adapter")

from proofs.adapters.duplex.adapter import DuplexFramework  # noqa: E402  (needs livekit)


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


# -- the lockstep adapter (proofs/adapters/duplex) ------------------------------------

DUPLEX_SHAPES = ("duplex", "duplex-await")
real_duplex = compose(DuplexFramework)


def _entry_config(entry: tuple[str, str, str, tuple[str, ...], str, str, str]) -> Config:
    variant, scenario, _, needs, shape, _, _ = entry
    return Config(
        VARIANTS_BY_NAME[variant],
        SCENARIOS_BY_NAME[scenario],
        Environment.of(needs),
        shape=SHAPES_BY_NAME[shape],
    )


def reproduces(entry: tuple[str, str, str, tuple[str, ...], str, str, str], factory: Any) -> bool:
    """The explorer's shortest counterexample of `entry`, replayed in lockstep on the
    real class, breaks the same invariant on the same item through the same site."""
    config = _entry_config(entry)
    invariant = Invariant(entry[2])
    finding = explore(config, (invariant,)).findings[0]
    assert finding.trace is not None and finding.violation is not None
    steps = trace_steps(config, finding.trace.moves)
    found = replay_trace(
        config, invariant, steps, finding.violation.item, finding.violation.site, factory
    )
    return found.reproduced


def test_every_duplex_verdict_is_marked_as_the_real_class_behaves() -> None:
    """The "confirmed" marks of model/shape_verdicts.py, checked against the adapter,
    so a mark cannot drift from what the real class does."""
    entries = [entry for entry in SHAPE_FAILURES if entry[4] in DUPLEX_SHAPES]
    assert len(entries) >= 80
    wrong = [
        entry[:5]
        for entry in entries
        if (entry[6] == "confirmed") != reproduces(entry, real_duplex)
    ]
    assert wrong == []


@pytest.mark.parametrize(("shape", "variant"), [("duplex", "lock5"), ("duplex-await", "unlocked")])
def test_the_real_class_conforms_in_lockstep_over_the_catalog(shape: str, variant: str) -> None:
    """Every catalog scenario under its own environment, exhaustive to full depth, and
    each explorer counterexample replayed: the real class breaks what the catalog
    expects of the shape, the model's way, and nothing else."""
    scenarios = [SCENARIOS_BY_NAME[name] for name in sorted(SCENARIOS_BY_NAME)]
    report = check_variant(
        VARIANTS_BY_NAME[variant], scenarios, factory=real_duplex, shape=SHAPES_BY_NAME[shape]
    )
    assert report.as_expected, [
        (cell.config.scenario.name, [str(m) for m in cell.mismatches], cell.missed)
        for cell in report.cells
        if not cell.as_expected
    ]
    assert any(cell.violations for cell in report.cells)


def test_an_append_that_yields_is_not_the_duplex_shape() -> None:
    """Shown to catch: the real class over an append that awaits, checked against the
    `duplex` record (mirror set in the step that sends), leaves the model at the burst
    where the second push diffs before the first's append returns."""

    class Yielding(DuplexFramework):
        def build(self, shape: Any) -> Any:
            return super().build(SHAPES_BY_NAME["duplex-await"])

    config = Config(
        VARIANTS_BY_NAME["unlocked"],
        SCENARIOS_BY_NAME["overlapping-push"],
        parse_environment("base"),
        shape=SHAPES_BY_NAME["duplex"],
    )
    with pytest.raises(Mismatch, match=r"mirror|to_server"):
        Lockstep.replay(config, parse_steps("call T0 + call T1"), compose(Yielding))
    Lockstep.replay(config, parse_steps("call T0 + call T1"), real_duplex).close()


def test_a_session_that_keeps_what_it_cannot_remove_confirms_no_cleanup_loss() -> None:
    """Shown to catch: the mark check fails for a session without the bug. A duplex
    session that keeps in its mirror the items it cannot remove (what the server
    still holds) does not reproduce the cleanup's mirror-true-at-rest break."""

    class Keeping(duplex_adapter._DuplexRealtimeSession):  # type: ignore[misc]
        async def update_chat_ctx(self, chat_ctx: Any) -> None:
            held = [item for item in self._chat_ctx.items if chat_ctx.get_by_id(item.id) is None]
            await super().update_chat_ctx(chat_ctx)
            self._chat_ctx = llm.ChatContext([*held, *self._chat_ctx.items])

    class KeepingFramework(DuplexFramework):
        session_class = Keeping

    entry = next(
        entry
        for entry in SHAPE_FAILURES
        if entry[:5] == ("lock5", "cleanup-during-tool-push", "mirror-true-at-rest", (), "duplex")
    )
    assert entry[6] == "confirmed"
    assert reproduces(entry, real_duplex)
    assert not reproduces(entry, compose(KeepingFramework))
