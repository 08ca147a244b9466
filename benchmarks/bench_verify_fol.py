"""What the first-order part costs the default `ackguard verify`.

Run it with

    .venv/bin/python benchmarks/bench_verify_fol.py --runs 5

Each run is the default `ackguard verify --json` of this tree, through a console
script as the README runs it. Per run it prints the wall seconds, the load
average (1 min) before it, the first-order jobs that ran (by default one per
variant whose widest cell has a committed certificate, which checks it once for
every column it covers, and one certificate check per other first-order system)
and the sum of their seconds, read from each cell's `first_order` field (cells
answered by one job are counted once); then the medians. The jobs
run beside the explorer groups on the same workers, so their sum is CPU time
taken from the explorer, not wall time added to the run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_SCRIPT = (
    "import sys\nfrom proofs.cli import main\nif __name__ == '__main__':\n    sys.exit(main())\n"
)


def _run(extra: list[str]) -> tuple[float, int, dict[tuple[str, str, str], float]]:
    """Wall seconds, exit status, and each first-order job's seconds by (variant,
    session, the environment it ran for)."""
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "ackguard"
        script.write_text(_SCRIPT)
        started = time.perf_counter()
        result = subprocess.run(
            [sys.executable, str(script), "verify", "--json", *extra],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - started
    jobs: dict[tuple[str, str, str], float] = {}
    for cell in json.loads(result.stdout or "[]"):
        job = cell.get("first_order")
        if job and job["checked_on"]:
            jobs[(cell["variant"], cell["session"], job["checked_on"])] = job["seconds"]
    return seconds, result.returncode, jobs


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("args", nargs="*", help="more `verify` arguments (after --)")
    args = parser.parse_args()
    walls, sums = [], []
    for run in range(args.runs):
        load = os.getloadavg()[0]
        seconds, code, jobs = _run(args.args)
        total = sum(jobs.values())
        print(
            f"run {run + 1}: {seconds:.1f} s wall (exit {code}, load {load:.2f}), "
            f"{len(jobs)} first-order jobs, {total:.1f} s in them"
        )
        for (variant, session, environment), spent in sorted(jobs.items()):
            print(f"  {variant} / {session} / {environment}: {spent:.2f} s")
        if code == 0:
            walls.append(seconds)
            sums.append(total)
    if walls:
        print(
            f"median over {len(walls)} runs: {statistics.median(walls):.1f} s wall, "
            f"{statistics.median(sums):.1f} s in first-order jobs"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
