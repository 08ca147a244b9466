"""Which cells the parameterized proof settles: a sweep, printed as Markdown rows.

    .venv/bin/python benchmarks/bench_fol_coverage.py three-way     # every environment
    .venv/bin/python benchmarks/bench_fol_coverage.py lock5 lock5-hoisted   # site subsets

For three-way: invariant 1 with all six sites under each environment of
`model.ENVIRONMENTS` (base, each option alone, all). For a locked variant: every
non-empty subset of the six sites, base environment, first through the explorer on
every mix of up to two calls (`fails` with its shortest trace, the scenario named);
then the parameterized proof runs on the maximal subsets that did not fail. A proof
for a set of sites covers every subset of it: a run whose calls are of fewer sites is
a run of the larger cell. One run per cell, wall seconds.
"""

from __future__ import annotations

import argparse
import time
from itertools import combinations

from model import ENVIRONMENTS, SITES, VARIANTS_BY_NAME, Environment
from proofs.engines.fol import Cell, Outcome, prove
from proofs.engines.fol.proving import shortest_counterexample


def row(cell: Cell) -> str:
    started = time.perf_counter()
    outcome: Outcome = prove(cell)
    wall = time.perf_counter() - started
    sites = ", ".join(site.name for site in cell.sites)
    found = outcome.counterexample
    detail = (
        f"{found.scenario} ({found.trace.depth} moves)"
        if found is not None
        else (f"{len(outcome.invariant)} conjuncts" if outcome.invariant else outcome.reason)
    )
    return (
        f"| {cell.variant.name} | {sites} | {cell.environment.name} | {outcome.status} "
        f"| {wall:.1f} | {detail} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="+")
    args = parser.parse_args()
    print("| variant | sites | environment | verdict | wall s | invariant or trace |")
    print("| --- | --- | --- | --- | --- | --- |", flush=True)
    for name in args.variants:
        variant = VARIANTS_BY_NAME[name]
        if name == "three-way":
            for environment in ENVIRONMENTS:
                print(row(Cell(variant, SITES, environment)), flush=True)
            continue
        holding = []
        for size in range(1, len(SITES) + 1):
            for sites in combinations(SITES, size):
                cell = Cell(variant, sites, Environment())
                started = time.perf_counter()
                found = shortest_counterexample(cell, 2)
                if found is None:
                    holding.append(frozenset(sites))
                    continue
                names = ", ".join(site.name for site in sites)
                print(
                    f"| {name} | {names} | base | fails | {time.perf_counter() - started:.1f} "
                    f"| {found.scenario} ({found.trace.depth} moves) |",
                    flush=True,
                )
        maximal = [s for s in holding if not any(s < other for other in holding)]
        for sites_set in maximal:
            ordered = tuple(site for site in SITES if site in sites_set)
            print(row(Cell(variant, ordered, Environment())), flush=True)


if __name__ == "__main__":
    main()
