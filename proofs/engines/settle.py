"""The jobs of the default `verify`, each run in a worker process of its own.

- `explore_group`: one (variant, environment) over the catalog's scenarios and small
  mixes of calls, with the explorer: exact verdicts per scenario, and the smallest
  mix of calls that breaks each invariant;
- `fol_proof`: the first-order engine's proof of one cell, for every number of calls
  and items, reduced to what the table needs;
- `fol_proofs`: the default run's one first-order job for a variant's columns (one
  certificate's check proves every column whose system it contains).

Both return plain frozen records, so what crosses the pipe is small and picklable.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING

from attrs import evolve, frozen

from model import (
    Config,
    Environment,
    Invariant,
    Scenario,
    Site,
    Variant,
    Verdict,
    Violation,
    check,
)
from proofs.engines.explore import Exploration, explore
from proofs.engines.jobs import kept_worker
from proofs.engines.trace import Trace, replay
from proofs.errors import InternalError

if TYPE_CHECKING:
    from proofs.engines.fol import Outcome

#: Holding cells are also checked on every mix of up to this many calls of their sites:
#: the bounded proof then covers more than the catalog's fixed scenarios (all mixes of
#: three calls of the six sites take about 90 s under `all`; of two, under 1 s).
MIX_CALLS = 2


@frozen
class Run:
    """One exploration's answer for one invariant: a shortest counterexample, or none."""

    config: Config
    invariant: Invariant
    holds: bool
    depth: int | None
    trace: Trace | None
    violation: Violation | None
    states: int
    seconds: float

    @property
    def calls(self) -> int:
        return len(self.config.scenario.calls)

    @property
    def name(self) -> str:
        return self.config.scenario.name


@frozen
class GroupPart:
    """What the explorer found for one invariant of a (variant, environment)."""

    invariant: Invariant
    #: One per catalog scenario, in the order asked.
    scenarios: tuple[Run, ...]
    #: The counterexample the cell names: the fewest calls first, then the shortest.
    witness: Run | None
    #: Mix sizes searched (1, 2, ...), and how many mixes were explored.
    mix_sizes: tuple[int, ...]
    mixes: int


@frozen
class GroupResult:
    """Every invariant's part of one (variant, environment)."""

    variant: Variant
    environment: Environment
    parts: tuple[GroupPart, ...]
    seconds: float

    def part(self, invariant: Invariant) -> GroupPart:
        for part in self.parts:
            if part.invariant is invariant:
                return part
        raise KeyError(invariant)


def _runs(exploration: Exploration, invariants: Sequence[Invariant]) -> list[Run]:
    out = []
    for invariant in invariants:
        finding = exploration.finding(invariant)
        fails = finding.verdict is Verdict.COUNTEREXAMPLE
        out.append(
            Run(
                exploration.config,
                invariant,
                not fails,
                finding.depth,
                finding.trace,
                finding.violation,
                exploration.states,
                exploration.seconds,
            )
        )
    return out


def _confirmed(run: Run) -> Run:
    """The trace run again through `model.step`, and the violation `model.check` reports
    at its end, which must be the one the explorer reported."""
    assert run.trace is not None
    again = replay(run.config, run.trace.moves)
    if check(again.last, run.config, run.invariant) != run.violation:
        raise InternalError(
            f"the model does not confirm the explorer's counterexample "
            f"({run.config.variant.name} / {run.name} / {run.invariant.value})"
        )
    return run


def smallest(runs: Sequence[Run]) -> Run | None:
    """The counterexample with the fewest calls, then the shortest, then by name."""
    failing = [r for r in runs if not r.holds]
    if not failing:
        return None
    return min(failing, key=lambda r: (r.calls, r.depth or 0, r.name))


#: Explorations this process has made, by what they depend on (`_behaviour`): a kept
#: worker runs many groups, and the same model comes back in other columns and
#: variants (a column whose option the scenario never reads, a variant that locks
#: only sites the scenario does not call). Bounded: cleared when full.
_EXPLORED: dict[Hashable, Exploration] = {}
_EXPLORED_MOST = 4096


def _behaviour(config: Config, invariants: tuple[Invariant, ...]) -> Hashable:
    """Everything an exploration's answer depends on: configs with equal behaviours
    have the same runs (`Config.behaviour`), so the same states, traces and violations."""
    return (config.behaviour(), config.appends_locally, invariants)


def _explore(config: Config, invariants: tuple[Invariant, ...]) -> Exploration:
    """`explore(config, invariants)`, or the answer this process found for the same
    model before, given as this config's (its seconds: the look-up's)."""
    started = time.perf_counter()
    key = _behaviour(config, invariants)
    found = _EXPLORED.get(key)
    if found is None:
        if len(_EXPLORED) >= _EXPLORED_MOST:
            _EXPLORED.clear()
        found = _EXPLORED[key] = explore(config, invariants)
        return found
    return evolve(found, config=config, seconds=time.perf_counter() - started)


