"""The explorer over the catalog, per session shape: every (variant, scenario,
environment) of the verdict table for each shape, and the largest single cell.

The `openai` and `three-way` shapes run on the compact encoding except under
`reconnects` (and so `all`); the other shapes run on readable states
(`compact.unsupported`). Each figure is the median of `--runs` runs in this
process; print `uptime` beside it, since the machine may be shared.

    python benchmarks/bench_shapes.py            # 5 runs
    python benchmarks/bench_shapes.py --runs 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from model import CONFIGURATIONS, ENVIRONMENTS, SCENARIOS, SHAPES, Config
from proofs.engines.compact import unsupported
from proofs.engines.explore import explore


def shape_seconds(shape: str) -> tuple[float, int, tuple[str, float, int]]:
    """Seconds for every cell of `shape`, its cells, and its slowest cell."""
    started = time.perf_counter()
    cells = 0
    slowest = ("", 0.0, 0)
    for variant, candidate in CONFIGURATIONS:
        if candidate.name != shape:
            continue
        for scenario in SCENARIOS:
            for environment in ENVIRONMENTS:
                config = Config(variant, scenario, environment, shape=candidate)
                one = time.perf_counter()
                result = explore(config)
                took = time.perf_counter() - one
                cells += 1
                if took > slowest[1]:
                    where = (
                        f"{variant.name}/{scenario.name}/{environment.name}"
                        f" ({'readable' if unsupported(config) else 'compact'})"
                    )
                    slowest = (where, took, result.states)
    return time.perf_counter() - started, cells, slowest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} at the start, {args.runs} runs, medians")
    for shape in SHAPES:
        runs = [shape_seconds(shape.name) for _ in range(args.runs)]
        total = statistics.median(run[0] for run in runs)
        slow = statistics.median(run[2][1] for run in runs)
        where, _, states = runs[0][2]
        print(
            f"{shape.name:13} {runs[0][1]:4} cells {total:6.2f} s; slowest {where}: "
            f"{slow:.2f} s, {states} states"
        )
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
