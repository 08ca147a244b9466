"""Explicit-state exploration: breadth-first over the compact model, with
symmetry reduction, deduplication on states hashed once, and a stop as soon as
every invariant asked about has its first violation.

Breadth-first order makes the first violation found a shortest one. Every trace
reported is replayed through the readable model (`model.step`), and its last
state's violation is the readable invariant's: a disagreement between the two
encodings raises `InternalError` instead of reporting either.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable

from attrs import frozen

from model import Config, Invariant, Verdict, Violation, check, initial_state, step
from proofs.engines.compact import CMove, CompactModel, CState, unsupported
from proofs.engines.symmetry import Perm, Symmetry, compose, identity, inverse, rename, rename_move
from proofs.engines.trace import Step, Trace
from proofs.errors import InternalError


@frozen
class Finding:
    """One invariant's verdict in one exploration, with its shortest trace if it fails."""

    invariant: Invariant
    verdict: Verdict
    violation: Violation | None = None
    trace: Trace | None = None

    @property
    def depth(self) -> int | None:
        return None if self.trace is None else self.trace.depth


@frozen
class Exploration:
    """What exploring one config found: a finding per invariant, states kept, seconds."""

    config: Config
    #: Distinct states kept: compact states, one per orbit where symmetry applies.
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
    symmetry: bool = True,
) -> Exploration:
    """Explore every reachable state, or until each invariant has a shortest violation.

    A config the compact encoding does not cover (`compact.unsupported`: another
    session shape, or a mechanism it lacks) is explored on the readable model's own
    states, without symmetry reduction: slower, and exact by construction.
    """
    if unsupported(config) is not None:
        from proofs.engines.explore_readable import explore_readable

        return explore_readable(config, invariants, max_states)
    started = time.perf_counter()
    model = CompactModel(config)
    sym = Symmetry(model) if symmetry else None
    if sym is not None and not sym.active:
        sym = None
    checks: dict[Invariant, Callable[[CState], bool]] = {
        Invariant.NO_UNINTENDED_DELETE: model.unintended_delete,
        Invariant.AGREEMENT_AT_REST: model.disagreement_at_rest,
        Invariant.MIRROR_TRUE_AT_REST: model.untrue_mirror_at_rest,
        Invariant.NOTHING_TWICE: model.twice,
        Invariant.REMOVED_AT_REST: model.removed_not_gone,
        Invariant.NO_WAIT_ON_SETTLED: model.waited_on_settled,
    }
    start = model.initial()
    start_perm: Perm | None = None
    if sym is not None:
        start, start_perm = sym.represent(start)
    index: dict[CState, int] = {start: 0}
    states: list[CState] = [start]
    parents: list[int] = [-1]
    found: dict[Invariant, int] = {}
    open_checks = [(inv, checks[inv]) for inv in invariants]

    def note(position: int, state: CState) -> None:
        nonlocal open_checks
        hits = [inv for inv, holds_not in open_checks if holds_not(state)]
        if hits:
            for inv in hits:
                found[inv] = position
            open_checks = [(inv, c) for inv, c in open_checks if inv not in found]

    note(0, start)
    successors = model.successors
    represent = sym.represent if sym is not None else None
    head = 0
    while head < len(states) and open_checks:
        parent = head
        for _, successor in successors(states[head]):
            if represent is not None:
                successor = represent(successor)[0]
            fresh = len(states)
            if index.setdefault(successor, fresh) != fresh:
                continue
            states.append(successor)
            parents.append(parent)
            if open_checks:
                note(fresh, successor)
        head += 1
        if max_states is not None and len(states) > max_states:
            raise RuntimeError(f"more than {max_states} states")
    findings = []
    for invariant in invariants:
        if invariant in found:
            trace = _trace(model, sym, start_perm, states, parents, found[invariant])
            violation = check(trace.last, config, invariant)
            if violation is None:
                raise InternalError(
                    f"the compact explorer found a {invariant.value} violation the readable "
                    f"model does not confirm ({config.variant.name} / {config.scenario.name})"
                )
            findings.append(Finding(invariant, Verdict.COUNTEREXAMPLE, violation, trace))
        else:
            findings.append(Finding(invariant, Verdict.HOLDS))
    return Exploration(config, len(states), tuple(findings), time.perf_counter() - started)


def _edge(
    model: CompactModel, sym: Symmetry | None, here: CState, target: CState
) -> tuple[CMove, Perm | None]:
    """The first move from `here` whose successor is kept as `target`, and the renaming
    that keeps it so."""
    for move, successor in model.successors(here):
        perm: Perm | None = None
        if sym is not None:
            successor, perm = sym.represent(successor)
        if successor == target:
            return move, perm
    raise InternalError("a kept state's successor is lost")


def _trace(
    model: CompactModel,
    sym: Symmetry | None,
    start_perm: Perm | None,
    states: list[CState],
    parents: list[int],
    end: int,
) -> Trace:
    """The readable trace to `states[end]`: each compact step renamed back to the
    concrete tasks and items, run by `model.step`, and checked against the encoding."""
    path = [end]
    while parents[path[-1]] != -1:
        path.append(parents[path[-1]])
    path.reverse()
    config = model.config
    state = initial_state(config)
    start = state
    # sigma renames the kept representative of the current state to the concrete one
    sigma = identity(model) if start_perm is None else inverse(start_perm)
    steps: list[Step] = []
    for here, there in itertools.pairwise(path):
        target = states[there]
        move, perm = _edge(model, sym, states[here], target)
        readable = model.move(rename_move(move, sigma))
        state = step(state, config, readable)
        if perm is not None:
            sigma = compose(sigma, inverse(perm))
        if model.encode(state) != rename(target, sigma):
            raise InternalError(
                f"the compact and readable models disagree after {readable.label()} "
                f"({config.variant.name} / {config.scenario.name})"
            )
        steps.append(Step(readable, state))
    return Trace(start, tuple(steps))
