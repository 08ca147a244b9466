"""Which cells the parameterized proof settles: a sweep, printed as Markdown rows.

    .venv/bin/python benchmarks/bench_fol_coverage.py three-way     # every environment
    .venv/bin/python benchmarks/bench_fol_coverage.py lock5 lock5-hoisted   # site subsets

For three-way: invariant 1 with all six sites under each environment of
`model.ENVIRONMENTS` (base, each option alone, all). For a locked variant: every
non-empty subset of the six sites, base environment; a subset whose small mixes of
calls break invariant 1 comes out `fails` with the explorer's trace (its scenario
named), the others are proved or unknown. One run per cell, wall seconds.
"""

from __future__ import annotations

import argparse
import time
from itertools import combinations

from model import ENVIRONMENTS, SITES, VARIANTS_BY_NAME, Environment
from proofs.engines.fol import Cell, Outcome, prove


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
        for size in range(1, len(SITES) + 1):
            for sites in combinations(SITES, size):
                print(row(Cell(variant, sites, Environment())), flush=True)


if __name__ == "__main__":
    main()
