"""Explicit-state exploration: breadth-first over the model with deduplication.

Breadth-first order makes the first violation found a shortest one.
"""

from __future__ import annotations

import time
from collections import deque

from attrs import frozen

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
from proofs.engines.trace import Step, Trace


@frozen
class Finding:
    invariant: Invariant
    verdict: Verdict
    violation: Violation | None = None
    trace: Trace | None = None

    @property
    def depth(self) -> int | None:
        return None if self.trace is None else self.trace.depth


@frozen
class Exploration:
    config: Config
    states: int
    findings: tuple[Finding, ...]
    seconds: float

    def finding(self, invariant: Invariant) -> Finding:
        for finding in self.findings:
            if finding.invariant is invariant:
                return finding
        raise KeyError(invariant)


def explore(
    config: Config,
    invariants: tuple[Invariant, ...] = tuple(Invariant),
    max_states: int | None = None,
) -> Exploration:
    """Explore every reachable state; the shortest violation of each invariant."""
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
