"""The trace renderers dispatch over move kinds through tables that cover `model.MOVES`.

A move kind without a handler must fail loudly: before these tables, `describe`
called any kind it did not know "called".
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from model import (
    CASES_BY_NAME,
    ENVIRONMENTS_BY_NAME,
    MOVES,
    SCENARIOS,
    VARIANTS_BY_NAME,
    Config,
    Move,
    MoveKind,
    State,
    initial_state,
    successors,
)
from proofs.engines.trace import Step, Trace
from proofs.errors import InternalError
from proofs.report import formats, render

_TABLES = {
    "proofs.report.render.DESCRIBERS": render.DESCRIBERS,
    "proofs.report.formats.MERMAID_STEPS": formats.MERMAID_STEPS,
}


def _one_step_of_each_kind() -> dict[MoveKind, tuple[Config, State, Move, State]]:
    """A real step of every move kind, from seeded random walks over the catalog."""
    rng = random.Random(12)
    found: dict[MoveKind, tuple[Config, State, Move, State]] = {}
    configs = [
        Config(VARIANTS_BY_NAME[variant], scenario, ENVIRONMENTS_BY_NAME["all"])
        for variant in ("lock5", "unlocked")
        for scenario in SCENARIOS
    ]
    # the model anchors an item on a deleted one only where the mirror drops such an
    # item (case 3's release before the fix); every catalog shape places it at the tail
    case = CASES_BY_NAME["livekit-agents-6964"]
    configs.append(
        Config(
            VARIANTS_BY_NAME["unlocked"],
            case.scenario,
            case.scenario.environment,
            shape=case.before.shape,
        )
    )
    for _ in range(20):
        for config in configs:
            state = initial_state(config)
            for _ in range(30):
                options = list(successors(state, config))
                if not options:
                    break
                move, after = rng.choice(options)
                found.setdefault(move.kind, (config, state, move, after))
                state = after
        if len(found) == len(MoveKind):
            break
    return found


STEPS = _one_step_of_each_kind()


def _trace(config: Config, before: State, move: Move, after: State) -> Trace:
    return Trace(before, (Step(move, after),))


def _renderings(config: Config, before: State, move: Move, after: State) -> Iterator[str]:
    yield render.describe(config, before, move, after)
    yield formats.mermaid(config, _trace(config, before, move, after))


@pytest.mark.parametrize("name", sorted(_TABLES))
def test_every_move_kind_has_a_handler(name: str) -> None:
    assert set(_TABLES[name]) == set(MOVES) == set(MoveKind)


def test_the_walks_reach_every_move_kind() -> None:
    assert set(STEPS) == set(MoveKind)


@pytest.mark.parametrize("kind", list(MoveKind), ids=lambda kind: kind.value)
def test_each_kind_renders_a_real_step(kind: MoveKind) -> None:
    config, before, move, after = STEPS[kind]
    line, diagram = _renderings(config, before, move, after)
    assert line and "\n" not in line
    assert diagram.startswith("sequenceDiagram\n") and " 1. " in diagram


def test_task_moves_get_words_of_their_own() -> None:
    """The old fall-through gave every unlisted task move the words of a call."""
    openings = {
        kind: render.describe(*STEPS[kind]).split(": ", 1)[1].split(";")[0]
        for kind in (MoveKind.CALL, MoveKind.WAKE, MoveKind.RESUME, MoveKind.TIMEOUT)
    }
    assert openings == {
        MoveKind.CALL: "called",
        MoveKind.WAKE: "gets the lock",
        MoveKind.RESUME: "its acks are in",
        MoveKind.TIMEOUT: "its ack wait times out",
    }


@pytest.mark.parametrize("kind", list(MoveKind), ids=lambda kind: kind.value)
def test_describe_raises_for_a_kind_without_a_handler(
    kind: MoveKind, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(render.DESCRIBERS, kind)
    with pytest.raises(InternalError, match=f"DESCRIBERS has no handler .*'{kind.value}'"):
        render.describe(*STEPS[kind])


@pytest.mark.parametrize("kind", list(MoveKind), ids=lambda kind: kind.value)
def test_mermaid_raises_for_a_kind_without_a_handler(
    kind: MoveKind, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(formats.MERMAID_STEPS, kind)
    with pytest.raises(InternalError, match=f"MERMAID_STEPS has no handler .*'{kind.value}'"):
        formats.mermaid(STEPS[kind][0], _trace(*STEPS[kind]))


def test_a_connect_draws_an_arrow_per_op_it_re_sends() -> None:
    """A reconnect's re-sent ops are sends like any other: each gets its arrow."""
    config = Config(VARIANTS_BY_NAME["lock5"], SCENARIOS[0], ENVIRONMENTS_BY_NAME["reconnects"])
    seen, todo = {initial_state(config)}, [initial_state(config)]
    while todo:
        state = todo.pop()
        for move, after in successors(state, config):
            resent = len(after.to_server) - len(state.to_server)
            if move.kind is MoveKind.CONNECT and resent > 0:
                diagram = formats.mermaid(config, _trace(config, state, move, after))
                assert diagram.count("S->>V: ") == resent
                assert "re-sends" in diagram
                return
            if after not in seen:
                seen.add(after)
                todo.append(after)
    raise AssertionError("no connect re-sends an op here: pick another scenario")


