"""Where a parameterized proof's time goes, and how fast it is: medians of several runs.

    .venv/bin/python benchmarks/fol_speed.py                  # the cells below, 3 runs each
    .venv/bin/python benchmarks/fol_speed.py --runs 5 --cell three-way:all:base
    .venv/bin/python benchmarks/fol_speed.py --seeded         # each environment of three-way
                                                              # on all sites, seeded by base
    .venv/bin/python benchmarks/fol_speed.py --certified      # a committed certificate's
                                                              # check instead of inference

A cell is `VARIANT:SITES:ENVIRONMENT`, SITES joined by `,` or `all`. Each row gives
the verdict, the median wall seconds of `--runs` runs (each proof in its own z3
contexts, so runs are independent), the last run's split (sampling the explorer's
states and filtering candidates; inference on the finite instance and its core; on the
3-task instance, where the first is not enough; the check with unbounded sorts; a
certificate's check, `--certified`), its counterexamples to induction, conjuncts and
queries. The load average is printed before and after: the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from model import ENVIRONMENTS_BY_NAME, SITES, SITES_BY_NAME, VARIANTS_BY_NAME
from proofs.engines.fol import Cell, Clause, Outcome, prove

CELLS: tuple[str, ...] = (
    "three-way:tool-outputs:base",
    "three-way:cleanup,user-turn:base",
    "lock5:user-turn,tool-outputs:base",
    "three-way:all:base",
)


def cell_of(text: str) -> Cell:
    variant, sites, environment = text.split(":")
    chosen = tuple(SITES) if sites == "all" else tuple(SITES_BY_NAME[s] for s in sites.split(","))
    return Cell(VARIANTS_BY_NAME[variant], chosen, ENVIRONMENTS_BY_NAME[environment])


LIMIT = 300.0
#: Whether a committed certificate may stand in for inference (`--certified`).
CERTIFIED = False


def measure(cell: Cell, runs: int, seed: tuple[Clause, ...] = ()) -> tuple[Outcome, list[float]]:
    walls: list[float] = []
    outcome: Outcome | None = None
    for _ in range(runs):
        started = time.perf_counter()
        outcome = prove(cell, seed=seed, seconds_limit=LIMIT, certified=CERTIFIED)
        walls.append(time.perf_counter() - started)
    assert outcome is not None
    return outcome, walls


def row(label: str, outcome: Outcome, walls: list[float]) -> str:
    keys = ("sample", "houdini", "larger", "check", "certificate")
    split = " / ".join(f"{outcome.seconds.get(k, 0.0):.1f}" for k in keys)
    runs = ", ".join(f"{w:.1f}" for w in walls)
    verdict = outcome.status if not outcome.reason else f"{outcome.status} ({outcome.reason})"
    return (
        f"| {label} | {verdict} | {statistics.median(walls):.1f} ({runs}) | {split} "
        f"| {outcome.ctis} | {len(outcome.invariant)} | {outcome.queries} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cell", action="append", help="VARIANT:SITES:ENVIRONMENT")
    parser.add_argument("--seeded", action="store_true", help="three-way, all sites, per option")
    parser.add_argument("--seconds", type=float, default=300.0, help="inference limit per proof")
    parser.add_argument(
        "--certified", action="store_true", help="check a committed certificate instead"
    )
    args = parser.parse_args()
    global LIMIT, CERTIFIED
    LIMIT = args.seconds
    CERTIFIED = args.certified
    print(f"load average before: {os.getloadavg()}")
    print(
        "| cell | verdict | median s (runs) | sample / infer / 3-task infer / check / "
        "certificate s "
        "| CTIs | conjuncts | queries |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |", flush=True)
    if args.seeded:
        base, walls = measure(cell_of("three-way:all:base"), args.runs)
        print(row("three-way:all:base", base, walls), flush=True)
        for name in ENVIRONMENTS_BY_NAME:
            if name == "base":
                continue
            cell = cell_of(f"three-way:all:{name}")
            outcome, walls = measure(cell, args.runs, base.invariant)
            print(row(f"three-way:all:{name} seeded by base", outcome, walls), flush=True)
    for text in args.cell or (() if args.seeded else CELLS):
        outcome, walls = measure(cell_of(text), args.runs)
        print(row(text, outcome, walls), flush=True)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
