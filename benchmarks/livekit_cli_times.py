"""Wall time of `ackguard livekit --release 1.8.8 --release 1.8.9 --json` per provider.

Runs the command `--repeat` times per provider and prints, per provider, the
median wall seconds, each release's own `seconds` (median), the load average
before and after each run (`os.getloadavg`), and what the report drove: the
interleavings run, those that stepped with the model, and those left out
(`not_driven`), summed over the catalog rows and the audited pairs:

    python benchmarks/livekit_cli_times.py --repeat 3
    python benchmarks/livekit_cli_times.py --provider plugin --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any


def _one(provider: str) -> tuple[float, dict[str, Any], tuple[float, float]]:
    argv = [sys.executable, "-m", "proofs.cli", "livekit", "--provider", provider]
    argv += ["--release", "1.8.8", "--release", "1.8.9", "--json"]
    before = os.getloadavg()[0]
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"exit {done.returncode}: {done.stderr[-2000:]}")
    return wall, json.loads(done.stdout), (before, os.getloadavg()[0])


def _driven(release: dict[str, Any]) -> tuple[int, int, int]:
    rows = [r for r in release["scenarios"] + release["pairs"] if r["applicable"]]
    return (
        sum(r["sequences"] for r in rows),
        sum(r["stepped_with_model"] for r in rows),
        sum(r["not_driven"] for r in rows),
    )


def _rows(release: dict[str, Any]) -> dict[str, int]:
    """Each applicable row's interleavings (what differs between runs, if anything)."""
    return {
        r["scenario"]: r["sequences"]
        for r in release["scenarios"] + release["pairs"]
        if r["applicable"]
    }


def main() -> int:
    """Print the medians; the seconds are wall time on this machine, under its load."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--provider", action="append", choices=("standin", "plugin"))
    args = parser.parse_args()
    for provider in args.provider or ["standin", "plugin"]:
        walls: list[float] = []
        per_release: dict[str, list[float]] = {}
        loads: list[float] = []
        last: dict[str, Any] = {}
        rows: dict[str, list[dict[str, int]]] = {}
        for _ in range(args.repeat):
            wall, report, load = _one(provider)
            walls.append(wall)
            loads.extend(load)
            for release in report["releases"]:
                per_release.setdefault(release["release"], []).append(release["seconds"])
                rows.setdefault(release["release"], []).append(_rows(release))
            last = report
        print(
            f"{provider}: {statistics.median(walls):.1f} s wall (median of {len(walls)}: "
            f"{', '.join(f'{w:.1f}' for w in walls)}), load average "
            f"{min(loads):.1f} to {max(loads):.1f}"
        )
        for release in last["releases"]:
            runs, stepped, left = _driven(release)
            seconds = statistics.median(per_release[release["release"]])
            print(
                f"  {release['release']}: {seconds:.1f} s in the report, {runs} interleavings, "
                f"{stepped} stepped, {left} not driven, as expected: {release['as_expected']}"
            )
            runs_rows = rows[release["release"]]
            for name in sorted({name for each in runs_rows for name in each}):
                counts = [each.get(name) for each in runs_rows]
                if len(set(counts)) > 1:
                    print(f"    {name}: interleavings differ between runs: {counts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