def test_a_cancel_and_its_end_render_in_both_formats() -> None:
    """The cancel op and its done event travel through `server-apply` and
    `client-apply`; both renderers name them (a `wait-done` task was a KeyError)."""
    from attrs import evolve

    from model import SCENARIOS_BY_NAME, SHAPES_BY_NAME
    from model.shapes import InterruptionEnd
    from model.sites import with_speech_turn

    scenario = SCENARIOS_BY_NAME["trim-tool-output"]
    config = Config(
        VARIANTS_BY_NAME["unlocked"],
        scenario,
        scenario.environment,
        extra_sites=with_speech_turn(),
        shape=evolve(SHAPES_BY_NAME["openai"], interruption_end=InterruptionEnd.ON_DONE_EVENT),
    )
    state = initial_state(config)
    lines: list[str] = []
    for label in ("call T0", "server-apply T0 response", "client-apply T0 response"):
        move, after = next((m, a) for m, a in successors(state, config) if m.label() == label)
        lines.append(render.describe(config, state, move, after))
        lines.extend(formats.mermaid(config, _trace(config, state, move, after)).splitlines())
        state = after
    text = "\n".join(lines)
    assert "waits for its end" in text
    assert "applies T0's cancel of the interrupted response" in text
    assert "receives the end of T0's interrupted response" in text
    assert "ends T0's interrupted response" in text


def test_a_drop_windows_two_disconnects_read_apart() -> None:
    """In a shape with a drop window a drop is two `disconnect` moves: the socket
    closing, then the session giving the dead connection up. The timeline says which
    is which (both read "the connection drops" before), and how many ops the window
    queued for the next connection (Gemini queues a push's append; OpenAI's is lost)."""
    from model import SCENARIOS_BY_NAME, SHAPES_BY_NAME

    scenario = SCENARIOS_BY_NAME["overlapping-push"]
    reconnects = ENVIRONMENTS_BY_NAME["reconnects"]
    texts = {}
    for shape in ("gemini", "openai-reconnect"):
        config = Config(
            VARIANTS_BY_NAME["lock5"], scenario, reconnects, shape=SHAPES_BY_NAME[shape]
        )
        state = initial_state(config)
        lines = []
        for label in ("disconnect", "call T0", "disconnect"):
            move, after = next((m, a) for m, a in successors(state, config) if m.label() == label)
            lines.append(render.describe(config, state, move, after))
            state = after
        texts[shape] = lines
    for lines in texts.values():
        assert lines[0].startswith("the connection drops;")
        assert "does not notice yet" in lines[0]
        assert lines[2].startswith("the session notices the dropped connection")
    assert texts["gemini"][2].endswith("1 op(s) queued for the next connection")
    assert texts["openai-reconnect"][2].endswith("0 op(s) queued for the next connection")
    # without a window a drop is one move, and says nothing of one
    config = Config(VARIANTS_BY_NAME["lock5"], scenario, reconnects)
    state = initial_state(config)
    move, after = next((m, a) for m, a in successors(state, config) if m.label() == "disconnect")
    assert "notice" not in render.describe(config, state, move, after)
