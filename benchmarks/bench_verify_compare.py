"""Wall time of the default `ackguard verify` in two checkouts, run in turn so both
see the same load: the median of `--runs` runs each, their ratio, and the load
average before each run (the machine is shared; say the load with any figure).

    .venv/bin/python benchmarks/bench_verify_compare.py --other /work/main --runs 3

Each checkout runs with its own `.venv` (`<checkout>/.venv/bin/ackguard`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def _once(checkout: Path, jobs: int) -> float:
    started = time.perf_counter()
    subprocess.run(
        [str(checkout / ".venv" / "bin" / "ackguard"), "verify", "--json", "--jobs", str(jobs)],
        cwd=checkout,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--other", type=Path, required=True, help="the checkout to compare with")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    times: dict[str, list[float]] = {"this": [], "other": []}
    loads: list[float] = []
    for _ in range(args.runs):
        for name, checkout in (("other", args.other), ("this", HERE)):
            loads.append(os.getloadavg()[0])
            times[name].append(_once(checkout, args.jobs))
    this, other = statistics.median(times["this"]), statistics.median(times["other"])
    print("| checkout | runs (s) | median (s) |")
    print("| --- | --- | --- |")
    for name, checkout in (("other", args.other), ("this", HERE)):
        runs = ", ".join(f"{t:.1f}" for t in times[name])
        print(f"| {checkout} | {runs} | {statistics.median(times[name]):.1f} |")
    print(
        f"\nratio this/other: {this / other:.2f}; 1-minute load average before each run: "
        + ", ".join(f"{load:.1f}" for load in loads)
    )


if __name__ == "__main__":
    main()
