"""The explorer against its baseline: K tool pushes beside a user turn and a
live-context push, lock5-hoisted (it holds), exhaustively; and the first
violation of invariant 1 with a stale replacement added (stale-copies on).

Each run is a fresh child process (so peak memory is the run's own); each figure
is the median of `--runs` runs. The baseline is the readable explorer
(`proofs.engines.explore_readable`), run beside the new one with a time limit;
once a K times out, larger K are not tried. The C checker's figures are in
`docs/model.md` (it is not a dependency).

    python benchmarks/bench_explore.py                 # K = 2..7, 3 runs, 120 s limit
    python benchmarks/bench_explore.py --k 6 --k 7 --limit 30

`--groups` times instead the explorer's part of the default `ackguard verify`:
every (variant, environment) group it submits (`settle.explore_group`, with the
mixes it asks for), one after the other in one fresh process, here and at
`--ref` (exported with `git archive`) in turn; it prints each run's CPU seconds
with the load average before it, and the medians.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

ENGINES = ("old", "new")
JOBS = ("exhaustive", "counterexample", "catalog")


def scenario(k: int, stale: bool) -> Any:
    from model import Call, Scenario

    calls = tuple(Call("tool-outputs", adds=(f"out{i}",)) for i in range(k))
    calls += (Call("user-turn", adds=("hello",)), Call("cleanup"))
    if stale:
        calls += (Call("replacement"),)
    return Scenario(f"bench-{k}", "K tool pushes, a user turn, a live-context push", calls)


def child(engine: str, job: str, k: int) -> dict[str, Any]:
    """One run, in this process: seconds, states, verdicts, peak RSS."""
    from model import SCENARIOS, VARIANTS, VARIANTS_BY_NAME, Config, Environment, Invariant
    from proofs.engines.explore import explore
    from proofs.engines.explore_readable import explore_readable

    run = explore if engine == "new" else explore_readable
    variant = VARIANTS_BY_NAME["lock5-hoisted"]
    started = time.perf_counter()
    if job == "catalog":
        states = 0
        for v in VARIANTS:
            for sc in SCENARIOS:
                states += run(Config(v, sc, sc.environment)).states
        verdicts: list[str] = []
        depth = None
    else:
        stale = job == "counterexample"
        config = Config(variant, scenario(k, stale), Environment(stale_copies=stale))
        invariants = (Invariant.NO_UNINTENDED_DELETE,) if stale else tuple(Invariant)
        result = run(config, invariants)
        states = result.states
        verdicts = [f.verdict.value for f in result.findings]
        depth = result.findings[0].depth
    seconds = time.perf_counter() - started
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "seconds": seconds,
        "states": states,
        "verdicts": verdicts,
        "depth": depth,
        "peak_mb": peak_kb / 1024,
    }


def measure(engine: str, job: str, k: int, runs: int, limit: float) -> dict[str, Any] | None:
    """Medians of `runs` child runs; None when one exceeds `limit` seconds."""
    samples = []
    for _ in range(runs):
        try:
            done = subprocess.run(
                [sys.executable, __file__, "--child", engine, job, str(k)],
                capture_output=True,
                text=True,
                timeout=limit,
                check=True,
            )
        except subprocess.TimeoutExpired:
            return None
        samples.append(json.loads(done.stdout))
    first = samples[0]
    return {
        "seconds": statistics.median(s["seconds"] for s in samples),
        "peak_mb": statistics.median(s["peak_mb"] for s in samples),
        "states": first["states"],
        "verdicts": first["verdicts"],
        "depth": first["depth"],
    }


def cell(result: dict[str, Any] | None, limit: float, states: bool = True) -> str:
    if result is None:
        return f"no answer in {limit:.0f} s"
    text = f"{result['seconds']:.3f} s, {result['peak_mb']:.0f} MB"
    return f"{result['states']:,} states, {text}" if states else text


#: The child of `--groups`, run with the tree to time first on `PYTHONPATH`.
_GROUPS = """
import json, time
from attrs import evolve
from model import CONFIGURATIONS, ENVIRONMENTS, SCENARIOS, Invariant
from proofs.engines import settle
from proofs.engines.verdicts import _Default
variants = [evolve(v, shape=s.name) for v, s in CONFIGURATIONS]
d = _Default(variants, SCENARIOS, ENVIRONMENTS, tuple(Invariant), 600.0, None)
started = time.process_time()
for v in d.variants:
    for e in d.environments:
        mixes = d._mixes(e) if d._compact(v, e) else ()
        settle.explore_group(v, e, d.scenarios, d.invariants, d.sites, mixes)
