"""Traces: a start state and the named moves that lead from it, with each state."""

from __future__ import annotations

from attrs import frozen

from model import Config, Move, State, initial_state, step


@frozen
class Step:
    """One move and the state it led to."""

    move: Move
    state: State


@frozen
class Trace:
    """A run of the model: its start and each step, so every renderer and replay reads
    the model's own states rather than working them out again."""

    start: State
    steps: tuple[Step, ...]

    @property
    def depth(self) -> int:
        return len(self.steps)

    @property
    def moves(self) -> tuple[Move, ...]:
        return tuple(s.move for s in self.steps)

    @property
    def last(self) -> State:
        return self.steps[-1].state if self.steps else self.start


def replay(config: Config, moves: tuple[Move, ...]) -> Trace:
    """Run named moves from the scenario's start; ValueError if one is not enabled."""
    state = initial_state(config)
    start = state
    steps: list[Step] = []
    for move in moves:
        state = step(state, config, move)
        steps.append(Step(move, state))
    return Trace(start, tuple(steps))
