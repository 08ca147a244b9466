"""Time per scenario and per run of `ackguard livekit --provider plugin` on the
installed livekit-agents release.

Runs every catalog scenario and every audited pair the way the report does
(`check_scenario`, with the sweep), `--repeat` times, and prints per row the
runs (interleavings driven) and the median seconds, then the medians per run.
For the other release run it under that release's `PYTHONPATH` (as
`proofs.adapters.livekit.releases.run_release` does):

    python benchmarks/livekit_plugin_times.py --repeat 3
    PYTHONPATH=.cache/livekit/1.8.8 python benchmarks/livekit_plugin_times.py
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time

from model.scenarios import SCENARIOS
from proofs.adapters.livekit.check import PATHS, _guarded, check_path
from proofs.adapters.livekit.pairs import audited_pairs
from proofs.adapters.livekit.releases import RELEASES_BY_VERSION, installed_version


def main() -> int:
    """Print the table; the seconds are wall time on this machine, under its load."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--provider", default="plugin")
    args = parser.parse_args()
    logging.getLogger("livekit").setLevel(logging.CRITICAL)
    version = installed_version()
    assert version in RELEASES_BY_VERSION, version
    release = RELEASES_BY_VERSION[version]
    paths = [check_path(release, scenario, args.provider) for scenario in PATHS]
    rows = [*SCENARIOS, *audited_pairs(release, paths)]
    total_runs = 0
    total_seconds = 0.0
    print(f"livekit-agents {version}, provider {args.provider}, median of {args.repeat}")
    for scenario in rows:
        seconds = []
        runs = 0
        for _ in range(args.repeat):
            started = time.perf_counter()
            row = _guarded(release, scenario, provider=args.provider)
            seconds.append(time.perf_counter() - started)
            runs = len(row["sweep"]) + len(row["replays"])
        median = statistics.median(seconds)
        total_runs += runs
        total_seconds += median
        per_run = f"{median / runs:.3f}" if runs else "-"
        print(f"{scenario.name:40} runs {runs:3}  {median:6.2f} s  {per_run} s/run")
    print(
        f"{len(rows)} rows, {total_runs} runs, {total_seconds:.1f} s, "
        f"{total_seconds / max(total_runs, 1):.3f} s/run"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
