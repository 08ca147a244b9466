"""Benchmark of the parameterized proofs (`proofs.engines.fol`).

Run it with

    .venv/bin/python benchmarks/bench_fol.py                 # 3 runs per cell, then the table
    .venv/bin/python benchmarks/bench_fol.py --runs 1 --cap 60 --skip-table

It prints Markdown tables (the ones in docs/proofs.md):

1. each parameterized proof: its verdict, the median wall time of `--runs` runs and
   where it goes (sampling the explorer's states, Houdini on the finite instance, the
   unbounded check), the candidates and the conjuncts kept;
2. the explorer's exhaustive time on K tool pushes beside a user turn and a cleanup
   (the live-context push), lock5-hoisted, K = 2 to 7, each stopped after `--cap`
   seconds, beside the parameterized proof for those sites (every K at once).
"""

from __future__ import annotations

import argparse
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
    initial_state,
    successors,
)
from proofs.engines.fol import Cell, Outcome, prove

CELLS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("three-way", ("tool-outputs",), "base"),
    ("three-way", ("tool-outputs", "user-turn"), "base"),
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


def explore_capped(config: Config, cap: float) -> tuple[int, float, bool]:
    """Breadth-first over every state (invariant 1 checked on each); stopped at `cap` s."""
    from model import check

    started = time.perf_counter()
    start = initial_state(config)
    seen = {start}
    frontier = [start]
    while frontier:
        nxt = []
        for state in frontier:
            assert check(state, config, Invariant.NO_UNINTENDED_DELETE) is None
            for _, successor in successors(state, config):
                if successor not in seen:
                    seen.add(successor)
                    nxt.append(successor)
            if time.perf_counter() - started > cap:
                return len(seen), time.perf_counter() - started, False
        frontier = nxt
    return len(seen), time.perf_counter() - started, True


def table_rows(cap: float, proof: Outcome | None, proof_seconds: float = 0.0) -> list[str]:
    variant = VARIANTS_BY_NAME["lock5-hoisted"]
    rows = [
        "| K | explorer states | explorer s | parameterized proof s |",
        "| --- | --- | --- | --- |",
    ]
    print("\n".join(rows), flush=True)
    shown_proof = "not run" if proof is None else f"{proof.status}, {proof_seconds:.1f} (every K)"
    for k in range(2, 8):
        config = Config(variant, k_scenario(k), Environment())
        states, seconds, finished = explore_capped(config, cap)
        shown = f"{seconds:.1f}" if finished else f"> {cap:.0f} (stopped)"
        rows.append(f"| {k} | {states}{'' if finished else '+'} | {shown} | {shown_proof} |")
        print(rows[-1], flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cap", type=float, default=120.0)
    parser.add_argument("--skip-proofs", action="store_true")
    parser.add_argument("--skip-table", action="store_true")
    args = parser.parse_args()
    if not args.skip_proofs:
        proof_rows(args.runs)
    if not args.skip_table:
        started = time.perf_counter()
        proof = prove(_cell("lock5-hoisted", ("tool-outputs", "user-turn", "cleanup"), "base"))
        table_rows(args.cap, proof, time.perf_counter() - started)


if __name__ == "__main__":
    main()
