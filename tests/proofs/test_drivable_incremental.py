"""`drivable.undrivable` answers from the run one move shorter (`_Runs`): its answers
are those of replaying every run from the start, which this test does beside it, for
every run of `cleanup-during-tool-push` read as two generations under ack timeouts
(the reading with runs left out) and every move the model offers after each of
their prefixes, in the order a Hypothesis draw asks."""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from attrs import evolve

from model import INTERNAL_MOVES, VARIANTS_BY_NAME, Config, Move, MoveKind, initial_state
from model.moves import behind_earlier_push
from model.scenarios import SCENARIOS
from model.sites import with_speech_turn
from proofs.adapters.livekit.drivable import (
    BEHIND,
    _Runs,
    given,
    own_generations,
    settled,
    undrivable,
)
from proofs.engines.conformance.follow import sequences
from proofs.engines.conformance.lockstep import model_side


def _replayed(config: Config, moves: Iterable[Move]) -> str | None:
    """The answer replayed from the start, as `undrivable` gave it before `_Runs`."""
    generations = own_generations(config)
    if len(generations) < 2:
        return None
    calls = tuple(evolve(call, behind_earlier_push=True) for call in config.scenario.calls)
    behind = evolve(config, scenario=evolve(config.scenario, calls=calls))
    side = model_side(config)
    states = settled(side, initial_state(config))
    for move in moves:
        if move.kind in INTERNAL_MOVES:
            continue
        if (
            move.kind is MoveKind.CALL
            and move.task in generations
            and any(behind_earlier_push(state, behind, move.task) for state in states)
        ):
            return BEHIND
        states = {end for state in states for end in given(side, state, move)}
    return None


def _two() -> Config:
    """The scenario's two interrupted generations, with livekit's speech turn, under
    ack timeouts: 35 runs, most of them left out (no livekit import needed)."""
    case = {s.name: s for s in SCENARIOS}["cleanup-during-tool-push"]
    environment = evolve(case.environment, timeouts=True)
    return Config(VARIANTS_BY_NAME["lock5"], case, environment, extra_sites=with_speech_turn())


def _compared(config: Config) -> tuple[int, int, list[tuple[Move, ...]]]:
    """How many runs were asked about, how many are left out, and those whose
    answer is not the replay's."""
    side = model_side(config)
    asked, left, wrong = 0, 0, []
    for run in sequences(config):
        states = settled(side, initial_state(config))
        for length in range(len(run) + 1):
            prefix = tuple(run[:length])
            offered = {m for state in states for m in side.stimuli(state)}
            for move in sorted(offered, key=lambda m: m.label()):
                answer = undrivable(config, (*prefix, move))
                if answer != _replayed(config, (*prefix, move)):
                    wrong.append((*prefix, move))
                asked += 1
                left += answer is not None
            if length < len(run):
                states = {end for state in states for end in given(side, state, run[length])}
    return asked, left, wrong


def test_the_answers_are_those_of_a_replay_from_the_start() -> None:
    asked, left, wrong = _compared(_two())
    assert wrong == [] and asked > 100 and left > 0


def test_the_comparison_catches_a_run_that_forgets_a_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The mutant keeps the states of the run one move shorter for every move."""
    config = _two()
    monkeypatch.setattr(_Runs, "_last", None)
    monkeypatch.setattr(_Runs, "_step", lambda self, states, move: states)
    assert _compared(config)[2] != []
