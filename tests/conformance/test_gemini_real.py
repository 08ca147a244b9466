"""The failures the model predicts for Gemini Live, reproduced on the real
`RealtimeSession` of livekit-plugins-google 1.8.9 (in the `livekit` extra;
skipped where it is not installed): scripted reproductions, then the lockstep
adapter of `proofs/adapters/gemini` over the catalog, its confirmed marks and
the drop window.

The session is built without a connection (its connect task is cancelled before
it runs) and given a stand-in active session, so `update_chat_ctx` runs its real
diff, queues its real client events and sets its real known state. What it
queued (the item ids of each event) is the server conversation of an
append-only protocol. The real end state, read into the model's last state,
must break the same invariant on the same item as the explorer's
counterexample. These are the Gemini failures the catalog marks "confirmed".
"""

from __future__ import annotations

import asyncio
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
from model.shapes import DropWindow, MirrorUpdate
from proofs.engines.conformance import compose
from proofs.engines.conformance.lockstep import trace_steps
from proofs.engines.conformance.run import check_variant, replay_trace
from proofs.engines.explore import explore

realtime_api = pytest.importorskip("livekit.plugins.google.realtime.realtime_api")
llm = pytest.importorskip("livekit.agents.llm")

from proofs.adapters.gemini.adapter import GeminiFramework  # noqa: E402  (needs the plugin)

real_gemini = compose(GeminiFramework)


def _ctx(ids: tuple[str, ...]) -> Any:
    return llm.ChatContext([llm.ChatMessage(id=i, role="user", content=[i]) for i in ids])


def _run(held: tuple[str, ...], pushes: tuple[tuple[str, ...], ...]) -> tuple[Any, list[str]]:
    async def main() -> tuple[Any, list[str]]:
        session = realtime_api.RealtimeModel(api_key="unused").session()
        session._main_atask.cancel()
        session._active_session = object()
        session._chat_ctx = _ctx(held)
        server = list(held)
        for request in pushes:
            await session.update_chat_ctx(_ctx(request))
        while True:
            try:
                event = session._msg_ch.recv_nowait()
            except Exception:  # the channel is empty
                break
            server.extend(sorted(getattr(event, "item_ids", ())))
        return tuple(item.id for item in session._chat_ctx.items), server

    return asyncio.run(main())


def _finding(variant: str, scenario: str, env: str, invariant: Invariant) -> tuple[Config, Any]:
    config = Config(
        VARIANTS_BY_NAME[variant],
        SCENARIOS_BY_NAME[scenario],
        parse_environment(env),
        shape=SHAPES_BY_NAME["gemini"],
    )
    finding = explore(config, (invariant,)).findings[0]
    assert finding.verdict is Verdict.COUNTEREXAMPLE and finding.trace is not None
    return config, finding


def _agrees(config: Config, finding: Any, mirror: tuple[str, ...], server: list[str]) -> None:
    real = attrs.evolve(finding.trace.last, mirror=mirror, server=tuple(server))
    violation = check(real, config, finding.invariant)
    assert violation is not None and violation.item == finding.violation.item


def test_a_cleanup_leaves_the_item_on_the_server_and_drops_it_from_the_known_state() -> None:
    config, finding = _finding(
        "lock5", "cleanup-during-tool-push", "base", Invariant.MIRROR_TRUE_AT_REST
    )
    mirror, server = _run(("msg0", "asst1"), (("msg0",),))
    assert (mirror, server) == (("msg0",), ["msg0", "asst1"])
    _agrees(config, finding, mirror, server)


def test_a_stale_replacement_then_a_fresh_one_sends_the_user_turn_twice() -> None:
    config, finding = _finding(
        "lock5", "two-replacements-during-user-turn", "stale-copies", Invariant.NOTHING_TWICE
    )
    mirror, server = _run(("msg0",), (("msg0", "hello"), ("msg0",), ("msg0", "hello")))
    assert server == ["msg0", "hello", "hello"]
    _agrees(config, finding, mirror, server)


def test_while_no_session_is_active_the_request_is_kept_back_and_reported() -> None:
    async def main() -> tuple[Any, Any, bool]:
        session = realtime_api.RealtimeModel(api_key="unused").session()
        session._main_atask.cancel()
        session._active_session = None
        await session.update_chat_ctx(_ctx(("msg0", "out1")))
        return session._pending_chat_ctx, session.chat_ctx, session._msg_ch.empty()

    kept, reported, nothing_sent = asyncio.run(main())
    assert [i.id for i in kept.items] == [i.id for i in reported.items] == ["msg0", "out1"]
    assert nothing_sent


# -- the lockstep adapter (proofs/adapters/gemini) ------------------------------------


def _replays(config: Config, invariant: Invariant) -> bool:
    """The explorer's shortest counterexample, replayed in lockstep on the real class,
    breaks the same invariant on the same item through the same site."""
    finding = explore(config, (invariant,)).findings[0]
    assert finding.trace is not None and finding.violation is not None
    steps = trace_steps(config, finding.trace.moves)
    item, site = finding.violation.item, finding.violation.site
    return replay_trace(config, invariant, steps, item, site, real_gemini).reproduced


