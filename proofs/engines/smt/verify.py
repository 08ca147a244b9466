"""The catalog runner behind `ackguard verify --method bmc|invariant`: per-scenario z3
verdicts, grouped for the table (`proofs.engines.verdicts` turns them into its records).

A *cell* of the table is (variant, invariant, environment); its verdict
aggregates the scenarios asked for: a counterexample if any scenario has one
(the shortest, naming its scenario), proved if every scenario is proved, unknown
otherwise. A cell *matches* when every one of its scenarios got the verdict the
catalog expects (`Variant.expected`); unknown never matches.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import signal
from collections.abc import Callable, Hashable, Sequence

import z3
from attrs import frozen

from model import (
    Config,
    Environment,
    Invariant,
    Scenario,
    Variant,
)
from proofs.engines import verdicts
from proofs.engines.smt.bmc import (
    COUNTEREXAMPLE,
    METHOD_KIND,
    PROVED,
    UNKNOWN,
    CellResult,
    check_configs,
    reuse,
)
from proofs.engines.smt.encoding import ENCODED
from proofs.errors import Interrupted


@frozen
class ScenarioVerdict:
    """One (variant, scenario, environment, invariant) with its expectation."""

    result: CellResult
    expected: str

    @property
    def matched(self) -> bool:
        return self.result.verdict == self.expected

    @property
    def scenario(self) -> str:
        return self.result.config.scenario.name


@frozen
class Cell:
    """One row of the verdict table: (variant, invariant, environment) over its scenarios."""

    variant: Variant
    invariant: Invariant
    environment: Environment
    scenarios: tuple[ScenarioVerdict, ...]

    @property
    def verdict(self) -> str:
        verdicts = {s.result.verdict for s in self.scenarios}
        if COUNTEREXAMPLE in verdicts:
            return COUNTEREXAMPLE
        if verdicts == {PROVED}:
            return PROVED
        return UNKNOWN

    @property
    def expected(self) -> str:
        return (
            COUNTEREXAMPLE if any(s.expected == COUNTEREXAMPLE for s in self.scenarios) else PROVED
        )

    @property
    def matched(self) -> bool:
        return all(s.matched for s in self.scenarios)

    @property
    def witness(self) -> ScenarioVerdict | None:
        """The scenario the verdict names: the shortest counterexample, or an unknown."""
        failing = [s for s in self.scenarios if s.result.verdict == COUNTEREXAMPLE]
        if failing:
            return min(failing, key=lambda s: (s.result.depth or 0, s.scenario))
        unknown = [s for s in self.scenarios if s.result.verdict == UNKNOWN]
        return unknown[0] if unknown else None

    @property
    def depth(self) -> int | None:
        witness = self.witness
        if witness is not None:
            return witness.result.depth
        depths = [s.result.depth for s in self.scenarios if s.result.depth is not None]
        return max(depths) if depths else None

    @property
    def method(self) -> str:
        witness = self.witness
        if witness is not None:
            return witness.result.method
        kinds = sorted({s.result.method.split(" ")[0] for s in self.scenarios})
        depths = [s.result.depth for s in self.scenarios if s.result.depth is not None]
        return ", ".join(
            f"{kind} k<={max(depths)}" if kind == METHOD_KIND and depths else kind for kind in kinds
        )

    @property
    def bound(self) -> str:
        """The bounds the verdict covers: per scenario, at most these many."""
        witness = self.witness
        if witness is not None:
            return witness.result.bound
        return _widest([s.result.bound for s in self.scenarios])

    @property
    def seconds(self) -> float:
        return sum(s.result.seconds for s in self.scenarios)


def _widest(bounds: Sequence[str]) -> str:
    """ "items=3 tasks=2 pool=0" bounds, summed up as their maxima: "items<=4 ..."."""
    widest: dict[str, int] = {}
    for bound in bounds:
        for part in bound.split():
            name, _, value = part.partition("=")
            widest[name] = max(widest.get(name, 0), int(value))
    return " ".join(f"{name}<={value}" for name, value in widest.items())


expected_verdict = verdicts.expected_verdict
#: `ackguard verify`'s time limit per (variant, scenario), and its worker processes (each
#: takes about 100 MB at most): the same as the default method's.
DEFAULT_TIMEOUT = verdicts.DEFAULT_TIMEOUT
DEFAULT_JOBS = verdicts.DEFAULT_JOBS


def run(
    variants: Sequence[Variant],
    scenarios: Sequence[Scenario],
    environments: Sequence[Environment],
    invariants: Sequence[Invariant] = ENCODED,
    timeout: float = DEFAULT_TIMEOUT,
    jobs: int = DEFAULT_JOBS,
    method: str = METHOD_KIND,
    share: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> list[Cell]:
    """Check every (variant, scenario, environment, invariant) and group them in cells.

    Each (variant, scenario) runs in a worker process of its own, even with
    `jobs=1` (see `_fresh_processes`): a script that calls this needs the
    `if __name__ == "__main__":` guard that multiprocessing asks for.

    With `share`, a (variant, scenario) that is the same model as one before it
    (equal `Config.behaviour` in every environment: the variants differ only at
    sites the scenario does not call) is not checked again; it takes that one's
    verdicts, its traces replayed (`bmc.reuse`).

    `progress(done, total)` is called as each (variant, scenario) finishes.

    Ctrl-C stops the workers at once and raises `Interrupted` with every cell,
    each holding only the scenarios checked before it (some none).
    """
    groups: list[list[Config]] = []
    same_as: list[tuple[list[Config], list[Config]]] = []
    first: dict[tuple[Hashable, ...], list[Config]] = {}
    for variant in variants:
        for scenario in scenarios:
            group = [Config(variant, scenario, environment) for environment in environments]
            original = first.setdefault(tuple(c.behaviour() for c in group), group)
            if share and original is not group:
                same_as.append((group, original))
            else:
                groups.append(group)
    # the largest scenarios first, so that parallel workers finish together
    groups.sort(key=lambda group: -_size(group[0]))
    results: list[CellResult] = []
    pool = concurrent.futures.ProcessPoolExecutor(
        jobs, mp_context=_fresh_processes(), max_tasks_per_child=1, initializer=_worker_start
    )
    futures: list[concurrent.futures.Future[list[CellResult]]] = []
    try:
        futures = [
            pool.submit(check_configs, group, tuple(invariants), timeout, 200, method)
            for group in groups
        ]
        for done, _ in enumerate(concurrent.futures.as_completed(futures), start=1):
            if progress is not None:
                progress(done, len(futures))
    except KeyboardInterrupt:
        finished = [f for f in futures if f.done() and not f.cancelled() and not f.exception()]
        _stop(pool, futures)
        for future in finished:
            results.extend(future.result())
        partial = _with_reused(results, same_as, invariants)
        raise Interrupted(cells_of(partial, variants, environments, invariants)) from None
    pool.shutdown()
    for future in futures:  # in submission order, whatever order they finished in
        results.extend(future.result())
    return cells_of(_with_reused(results, same_as, invariants), variants, environments, invariants)


def _with_reused(
    results: list[CellResult],
    same_as: Sequence[tuple[list[Config], list[Config]]],
    invariants: Sequence[Invariant],
) -> list[CellResult]:
    """`results`, and those of each group that is the same model as a checked one."""
    found = {(result.config, result.invariant): result for result in results}
    reused = [
        reuse(found[(checked, inv)], config)
        for group, original in same_as
        for config, checked in zip(group, original, strict=True)
        for inv in invariants
        if (checked, inv) in found
    ]
    return results + reused


def _worker_start() -> None:
    """A worker leaves Ctrl-C to the parent, which stops it (`_stop`).

    A terminal sends SIGINT to the whole process group. A worker that took it
    would have z3 cancel its query, which reads as a cell that ran out of time,
    and Python might print a traceback from inside z3's objects; so workers
    ignore it, and z3 does not listen for it either.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    z3.set_param("ctrl_c", False)


