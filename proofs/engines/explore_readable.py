"""The explorer as it was: breadth-first over the readable model's own states.

Kept as the baseline the compact explorer is measured against
(`benchmarks/bench_explore.py`) and compared with (`tests/proofs/test_explore_compact.py`):
it explores `model.successors` directly, with no encoding in between.
"""

from __future__ import annotations

import time
from collections import deque

from model import (
    Config,
    Invariant,
    Move,
    State,
    Verdict,
    Violation,
    check,
    initial_state,
    successors,
)
from proofs.engines.explore import Exploration, Finding
from proofs.engines.trace import Step, Trace


def explore_readable(
    config: Config,
    invariants: tuple[Invariant, ...] = tuple(Invariant),
    max_states: int | None = None,
) -> Exploration:
    """Explore every reachable readable state; the shortest violation of each invariant."""
    started = time.perf_counter()
    start = initial_state(config)
    parents: dict[State, tuple[State, Move] | None] = {start: None}
    queue: deque[State] = deque([start])
    found: dict[Invariant, tuple[Violation, State]] = {}
    _check_all(start, config, invariants, found)
    while queue and len(found) < len(invariants):
        state = queue.popleft()
        for move, successor in successors(state, config):
            if successor in parents:
                continue
            parents[successor] = (state, move)
            _check_all(successor, config, invariants, found)
            queue.append(successor)
        if max_states is not None and len(parents) > max_states:
            raise RuntimeError(f"more than {max_states} states")
    findings = []
    for invariant in invariants:
        if invariant in found:
            violation, state = found[invariant]
            findings.append(
                Finding(invariant, Verdict.COUNTEREXAMPLE, violation, _path(parents, start, state))
            )
        else:
            findings.append(Finding(invariant, Verdict.HOLDS))
    return Exploration(config, len(parents), tuple(findings), time.perf_counter() - started)


def _check_all(
    state: State,
    config: Config,
    invariants: tuple[Invariant, ...],
    found: dict[Invariant, tuple[Violation, State]],
) -> None:
    for invariant in invariants:
        if invariant not in found:
            violation = check(state, config, invariant)
            if violation is not None:
                found[invariant] = (violation, state)


def _path(parents: dict[State, tuple[State, Move] | None], start: State, end: State) -> Trace:
    steps: list[Step] = []
    state = end
    while (link := parents[state]) is not None:
        previous, move = link
        steps.append(Step(move, state))
        state = previous
    steps.reverse()
    return Trace(start, tuple(steps))
