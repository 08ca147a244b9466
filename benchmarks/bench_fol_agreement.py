"""Invariant 2 (agreement at rest) for three-way, first-order: refusals the explorer sees,
each committed certificate against the explorer's states, and each check timed.

    .venv/bin/python benchmarks/bench_fol_agreement.py [--calls 3] [--runs 5]
    .venv/bin/python benchmarks/bench_fol_agreement.py --count-only
    .venv/bin/python benchmarks/bench_fol_agreement.py --skip-count --only base --calls 2
    .venv/bin/python benchmarks/bench_fol_agreement.py --write ENV [--seed ENV,...]

Per environment column: on every catalog scenario and every mix of up to `--calls` calls
of the six sites (default and lean mixes; one call for `all`), how many states the
explorer reaches, how many are at rest, how many have a create at the head of the server's
FIFO that the server would refuse for its anchor (or, for a function output, for want of a
function call), how many have an item refused for a deleted anchor (`State.refused`), and
how many break invariant 2 with and without the assumption that a replacement drops only
items of its copy (`fol.agreement_z3.ASSUMPTION`). Then each certificate in
`proofs/engines/fol/certificates/agreement-at-rest/`: every mapped state satisfies every
conjunct, and `agreement.check` (every size) in medians of `--runs` (wall and CPU s), with
the load average. Exits 1 when a certificate fails either. `--write ENV` infers the
certificate of one column instead (`agreement.prove_agreement`, seeded by `--seed`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from model import SCENARIOS, SITES, VARIANTS_BY_NAME, Config, OpKind, State, parse_environment
from model import agreement_at_rest as model_check
from model.moves import _unanchored
from proofs.engines.fol import Sample, mixes
from proofs.engines.fol import agreement as ag
from proofs.engines.fol.data import config_of
from proofs.engines.fol.system import Cell

COLUMNS = ("base", "stale-copies", "server-items", "timeouts", "rejections", "all")
THREE_WAY = VARIANTS_BY_NAME["three-way"]


def refusable(state: State, config: Config) -> bool:
    """The server's next op is a create it would refuse for its anchor."""
    if not state.to_server:
        return False
    op = state.to_server[0]
    if op.kind is not OpKind.CREATE or op.item in state.server:
        return False
    gone = op.after is not None and op.after not in state.server
    return gone or _unanchored(state, config, op)


def cell_of(column: str) -> Cell:
    return Cell(THREE_WAY, tuple(SITES), parse_environment(column), agreement=True)


def count(column: str, calls: int) -> list[object]:
    cell = cell_of(column)
    env = cell.environment
    scenarios = [
        *SCENARIOS,
        *mixes(cell.sites, calls, env),
        *mixes(cell.sites, calls, env, lean=True),
    ]
    states = rest = heads = refused = broken = kept = 0
    for scenario in scenarios:
        config = config_of(cell, scenario)
        cut = {st for st, _ in ag.reachable_pa(config)}
        for state, _ in ag.reachable_pa(config, assume=False):
            states += 1
            rest += state.at_rest()
            heads += refusable(state, config)
            refused += bool(state.refused)
            if model_check(state, config) is not None:
                broken += 1
                kept += state in cut
    return [column, len(scenarios), states, rest, heads, refused, broken, kept]


def cross_check(cell: Cell, calls: int) -> tuple[int, list[str]]:
    """The certificate on every mapped state, one scenario's states at a time (a sample of
    every state at once would not fit in memory at three calls)."""
    invariant = ag.committed(cell) or ()
    env = cell.environment
    scenarios = [
        *mixes(cell.sites, calls, env, server_drops=True),
        *mixes(cell.sites, calls, env, lean=True),
    ]
    states, broken = 0, set()
    for scenario in [*SCENARIOS, *scenarios]:
        config = config_of(cell, scenario)
        sample = Sample(
            ag.agreement_structure(st, config, cell, pa) for st, pa in ag.reachable_pa(config)
        )
        states += len(sample)
        broken |= {c.name for c in invariant if sample.violated(c)}
    return states, sorted(broken)


def timed(cell: Cell, runs: int) -> tuple[list[float], list[float], bool, int]:
    invariant = ag.committed(cell) or ()
    walls, cpus, ok, queries = [], [], True, 0
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        result = ag.check(cell, invariant)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        ok, queries = ok and result.breaks is None, result.queries
    return walls, cpus, ok, queries


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--count-only", action="store_true")
    parser.add_argument("--skip-count", action="store_true", help="certificates only")
    parser.add_argument("--only", default="", help="columns, joined by ','")
    parser.add_argument("--write", default="", help="infer this column's certificate")
    parser.add_argument("--seed", default="", help="columns whose certificates seed it")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}", flush=True)
    if args.write:
        seed = tuple(c for e in args.seed.split(",") if e for c in ag.committed(cell_of(e)) or ())
        calls = 1 if args.write == "all" else 2
        out = ag.prove_agreement(cell_of(args.write), calls=calls, seed=seed)
        print(args.write, out.status, f"{out.seconds:.1f} s", out.ctis, "CTIs", len(out.invariant))
        if out.status == "proved":
            print(ag.write(cell_of(args.write), out.invariant))
        print(f"load average after: {os.getloadavg()}")
        return 0 if out.status == "proved" else 1
    columns = [c for c in COLUMNS if not args.only or c in args.only.split(",")]
    print(
        "| column | scenarios | states | at rest | refusable heads | refused | "
        "inv 2 broken | broken, assumption kept |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |", flush=True)
    for column in [] if args.skip_count else columns:
        row = count(column, 1 if column == "all" else args.calls)
        print("| " + " | ".join(str(x) for x in row) + " |", flush=True)
    failed = False
    if not args.count_only:
        print(
            "| certificate | conjuncts | states (calls) | broken on states | every size | "
            "check s (runs) | check CPU s | queries |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- | --- |", flush=True)
        for column in columns:
            cell = cell_of(column)
            if ag.committed(cell) is None:
                print(f"| {column} | none | | | | | | |", flush=True)
                continue
            calls = 1 if column == "all" else args.calls
            states, broken = cross_check(cell, calls)
            walls, cpus, ok, queries = timed(cell, args.runs)
            failed = failed or bool(broken) or not ok
            runs = ", ".join(f"{w:.1f}" for w in walls)
            print(
                f"| {column} | {len(ag.committed(cell) or ())} | {states} ({calls}) | "
                f"{', '.join(broken) or 'none'} | {'yes' if ok else 'NO'} | "
                f"{statistics.median(walls):.1f} ({runs}) | {statistics.median(cpus):.2f} | "
                f"{queries} |",
                flush=True,
            )
    print(f"load average after: {os.getloadavg()}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
