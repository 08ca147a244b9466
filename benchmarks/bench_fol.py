"""Benchmark of the parameterized proofs (`proofs.engines.fol`).

Run it with

    .venv/bin/python benchmarks/bench_fol.py                 # 5 runs per cell, then the table
    .venv/bin/python benchmarks/bench_fol.py --runs 1 --skip-proofs --k-max 5

It prints Markdown tables (the ones in docs/proofs.md):

1. each parameterized proof: its verdict, the median wall time of `--runs` runs and
   where it goes (sampling the explorer's states, inference on the finite instances,
   the unbounded check), the candidates and the conjuncts kept;
2. the explorer's exhaustive time (median of `--runs`) on K tool pushes beside a user
   turn and a cleanup (the live-context push), lock5-hoisted, K = 2 to `--k-max`,
   beside the parameterized proof for those sites (one proof covers every K).

Both print the load average: this machine is shared, so every figure needs it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from model import (
    ENVIRONMENTS_BY_NAME,
    SITES,
    SITES_BY_NAME,
    VARIANTS_BY_NAME,
    Call,
    Config,
    Environment,
    Invariant,
    Scenario,
)
from proofs.engines.explore import explore
from proofs.engines.fol import Cell, Outcome, prove

CELLS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("three-way", ("tool-outputs",), "base"),
    ("three-way", ("tool-outputs", "user-turn"), "base"),
    ("three-way", ("cleanup", "user-turn"), "base"),
    ("three-way", ("replacement", "tool-outputs"), "base"),
    ("three-way", tuple(site.name for site in SITES), "base"),
    ("lock5-hoisted", ("tool-outputs", "user-turn", "cleanup"), "base"),
)


def _cell(variant: str, sites: tuple[str, ...], environment: str) -> Cell:
    return Cell(
        VARIANTS_BY_NAME[variant],
        tuple(SITES_BY_NAME[s] for s in sites),
        ENVIRONMENTS_BY_NAME[environment],
    )


def proof_rows(runs: int) -> list[str]:
    rows = [
        "| variant | sites | environment | verdict | median s | sample / houdini / check s "
        "| candidates | conjuncts |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    print("\n".join(rows), flush=True)
    for variant, sites, environment in CELLS:
        outcomes: list[Outcome] = []
        walls: list[float] = []
        for _ in range(runs):
            started = time.perf_counter()
            outcomes.append(prove(_cell(variant, sites, environment)))
            walls.append(time.perf_counter() - started)
        last = outcomes[-1]
        parts = " / ".join(
            f"{last.seconds.get(k, 0.0):.1f}" for k in ("sample", "houdini", "check")
        )
        rows.append(
            f"| {variant} | {', '.join(sites)} | {environment} | {last.status} "
            f"| {statistics.median(walls):.1f} | {parts} | {last.candidates} "
            f"| {len(last.invariant)} |"
        )
        print(rows[-1], flush=True)
    return rows


def k_scenario(k: int) -> Scenario:
    calls = [Call("tool-outputs", adds=(f"out{n}",)) for n in range(k)]
    calls += [Call("user-turn", adds=("hello",)), Call("cleanup", drops=("asst1",))]
    return Scenario(
        name=f"k{k}",
        summary="K tool pushes beside a user turn and a cleanup",
        calls=tuple(calls),
        server=("msg0", "asst1"),
        local=("msg0",),
    )


def explore_median(config: Config, runs: int) -> tuple[int, float, str]:
    """The explorer (`proofs.engines.explore`, compact states and symmetry) over every
    state of `config`, invariant 1 checked on each: states, median seconds, verdict."""
    walls = []
    result = explore(config, (Invariant.NO_UNINTENDED_DELETE,))
    for _ in range(runs):
        started = time.perf_counter()
        result = explore(config, (Invariant.NO_UNINTENDED_DELETE,))
        walls.append(time.perf_counter() - started)
    verdict = result.finding(Invariant.NO_UNINTENDED_DELETE).verdict.value
    return result.states, statistics.median(walls), verdict


def table_rows(runs: int, k_max: int = 7) -> list[str]:
    """The issue's table: K tool pushes beside a user turn and a cleanup, lock5-hoisted,
    base; the explorer per K beside the parameterized proof (one proof for every K)."""
    variant = VARIANTS_BY_NAME["lock5-hoisted"]
    cell = _cell("lock5-hoisted", ("tool-outputs", "user-turn", "cleanup"), "base")
    walls = []
    outcome = prove(cell)
    for _ in range(runs):
        started = time.perf_counter()
        outcome = prove(cell)
        walls.append(time.perf_counter() - started)
    proof = f"{outcome.status}, {statistics.median(walls):.1f} (one proof, every K)"
    rows = [
        "| K | explorer states | explorer s (median) | explorer verdict | parameterized proof s |",
        "| --- | --- | --- | --- | --- |",
    ]
    print("\n".join(rows), flush=True)
    for k in range(2, k_max + 1):
        config = Config(variant, k_scenario(k), Environment())
        states, seconds, verdict = explore_median(config, runs)
        rows.append(f"| {k} | {states} | {seconds:.2f} | {verdict} | {proof} |")
        print(rows[-1], flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--k-max", type=int, default=7)
    parser.add_argument("--skip-proofs", action="store_true")
    parser.add_argument("--skip-table", action="store_true")
    args = parser.parse_args()
    if not args.skip_proofs:
        proof_rows(args.runs)
    if not args.skip_table:
        print(f"load average before the table: {os.getloadavg()}", flush=True)
        table_rows(args.runs, args.k_max)
        print(f"load average after the table: {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