@kept_worker  # its answer depends on its arguments alone (no z3; `_EXPLORED` is exact)
def explore_group(
    variant: Variant,
    environment: Environment,
    scenarios: Sequence[Scenario],
    invariants: Sequence[Invariant],
    sites: tuple[Site, ...],
    mixes_of: Sequence[Sequence[Scenario]],
) -> GroupResult:
    """The explorer on every catalog scenario, then on mixes of calls (`mixes_of[k]`: the
    mixes of k+1 calls of `sites`).

    A cell that fails on the catalog is searched on mixes of fewer calls than its
    smallest failing scenario, one size at a time, so that its counterexample names
    the smallest set of overlapping calls that breaks it. A cell that holds is checked
    on every mix of up to `MIX_CALLS` calls, which widens its bounded proof (and a
    failure there is a finding the catalog does not have)."""
    started = time.perf_counter()
    catalog: dict[Invariant, list[Run]] = {inv: [] for inv in invariants}
    for scenario in scenarios:
        exploration = _explore(Config(variant, scenario, environment), tuple(invariants))
        for run in _runs(exploration, invariants):
            catalog[run.invariant].append(run)
    explored: dict[str, list[Run]] = {}

    def mix_runs(scenario: Scenario) -> list[Run]:
        if scenario.name not in explored:
            config = Config(variant, scenario, environment, extra_sites=sites)
            explored[scenario.name] = _runs(_explore(config, tuple(invariants)), invariants)
        return explored[scenario.name]

    found_by: list[tuple[Invariant, Run | None, tuple[int, ...]]] = []
    for invariant in invariants:
        found = smallest(catalog[invariant])
        limit = found.calls - 1 if found is not None else MIX_CALLS
        searched: list[int] = []
        for size in range(1, min(limit, len(mixes_of)) + 1):
            searched.append(size)
            runs = [r for s in mixes_of[size - 1] for r in mix_runs(s) if r.invariant is invariant]
            smaller = smallest(runs)
            if smaller is not None:
                found = smaller
                break
        found_by.append((invariant, found, tuple(searched)))
    counted = tuple(
        GroupPart(
            invariant,
            tuple(catalog[invariant]),
            None if found is None else _confirmed(found),
            searched,
            len(explored),
        )
        for invariant, found, searched in found_by
    )
    return GroupResult(variant, environment, counted, time.perf_counter() - started)


# -- the first-order engine -------------------------------------------------------------


@frozen
class FolAnswer:
    """What the first-order engine said about one cell."""

    status: str
    scope: str
    assumptions: tuple[str, ...]
    reason: str
    seconds: float
    #: A counterexample it found (a mix of calls, by the explorer), when it fails.
    scenario: Scenario | None = None
    trace: Trace | None = None
    #: The committed certificate whose check it ran (`fol.certificate.key`), or "".
    certificate: str = ""
    #: The environment of the cell that certificate is for, when it is another cell's.
    checked_on: str = ""
    #: Why that cell's first-order system contains this one's (`fol.cover`), or "".
    cover: str = ""


def fol_proof(
    variant: Variant,
    sites: tuple[Site, ...],
    environment: Environment,
    seconds: float | None = None,
    certified_only: bool = False,
) -> FolAnswer:
    """`fol.prove` on the cell of these sites (under the variant's session shape), within
    `seconds` of wall time: proved, unknown or fails, and why. `certified_only`: the check
    of the cell's committed certificate and nothing else (no sampling, no inference), so
    a cell without one is unknown at once."""
    from proofs.engines import fol
    from proofs.engines.fol.certificate import key

    started = time.perf_counter()
    cell = fol.Cell(variant, sites, environment)
    outcome = fol.prove(cell, seconds_limit=seconds, certified_only=certified_only)
    scenario = None
    trace = None
    if outcome.counterexample is not None:
        trace = outcome.counterexample.trace
        names = {s.name: s for s in fol.mixes(sites, len(trace.start.tasks), environment)}
        scenario = names.get(outcome.counterexample.scenario)
    return _answer(
        outcome,
        time.perf_counter() - started,
        scenario,
        trace,
        outcome.certificate or (key(cell) if "certificate" in outcome.seconds else ""),
    )


def fol_proofs(
    variant: Variant, sites: tuple[Site, ...], environments: tuple[Environment, ...]
) -> tuple[FolAnswer, ...]:
    """The default run's first-order job for several columns of one variant: one check of
    the certificate of the cell with every option the engine reads, which proves each
    column whose first-order system it contains (`fol.prove_covered`); a column it does
    not contain gets its own certificate's check. One answer per environment, in order;
    each carries the job's whole time."""
    from proofs.engines import fol

    started = time.perf_counter()
    outcomes = fol.prove_covered([fol.Cell(variant, sites, env) for env in environments])
    seconds = time.perf_counter() - started
    return tuple(_answer(o, seconds, None, None, o.certificate) for o in outcomes)


def _answer(
    outcome: Outcome, seconds: float, scenario: Scenario | None, trace: Trace | None, key: str
) -> FolAnswer:
    return FolAnswer(
        outcome.status,
        outcome.scope,
        tuple(outcome.assumptions),
        outcome.reason,
        seconds,
        scenario,
        trace,
        key,
        outcome.checked_on,
        outcome.cover,
    )