print(json.dumps(time.process_time() - started))
"""


def groups(ref: str, runs: int) -> None:
    """The explorer groups of the default verify, here against `ref`, in turn."""
    import os
    import tempfile
    from pathlib import Path

    from bench_verify_against import ROOT, _export

    with tempfile.TemporaryDirectory() as folder:
        trees = {"here": ROOT, ref: _export(ref, Path(folder))}
        seconds: dict[str, list[float]] = {name: [] for name in trees}
        for run in range(runs):
            for name, tree in trees.items():
                load = os.getloadavg()[0]
                done = subprocess.run(
                    [sys.executable, "-c", _GROUPS],
                    cwd=tree,
                    env=dict(os.environ, PYTHONPATH=str(tree)),
                    capture_output=True,
                    text=True,
                    check=True,
                )
                seconds[name].append(json.loads(done.stdout))
                print(f"run {run + 1} {name}: {seconds[name][-1]:.2f} CPU-s (load {load:.1f})")
    here, there = (statistics.median(seconds[name]) for name in trees)
    print(f"median here {here:.2f} CPU-s, {ref} {there:.2f} CPU-s, ratio {here / there:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, action="append", help="repeatable; default 2..7")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--limit", type=float, default=120.0, help="seconds per baseline run")
    parser.add_argument("--child", nargs=3, metavar=("ENGINE", "JOB", "K"), help=argparse.SUPPRESS)
    parser.add_argument("--groups", action="store_true", help="the verify's explorer groups")
    parser.add_argument("--ref", default="main", help="with --groups: the commit to compare")
    args = parser.parse_args()
    if args.groups:
        groups(args.ref, args.runs)
        return 0
    if args.child:
        engine, job, k = args.child
        print(json.dumps(child(engine, job, int(k))))
        return 0
    ks = args.k or [2, 3, 4, 5, 6, 7]
    print(f"medians of {args.runs} runs; baseline limit {args.limit:.0f} s a run")
    print()
    print(
        "| K | old, exhaustive | new, exhaustive | speed-up "
        "| old, counterexample | new, counterexample | speed-up |"
    )
    print("|---|---|---|---|---|---|---|")
    old_alive = {"exhaustive": True, "counterexample": True}
    for k in ks:
        row: dict[tuple[str, str], dict[str, Any] | None] = {}
        tried: dict[str, bool] = {}
        for job in ("exhaustive", "counterexample"):
            row[("new", job)] = measure("new", job, k, args.runs, 600.0)
            tried[job] = old_alive[job]
            old = measure("old", job, k, args.runs, args.limit) if tried[job] else None
            old_alive[job] = old is not None
            row[("old", job)] = old
            new = row[("new", job)]
            if old is not None and new is not None:
                assert old["verdicts"] == new["verdicts"] and old["depth"] == new["depth"], k
        cells = []
        for job in ("exhaustive", "counterexample"):
            old, new = row[("old", job)], row[("new", job)]
            full = job == "exhaustive"
            ratio = "" if old is None or new is None else f"{old['seconds'] / new['seconds']:.0f}x"
            old_text = cell(old, args.limit, full) if tried[job] else "not run"
            cells += [old_text, cell(new, args.limit, full), ratio]
        print(f"| {k} | " + " | ".join(cells) + " |", flush=True)
    print()
    old = measure("old", "catalog", 0, args.runs, args.limit)
    new = measure("new", "catalog", 0, args.runs, args.limit)
    assert old is not None and new is not None
    print(
        f"default catalog (every variant x scenario, its own environment): "
        f"old {old['seconds']:.3f} s ({old['states']:,} states), "
        f"new {new['seconds']:.3f} s ({new['states']:,} states), "
        f"{old['seconds'] / new['seconds']:.1f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