def _stop(
    pool: concurrent.futures.ProcessPoolExecutor,
    futures: Sequence[concurrent.futures.Future[list[CellResult]]],
) -> None:
    """Cancel what has not started and end the workers at once: a z3 query does
    not return to Python before its time limit, so waiting for one could take
    minutes. The executor has no public handle on its processes; `_processes`
    is where it keeps them (CPython 3.11 to 3.13). Once a worker is gone the
    executor counts itself broken and ends the rest, so the shutdown after it,
    which waits for that, is quick (and races no thread of the executor's)."""
    for future in futures:
        future.cancel()
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)


def _fresh_processes() -> multiprocessing.context.BaseContext:
    """Each (variant, scenario) runs in a process of its own, started clean.

    Among equally short counterexamples, the one z3 returns depends on every term
    its context has built before; a worker that checked other groups first may
    return another. One fresh process per group makes each verdict and trace a
    function of its group alone, whatever `--jobs` and the order of the work, so
    `docs/variants.md` can be compared with what the code produces now. A fork
    server that has imported z3 and the encoding keeps the start of each under
    0.1 s where it exists (Linux, macOS); elsewhere each is spawned.
    """
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["proofs.engines.smt.bmc"])
    return context


def _size(config: Config) -> int:
    scenario = config.scenario
    return len(scenario.calls) * 100 + len(scenario.items())


def cells_of(
    results: Sequence[CellResult],
    variants: Sequence[Variant],
    environments: Sequence[Environment],
    invariants: Sequence[Invariant],
) -> list[Cell]:
    cells = []
    for variant in variants:
        for invariant in invariants:
            for environment in environments:
                mine = tuple(
                    ScenarioVerdict(result, expected_verdict(result.config, invariant))
                    for result in results
                    if result.config.variant == variant
                    and result.invariant is invariant
                    and result.config.environment == environment
                )
                cells.append(Cell(variant, invariant, environment, mine))
    return cells
