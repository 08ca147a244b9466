"""Hypothesis over the real plugin: random interleavings, shrunk, with a replay string.

Each example is one run (`plugin.PluginFollow`): Hypothesis draws which
tool-output calls have a generation with a second tool (so that their output can
be made before the call, `LivekitAdapter.early`), then each next stimulus among
those the model allows in the state the run is in and the real code can take
(`drivable.undrivable`; a `before-call` of a one-tool push is not drawn), gives it
to the real code, and goes on until the model has nothing more to give; then
everything in flight is delivered. The property is that the verdicts agree:
the invariants the real code broke are exactly those the model broke along the
same stimuli (the model's states are checked with `model.invariants.check`),
and the real code never leaves the model (its state after each stimulus is one
the model reaches). Both are failures; since the abstraction compares the whole
state after every step, a wrong verdict shows as leaving the model first.

A failure is shrunk by Hypothesis to a shortest sequence and reported as a
replay string (`call T0; call T1; server-apply T0 out1; ...`, the steps form
of `proofs.engines.conformance.steps`), which `replay` runs again exactly.
"""

from __future__ import annotations

from typing import Any

from attrs import frozen
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from model import Config, Invariant, Move, MoveKind
from model.invariants import check
from proofs.adapters.livekit.drivable import undrivable
from proofs.adapters.livekit.plugin import PluginFollow, run_plugin
from proofs.engines.conformance.steps import format_steps, parse_steps, single_steps

__all__ = ["hypothesis_check", "replay"]


@frozen
class Disagreement:
    """The real code's verdict differs from the model's along one run, or it left the model.

    Raised inside an `AssertionError` (Hypothesis shrinks on it), never on its own.
    """

    replay: str
    real: list[str]
    model: list[str]
    divergence: str | None

    def __str__(self) -> str:
        what = (
            f"left the model {self.divergence}"
            if self.divergence
            else f"broke {self.real}, the model {self.model}"
        )
        return f"the real code {what}, along: {self.replay}"


def _drawable(config: Config, early: frozenset[int], moves: list[Move], move: Move) -> bool:
    """Whether the real code can take `move` after `moves` (the sweep's rule)."""
    if (
        move.kind is MoveKind.BEFORE_CALL
        and move.task is not None
        and config.call(move.task).site == "tool-outputs"
        and move.task not in early
    ):
        return False
    return undrivable(config, (*moves, move)) is None


def _one_run(config: Config, draw: Any, tally: dict[str, int]) -> None:
    tools = [i for i, call in enumerate(config.scenario.calls) if call.site == "tool-outputs"]
    early = frozenset(i for i in tools if draw(st.booleans()))
    session = PluginFollow(config, early=early)
    model_broken: set[Invariant] = set()
    moves: list[Move] = []
    try:
        while session.state is not None:
            choices = sorted(
                (
                    m
                    for m in session.side.stimuli(session.state)
                    if _drawable(config, early, moves, m)
                ),
                key=lambda m: m.label(),
            )
            if not choices:
                break
            move = draw(st.sampled_from(choices))
            moves.append(move)
            session.give(move)
            if session.state is not None:
                model_broken |= {
                    i for i in Invariant if check(session.state, config, i) is not None
                }
        if session.divergence is None:
            session.drain(session.adapter.in_flight)
            if session.state is not None:
                model_broken |= {
                    i for i in Invariant if check(session.state, config, i) is not None
                }
    finally:
        session.close()
    tally["runs"] += 1
    real = set(session.violations)
    if session.divergence is not None:
        tally["left the model"] += 1
    if session.divergence is not None or real != model_broken:
        raise AssertionError(
            Disagreement(
                format_steps(single_steps(moves)),
                sorted(i.value for i in real),
                sorted(i.value for i in model_broken),
                session.divergence,
            )
        )


def hypothesis_check(config: Config, *, examples: int = 20) -> dict[str, Any]:
    """Run `examples` random interleavings over the plugin; the shortest disagreement."""
    tally = {"runs": 0, "left the model": 0}
    found: list[Disagreement] = []

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        report_multiple_bugs=False,
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def prop(data: st.DataObject) -> None:
        try:
            _one_run(config, data.draw, tally)
        except AssertionError as error:
            if error.args and isinstance(error.args[0], Disagreement):
                found.append(error.args[0])
            raise

    try:
        prop()
    except AssertionError as error:
        # the shortest disagreement Hypothesis shrank to is in `found`; any other
        # assertion is the harness's own and goes on up
        if not (error.args and isinstance(error.args[0], Disagreement)):
            raise
    shortest = min(found, key=lambda e: len(e.replay.split(";"))) if found else None
    return {
        "scenario": config.scenario.name,
        "variant": config.variant.name,
        "examples": examples,
        "runs": tally["runs"],
        "left_the_model": tally["left the model"],
        "agrees": shortest is None,
        "replay": None if shortest is None else shortest.replay,
        "real_broken": None if shortest is None else shortest.real,
        "model_broken": None if shortest is None else shortest.model,
        "divergence": None if shortest is None else shortest.divergence,
    }


def replay(config: Config, text: str) -> dict[str, Any]:
    """Run one replay string over the plugin again; what the real code broke."""
    moves = [move for step in parse_steps(text) for move in step.moves]
    outcome = run_plugin(config, moves)
    return {
        "stimuli": list(outcome.stimuli),
        "broken": sorted(i.value for i in outcome.broken),
        "lost": list(outcome.lost),
        "divergence": outcome.divergence,
    }
