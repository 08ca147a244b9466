"""A conformance run over the catalog: the verdicts the command line reports.

For each (variant, scenario, environment) cell: every stimulus sequence up to a
depth in lockstep (`exhaustive`), and a replay of each counterexample trace the
explorer finds in the model. A cell behaves as the catalog expects when there is
no mismatch, the implementation breaks an invariant exactly where
`Variant.expected` says counterexample, each break is the one the model predicts
(same invariant, item and site as the explorer's shortest trace), and every
explorer trace reproduces it in the implementation.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

import attrs
from attrs import frozen

from model import (
    SHAPES_BY_NAME,
    Config,
    Environment,
    Invariant,
    Scenario,
    SessionShape,
    Variant,
    Verdict,
)
from proofs.engines.conformance.adapter import AdapterFactory
from proofs.engines.conformance.exhaustive import Exhaustion, Failure, exhaust
from proofs.engines.conformance.lockstep import (
    FoundViolation,
    Lockstep,
    Mismatch,
    trace_steps,
)
from proofs.engines.conformance.steps import Step
from proofs.engines.explore import explore
from proofs.errors import NotEnabled

#: Deep enough for every sequence of every catalog scenario (the longest is 11).
DEFAULT_DEPTH = 12


@frozen
class ViolationReport:
    invariant: Invariant
    expected: Verdict
    found: FoundViolation
    #: The explorer's counterexample for this invariant, replayed in the
    #: implementation, breaks it on the same item through the same site.
    same_as_model: bool


@frozen
class TraceReplay:
    """One explorer counterexample replayed in the implementation."""

    invariant: Invariant
    steps: tuple[Step, ...]
    reproduced: bool
    detail: str
    #: What the implementation broke in the replay, when it reproduced.
    found: FoundViolation | None = None


@frozen
class CellReport:
    """One (variant, scenario, environment) cell: its exhaustive run and trace replays."""

    config: Config
    exhaustion: Exhaustion
    violations: tuple[ViolationReport, ...]
    #: Invariants the catalog expects to break that the implementation never broke.
    missed: tuple[Invariant, ...]
    traces: tuple[TraceReplay, ...]

    @property
    def mismatches(self) -> tuple[Failure, ...]:
        return self.exhaustion.mismatches

    @property
    def as_expected(self) -> bool:
        return (
            not self.mismatches
            and not self.missed
            and all(
                v.expected is Verdict.COUNTEREXAMPLE and v.same_as_model for v in self.violations
            )
            and all(trace.reproduced for trace in self.traces)
        )


@frozen
class VariantReport:
    """Every cell of one variant, as `ackguard conform` reports it."""

    variant: Variant
    cells: tuple[CellReport, ...]
    seconds: float
    #: What the run left out and why (an environment option the adapter cannot drive).
    notes: tuple[str, ...] = ()

    @property
    def sequences(self) -> int:
        return sum(cell.exhaustion.sequences for cell in self.cells)

    @property
    def as_expected(self) -> bool:
        return all(cell.as_expected for cell in self.cells)


def check_cell(config: Config, factory: AdapterFactory, depth: int = DEFAULT_DEPTH) -> CellReport:
    """Every stimulus sequence up to `depth`, and each explorer counterexample replayed."""
    exhaustion = exhaust(config, depth, factory)
    exploration = explore(config)
    traces = []
    for finding in exploration.findings:
        if finding.trace is None or finding.violation is None:
            continue
        steps = trace_steps(config, finding.trace.moves)
        violation = finding.violation
        traces.append(
            replay_trace(config, finding.invariant, steps, violation.item, violation.site, factory)
        )
    reproduced = {trace.invariant for trace in traces if trace.reproduced}
    # a break that needs a burst (a race at an await the model has and single
    # stimuli cannot interleave, as an append that yields) or more stimuli than
    # `depth` shows in the replay only; one that single stimuli reach within the
    # depth must be found by the exhaustive run itself
    broken = dict(exhaustion.violations)
    for trace in traces:
        if trace.found is not None and (
            any(len(step.moves) > 1 for step in trace.steps) or len(trace.steps) > depth
        ):
            broken.setdefault(trace.invariant, trace.found)
    violations = tuple(
        ViolationReport(
            invariant,
            config.variant.expected(
                config.scenario.name, config.environment, invariant, config.shape.name
            ),
            found,
            invariant in reproduced,
        )
        for invariant, found in sorted(broken.items(), key=lambda kv: kv[0].value)
    )
    missed = tuple(
        invariant
        for invariant in Invariant
        if config.variant.expected(
            config.scenario.name, config.environment, invariant, config.shape.name
        )
        is Verdict.COUNTEREXAMPLE
        and invariant not in broken
    )
    return CellReport(config, exhaustion, violations, missed, tuple(traces))


def replay_trace(
    config: Config,
    invariant: Invariant,
    steps: tuple[Step, ...],
    item: str,
    site: str | None,
    factory: AdapterFactory,
) -> TraceReplay:
    """Replay a model counterexample's stimuli; reproduced when the implementation
    breaks the same invariant on the same item, caused by the same site."""
    try:
        run = Lockstep.replay(config, steps, factory)
    except (Mismatch, NotEnabled) as error:
        detail = error.detail if isinstance(error, Mismatch) else str(error)
        return TraceReplay(invariant, steps, False, detail)
    found = run.violations.get(invariant)
    run.close()
    if found is None or (found.item, found.site) != (item, site):
        return TraceReplay(invariant, steps, False, "the implementation did not break it")
    return TraceReplay(invariant, steps, True, found.reason, found)


def drivable(config: Config, reconnects: bool = False) -> Config:
    """The config an adapter can be driven through: unless the adapter drives a
    connection (`reconnects`), a reconnect the shape would make is left out."""
    if reconnects or not config.reconnects():
        return config
    return attrs.evolve(config, environment=attrs.evolve(config.environment, reconnects=False))


def check_variant(
    variant: Variant,
    scenarios: Iterable[Scenario],
    environments: Sequence[Environment] | None = None,
    depth: int = DEFAULT_DEPTH,
    *,
    factory: AdapterFactory,
    shape: SessionShape | None = None,
    reconnects: bool = False,
    appends_locally: bool = False,
) -> VariantReport:
    """Every scenario under `environments` (each scenario's own when None), with
    the session `shape` (the variant's own when None); `appends_locally` for an
    agent whose context appends every new item (`Config.appends_locally`).

    Unless the adapter drives a connection (`reconnects`: it is `Reconnecting`), a
    reconnect the shape would make is left out of each environment, and the report
    says so.
    """
    started = time.perf_counter()
    chosen = SHAPES_BY_NAME[variant.shape] if shape is None else shape
    cells = []
    notes: dict[str, None] = {}
    for scenario in scenarios:
        for environment in environments or (scenario.environment,):
            config = Config(
                variant, scenario, environment, shape=chosen, appends_locally=appends_locally
            )
            if config.reconnects() and not reconnects:
                notes[
                    f"{chosen.name}: reconnects left out: the adapter drives no "
                    "connection to drop (the explorer covers it)"
                ] = None
            cells.append(check_cell(drivable(config, reconnects), factory, depth))
    return VariantReport(variant, tuple(cells), time.perf_counter() - started, tuple(notes))
