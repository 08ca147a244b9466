"""Steps of a conformance run, as short strings that replay exactly.

A step is one stimulus (or a burst of stimuli that arrive together) and the
schedule the event loop followed while the tasks ran afterwards:

    call T0; call T1; server-apply T0 out1; client-apply T0 out1 @1.0

Moves are written as `Move.label()` writes them; a burst joins them with ` + `;
`@` introduces the schedule (omitted when it is asyncio's own FIFO order).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from attrs import frozen

from model import Move, MoveKind
from proofs.engines.conformance.loop import Schedule

FIFO = Schedule()
_KINDS = {kind.value: kind for kind in MoveKind}
_TASK = re.compile(r"T(\d+)$")


@frozen
class Step:
    """One stimulus, or a burst given together, and the loop's schedule after it."""

    moves: tuple[Move, ...]
    schedule: Schedule = FIFO

    def __str__(self) -> str:
        text = " + ".join(move.label() for move in self.moves)
        if self.schedule.choices:
            text += f" @{self.schedule}"
        return text


def parse_move(text: str) -> Move:
    words = text.split()
    if not words or words[0] not in _KINDS:
        raise ValueError(f"not a move: {text!r} (moves start with one of {', '.join(_KINDS)})")
    kind = _KINDS[words[0]]
    task: int | None = None
    item: str | None = None
    rest = words[1:]
    if rest and (match := _TASK.match(rest[0])):
        task = int(match.group(1))
        rest = rest[1:]
    if rest:
        item = rest[0]
        rest = rest[1:]
    if rest:
        raise ValueError(f"not a move: {text!r}")
    return Move(kind, task, item)


def parse_step(text: str) -> Step:
    moves_text, _, schedule_text = text.partition("@")
    moves = tuple(parse_move(part) for part in moves_text.split("+"))
    return Step(moves, Schedule.parse(schedule_text))


def parse_steps(text: str) -> tuple[Step, ...]:
    """Steps from their printed form, `;` between them (`format_steps` writes it)."""
    return tuple(parse_step(part) for part in text.split(";") if part.strip())


def format_steps(steps: Iterable[Step]) -> str:
    """Steps as one line that `parse_steps` reads back."""
    return "; ".join(str(step) for step in steps)


def single_steps(moves: Iterable[Move]) -> tuple[Step, ...]:
    return tuple(Step((move,)) for move in moves)
