"""Sweeps: every mix of up to N calls of some sites, under each variant and
environment, explored; which mixes fail and the smallest failing mix per cell.

A call's shape comes from its site's data alone (`RequestSource`), so a site a
team adds (a site file) sweeps as the catalog's do:

- a mirror-snapshot site adds one fresh item;
- a caller-copy site either adds a fresh note or drops `msg0`, in two shapes;
- a live-context site drops the never-played `asst1`.

Every mix starts at rest, with `msg0` and `asst1` on the server, in the mirror and
in the local context (a live-context call's local update drops `asst1` before its
push, as the real cleanup's caller does), and one item the model may create
(`srv1`). Starting with the local context behind the server instead would make
every replacement fail at its first step, which says nothing about the mix. The work is one job
per (cell, mix), run on any `concurrent.futures.Executor`: a local process pool,
or Dask's (`distributed.Client.get_executor()`); jobs and results are plain
picklable data.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future, as_completed

from attrs import frozen

from model import (
    Call,
    Config,
    Environment,
    Invariant,
    Move,
    RequestSource,
    Scenario,
    Site,
    Variant,
    Verdict,
)
from proofs.engines.explore import explore

SERVER: tuple[str, ...] = ("msg0", "asst1")
LOCAL: tuple[str, ...] = ("msg0", "asst1")
SERVER_POOL: tuple[str, ...] = ("srv1",)


@frozen
class Shape:
    """One kind of call in a mix: a site and what the call adds or drops."""

    label: str
    site: str
    #: The prefix of the one item it adds (numbered by its position), if any.
    adds: str | None = None
    drops: tuple[str, ...] = ()

    def call(self, position: int) -> Call:
        adds = () if self.adds is None else (f"{self.adds}{position}",)
        return Call(self.site, adds, self.drops)


def shapes(sites: Sequence[Site]) -> tuple[Shape, ...]:
    """The call shapes of `sites`, from each one's request source."""
    out: list[Shape] = []
    for site in sites:
        if site.request is RequestSource.MIRROR_SNAPSHOT:
            out.append(Shape(site.name, site.name, adds=f"{site.name}-"))
        elif site.request is RequestSource.CALLER_COPY:
            out.append(Shape(site.name, site.name, adds=f"{site.name}-"))
            out.append(Shape(f"{site.name}(drop msg0)", site.name, drops=("msg0",)))
        else:
            out.append(Shape(f"{site.name}(drop asst1)", site.name, drops=("asst1",)))
    return tuple(out)


def mixes(alphabet: Sequence[Shape], up_to: int) -> Iterator[tuple[Shape, ...]]:
    """Every multiset of 1 to `up_to` shapes, smaller ones first."""
    for size in range(1, up_to + 1):
        yield from itertools.combinations_with_replacement(alphabet, size)


def scenario(mix: Sequence[Shape]) -> Scenario:
    return Scenario(
        name=" + ".join(shape.label for shape in mix),
        summary="a mix of a sweep",
        calls=tuple(shape.call(position) for position, shape in enumerate(mix)),
        server=SERVER,
        local=LOCAL,
        server_pool=SERVER_POOL,
    )


@frozen
class Job:
    variant: Variant
    environment: Environment
    mix: tuple[Shape, ...]
    extra_sites: tuple[Site, ...] = ()


@frozen
class MixResult:
    """What one mix gave: plain data, so that it travels between processes."""

    variant: str
    environment: str
    mix: tuple[str, ...]
    states: int
    seconds: float
    #: (invariant, depth, the violation in words, the moves) per broken invariant.
    broken: tuple[tuple[Invariant, int, str, tuple[Move, ...]], ...]

    @property
    def fails(self) -> bool:
        return bool(self.broken)


def run_job(job: Job) -> MixResult:
    """Explore one mix in one cell (a module-level function, so pools can pickle it)."""
    config = Config(job.variant, scenario(job.mix), job.environment, job.extra_sites)
    result = explore(config)
    broken = []
    for finding in result.findings:
        if finding.verdict is Verdict.COUNTEREXAMPLE:
            assert finding.violation is not None and finding.trace is not None
            broken.append(
                (
                    finding.invariant,
                    finding.trace.depth,
                    finding.violation.describe(),
                    finding.trace.moves,
                )
            )
    return MixResult(
        job.variant.name,
        job.environment.name,
        tuple(shape.label for shape in job.mix),
        result.states,
        result.seconds,
        tuple(broken),
    )


@frozen
class CellResult:
    """One (variant, environment) cell of a sweep: its mixes, the failing ones first-smallest."""

    variant: str
    environment: str
    mixes: int
    states: int
    failing: tuple[MixResult, ...]

    @property
    def smallest(self) -> MixResult | None:
        """The failing mix of fewest calls (then shortest counterexample, then name)."""
        if not self.failing:
            return None
        return min(
            self.failing,
            key=lambda r: (len(r.mix), min(depth for _, depth, _, _ in r.broken), r.mix),
        )


def jobs(
    variants: Sequence[Variant],
    environments: Sequence[Environment],
    alphabet: Sequence[Shape],
    up_to: int,
    extra_sites: tuple[Site, ...] = (),
) -> list[Job]:
    every = list(mixes(alphabet, up_to))
    return [
        Job(variant, environment, mix, extra_sites)
        for variant in variants
        for environment in environments
        for mix in every
    ]


def sweep(
    work: Sequence[Job],
    executor: Executor | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[CellResult]:
    """Run every job (in this process without an executor) and gather them by cell,
    in the order the cells first appear in `work`."""
    results: list[MixResult] = []
    if executor is None:
        for done, job in enumerate(work, 1):
            results.append(run_job(job))
            if progress is not None:
                progress(done, len(work))
    else:
        futures: list[Future[MixResult]] = [executor.submit(run_job, job) for job in work]
        try:
            for done, _ in enumerate(as_completed(futures), 1):
                if progress is not None:
                    progress(done, len(work))
        except BaseException:
            # Ctrl-C: the mixes not started are dropped, so the pool's shutdown waits
            # only for the ones running instead of the whole sweep
            for future in futures:
                future.cancel()
            raise
        results = [future.result() for future in futures]
    cells: dict[tuple[str, str], list[MixResult]] = {}
    for result in results:
        cells.setdefault((result.variant, result.environment), []).append(result)
    return [
        CellResult(
            variant,
            environment,
            len(rows),
            sum(row.states for row in rows),
            tuple(row for row in rows if row.fails),
        )
        for (variant, environment), rows in cells.items()
    ]
