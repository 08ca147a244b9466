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
still inductive with the sorts unbounded), then checks what it wrote.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from model import SITES_BY_NAME, VARIANTS_BY_NAME, Environment
from proofs.engines.fol import Cell, Sample, mixes, reachable, structure
from proofs.engines.fol.certificate import DIRECTORY, check, loads, write
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
    print(f"load average after: {os.getloadavg()}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
