"""Traces: a start state and the named moves that lead from it, with each state."""

from __future__ import annotations

from attrs import frozen

from model import Config, Move, MoveKind, State, initial_state, step


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


def before_call_words(config: Config, before: State, move: Move, after: State) -> str:
    """What a `before-call` step does, in a trace's words (the renderers' describer and
    Mermaid note for the kind): a site's items are created ahead of its call."""
    assert move.kind is MoveKind.BEFORE_CALL and move.task is not None
    call = config.call(move.task)
    made = ", ".join(call.adds)
    return (
        f"T{move.task} ({call.site}): {made} created before the call "
        f"(creation order {', '.join(after.born) or 'none kept'})"
    )