def test_every_gemini_verdict_is_marked_as_the_real_class_behaves() -> None:
    """The "confirmed" marks of model/shape_verdicts.py, checked against the adapter
    (the reconnect entries drop and reopen the real session's connection)."""
    entries = [entry for entry in SHAPE_FAILURES if entry[4] == "gemini"]
    assert len(entries) >= 50
    wrong = []
    for variant, scenario, invariant, needs, shape, _, mark in entries:
        config = Config(
            VARIANTS_BY_NAME[variant],
            SCENARIOS_BY_NAME[scenario],
            Environment.of(needs),
            shape=SHAPES_BY_NAME[shape],
        )
        if (mark == "confirmed") != _replays(config, Invariant(invariant)):
            wrong.append((variant, scenario, invariant, needs))
    assert wrong == []
    assert any("reconnects" in entry[3] and entry[6] == "confirmed" for entry in entries)


def test_the_real_class_conforms_in_lockstep_over_the_catalog() -> None:
    """Every catalog scenario under its own environment, exhaustive to full depth, and
    each explorer counterexample replayed, for lock5 (the fix) on Gemini Live."""
    scenarios = [SCENARIOS_BY_NAME[name] for name in sorted(SCENARIOS_BY_NAME)]
    report = check_variant(
        VARIANTS_BY_NAME["lock5"], scenarios, factory=real_gemini, shape=SHAPES_BY_NAME["gemini"]
    )
    assert report.as_expected, [
        (cell.config.scenario.name, [str(m) for m in cell.mismatches], cell.missed)
        for cell in report.cells
        if not cell.as_expected
    ]
    assert any(cell.violations for cell in report.cells)


def test_the_known_state_is_set_at_send_not_on_return() -> None:
    """The record's `at-send` against the `on-return` the audit infers: with the mirror
    set a step after the send, two unlocked pushes would diff against the same known
    state and one would drop the other's item from it; the real class sets it in the
    step that queues, so the replay of that counterexample breaks nothing."""
    on_return = attrs.evolve(SHAPES_BY_NAME["gemini"], mirror_update=MirrorUpdate.ON_RETURN)
    config = Config(
        VARIANTS_BY_NAME["unlocked"],
        SCENARIOS_BY_NAME["overlapping-push"],
        parse_environment("base"),
        shape=on_return,
    )
    predicted = explore(config, (Invariant.MIRROR_TRUE_AT_REST,)).findings[0]
    assert predicted.verdict is Verdict.COUNTEREXAMPLE
    assert not _replays(config, Invariant.MIRROR_TRUE_AT_REST)
    at_send = Config(
        VARIANTS_BY_NAME["unlocked"],
        SCENARIOS_BY_NAME["overlapping-push"],
        parse_environment("base"),
        shape=SHAPES_BY_NAME["gemini"],
    )
    holds = explore(at_send, (Invariant.MIRROR_TRUE_AT_REST,)).findings[0]
    assert holds.verdict is not Verdict.COUNTEREXAMPLE


def test_the_drop_window_is_the_real_class_s_and_a_model_without_it_is_caught() -> None:
    """Found by the scheduled Hypothesis mode before the model had it: the real session
    learns of a drop when its receive loop fails, and stops treating the connection as
    active only once its connect task has closed it; a push in between queues its
    append on the fresh channel, which the next connection sends after the rebuild
    from the known state that already holds the item. With the window in the model
    (`DropWindow.QUEUED`, ended by the drop's second `disconnect`) the real class and
    the model agree at every step and both find out1 twice on the new server; the model
    with the window switched off is caught at the drop."""
    from proofs.engines.conformance import Lockstep, Mismatch, parse_steps

    config = Config(
        VARIANTS_BY_NAME["lock5"],
        SCENARIOS_BY_NAME["cleanup-during-tool-push"],
        parse_environment("reconnects"),
        shape=SHAPES_BY_NAME["gemini"],
    )
    run = Lockstep(config, real_gemini)
    for step in parse_steps("call T0; call T1 + disconnect @1; disconnect; connect"):
        run.apply(step)
    assert run.state.connected is True and [op.item for op in run.state.to_server] == ["out1"]
    run.apply(parse_steps("server-apply T1 out1")[0])
    assert run.adapter.observe().server == ("msg0", "out1", "out1")
    assert run.violations[Invariant.NOTHING_TWICE].item == "out1"
    run.close()

    off = attrs.evolve(config, shape=attrs.evolve(config.shape, drop_window=DropWindow.NONE))
    run = Lockstep(off, real_gemini)
    run.apply(parse_steps("call T0")[0])
    with pytest.raises(Mismatch, match=r"to_server: model \[\], implementation \[create out1"):
        run.apply(parse_steps("call T1 + disconnect @1")[0])
    run.close()
