"""Every committed certificate checked for every size and against the explorer, timed.

    .venv/bin/python benchmarks/bench_fol_certificates.py [--runs 5] [--calls 3]
    .venv/bin/python benchmarks/bench_fol_certificates.py --calls 0   # the checks alone
    .venv/bin/python benchmarks/bench_fol_certificates.py --shrink   # rewrite each one smaller

For each file in `proofs/engines/fol/certificates/`: `certificate.check` (initiation,
consecution per (action, conjunct), enabledness, sorts unbounded) and the cross-check
(every state the explorer reaches on every mix of up to `--calls` calls, mapped to the
relations, satisfies every conjunct; two calls for cells of more than `--wide` sites;
`--calls 0` skips it, for timing the checks alone).
Exits 1 when a certificate fails either, so it
doubles as the check of the certificates the tests do not load (they check lock5
{user-turn, cleanup} only, for time). Medians of `--runs` runs (wall and CPU seconds of
the check, the CPU figure being the steadier one on a shared machine), with the load
average.
`--shrink` first rewrites each certificate as `shrink.minimal` of itself (the part
still inductive with the sorts unbounded), then checks what it wrote. Last, each
certificate of a cell with every option the engine reads is timed as the default
`verify` asks it: one `fol.prove_covered` job over every column of `model.ENVIRONMENTS`
whose first-order system it contains (the containment check alone too).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from model import ENVIRONMENTS, SITES_BY_NAME, VARIANTS_BY_NAME, Environment
from proofs.engines.fol import (
    PROVED,
    Cell,
    Sample,
    coverage,
    mixes,
    prove_covered,
    reachable,
    structure,
    widest,
)
from proofs.engines.fol.certificate import DIRECTORY, check, key, loads, write
from proofs.engines.fol.cover import containments
from proofs.engines.fol.data import config_of
from proofs.engines.fol.shrink import minimal


def cell_of(stem: str) -> Cell:
    variant, sites, environment = stem.split("--")[:3]
    return Cell(
        VARIANTS_BY_NAME[variant],
        tuple(SITES_BY_NAME[s] for s in sites.split("+")),
        Environment.of(() if environment == "base" else environment.split("+")),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--wide", type=int, default=4, help="more sites: at most 2 calls")
    parser.add_argument("--shrink", action="store_true", help="rewrite each one smaller first")
    parser.add_argument("--only", default="", help="certificates whose name contains this")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    print(
        "| certificate | conjuncts | proof for every size | check s (runs) | check CPU s "
        "| queries | states (calls) | cross-check s |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |", flush=True)
    failed = False
    for path in sorted(DIRECTORY.glob("*.json")):
        if args.only not in path.stem:
            continue
        cell = cell_of(path.stem)
        invariant = loads(path.read_text())
        if args.shrink:
            started = time.perf_counter()
            smaller = minimal(cell, invariant)
            print(
                f"shrunk {path.stem}: {len(invariant)} -> {len(smaller)} conjuncts "
                f"in {time.perf_counter() - started:.1f} s",
                flush=True,
            )
            write(cell, smaller)
            invariant = smaller
        walls, cpus = [], []
        holds = True
        queries = 0
        for _ in range(args.runs):
            started, cpu = time.perf_counter(), time.process_time()
            result = check(cell, invariant)
            walls.append(time.perf_counter() - started)
            cpus.append(time.process_time() - cpu)
            holds = result.breaks is None and holds
            queries = result.queries
        # mixes of three calls of six sites under timeouts are more states than a run
        # of this benchmark can afford; such cells are cross-checked on two
        calls = args.calls if len(cell.sites) <= args.wide else min(args.calls, 2)
        if len(cell.environment.options) > 1:
            # every option at once: two calls of even two sites exceed 6 GB of states
            calls = min(calls, 1)
        started = time.perf_counter()
        sample = Sample(
            structure(state, config_of(cell, scenario), cell)
            for scenario in (
                mixes(cell.sites, calls, cell.environment, server_drops=True) if calls else ()
            )
            for state in reachable(config_of(cell, scenario))
        )
        wrong = [c for c in invariant if sample.violated(c)]
        cross = time.perf_counter() - started
        failed = failed or not holds or bool(wrong)
        runs = ", ".join(f"{w:.1f}" for w in walls)
        verdict = "yes" if holds else "NO"
        if wrong:
            verdict += f"; {len(wrong)} conjuncts false on a reachable state"
        print(
            f"| {path.stem} | {len(invariant)} | {verdict} | {statistics.median(walls):.1f} "
            f"({runs}) | {statistics.median(cpus):.2f} | {queries} | {len(sample)} ({calls}) "
            f"| {cross:.1f} |",
            flush=True,
        )
    failed = _covers(args) or failed
    print(f"load average after: {os.getloadavg()}")
    return 1 if failed else 0


def _covers(args: argparse.Namespace) -> bool:
    """For each certificate of a cell with every option the engine reads: the columns of
    `model.ENVIRONMENTS` it proves through `fol.prove_covered` (one check, and the
    containment of each column's first-order system in its), timed as one job of the
    default `verify`; True when a column is not proved."""
    print()
    print(
        "| covering certificate | columns proved | containment s (CPU) | job s (runs) | job CPU s |"
    )
    print("| --- | --- | --- | --- | --- |", flush=True)
    failed = False
    for path in sorted(DIRECTORY.glob("*.json")):
        cell = cell_of(path.stem)
        if args.only not in path.stem or cell != widest(cell):
            continue
        columns = list({key(c): c for c in reversed(_columns(cell))}.values())[::-1]
        started, cpu = time.perf_counter(), time.process_time()
        reasons = containments(columns, cell)
        contain = (time.perf_counter() - started, time.process_time() - cpu)
        walls, cpus = [], []
        proved: list[str] = []
        for _ in range(args.runs):
            started, cpu = time.perf_counter(), time.process_time()
            outcomes = prove_covered(columns)
            walls.append(time.perf_counter() - started)
            cpus.append(time.process_time() - cpu)
            proved = [o.cell.environment.name for o in outcomes if o.status == PROVED]
        failed = failed or len(proved) != len(columns) or any(reasons)
        runs = ", ".join(f"{w:.1f}" for w in walls)
        print(
            f"| {path.stem} | {', '.join(proved)} ({len(proved)} of {len(columns)}) "
            f"| {contain[0]:.2f} ({contain[1]:.2f}) | {statistics.median(walls):.1f} ({runs}) "
            f"| {statistics.median(cpus):.2f} |",
            flush=True,
        )
    return failed


def _columns(cell: Cell) -> list[Cell]:
    out = [Cell(cell.variant, cell.sites, env, cell.mutant) for env in ENVIRONMENTS]
    return [c for c in out if not coverage(c)]


if __name__ == "__main__":
    sys.exit(main())
