"""Benchmark of `ackguard verify`: the full catalog by each method, and how z3 scales.

Run it with

    .venv/bin/python benchmarks/bench_verify.py            # 5 runs of each method, then scaling
    .venv/bin/python benchmarks/bench_verify.py --runs 1 --cap 120
    .venv/bin/python benchmarks/bench_verify.py --baseline --skip-scaling --skip-alone

It prints Markdown tables (the ones in docs/proofs.md):

1. the full verify (every variant x invariant x environment over every scenario, one
   worker process per core) by the default method and by `--method bmc`, run in turn
   so that both see the same load: median wall time of `--runs` runs each, their
   ratio, and for the default method the seconds its explorer groups and its
   first-order proofs took (summed over jobs: what dominates); with `--baseline`,
   also bmc without sharing the check of variants that are the same model; then each
   shortest counterexample of the catalog asked for alone (bmc);
2. scaling with the number of items: a tool-output push of k outputs overlapping
   a text user turn; the shortest counterexample (unlocked) and the proof (lock5);
3. scaling with the number of concurrent pushes: 2 to 5 snapshot pushes of one
   item each; the shortest counterexample (unlocked) and the proof (lock5).

Scenarios for 2 and 3 are built on the fly from `model.Call` and `model.Scenario`.
A measurement that runs past `--cap` seconds is reported as unknown.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from model import (
    ENVIRONMENTS,
    SCENARIOS,
    VARIANTS,
    VARIANTS_BY_NAME,
    Call,
    Config,
    Environment,
    Invariant,
    Scenario,
)
from proofs.engines import verdicts
from proofs.engines.smt.bmc import COUNTEREXAMPLE, check_configs
from proofs.engines.smt.simulation import reachable
from proofs.engines.verdicts import DEFAULT_JOBS, expected_verdict

BASE = Environment()
#: snapshot sites that lock5 locks, taken in turn by the pushes of the task series
_LOCKED_SNAPSHOT_SITES = ("tool-outputs", "user-turn", "interrupted-tool-outputs")


def _one_run(jobs: int, method: str, share: bool = True) -> dict[str, Any]:
    """Wall seconds of one full verify, whether it matched, and where the time went."""
    started = time.perf_counter()
    cells = verdicts.run(
        VARIANTS,
        SCENARIOS,
        ENVIRONMENTS,
        tuple(Invariant),
        verdicts.DEFAULT_TIMEOUT,
        jobs,
        method,
        share=share,
    )
    wall = time.perf_counter() - started
    # both invariants of a (variant, environment) share one explorer group; a cell that
    # asked for a first-order proof adds its time
    groups: dict[tuple[str, str], float] = {}
    for cell in cells:
        key = (cell.variant.name, cell.environment.name)
        groups[key] = min(groups.get(key, cell.seconds), cell.seconds)
    proofs = [
        cell.seconds - groups[(cell.variant.name, cell.environment.name)]
        for cell in cells
        if cell.method == "fol"
        or "first-order engine gave" in cell.reason
        or "first-order engine:" in cell.reason
    ]
    return {
        "wall": wall,
        "matched": all(cell.matched for cell in cells),
        "explorer_seconds": sum(groups.values()),
        "proof_seconds": sum(proofs),
        "proofs": len(proofs),
        "every_size": sum(1 for cell in cells if cell.bound == "every size"),
        "counterexamples": sum(1 for cell in cells if cell.verdict == verdicts.COUNTEREXAMPLE),
    }


def _summary(method: str, jobs: int, measured: list[dict[str, Any]]) -> dict[str, Any]:
    walls = [m["wall"] for m in measured]
    last = measured[-1]
    return {
        "method": method,
        "runs": len(measured),
        "jobs": jobs,
        "wall_median": statistics.median(walls),
        "wall_all": walls,
        "matched": all(m["matched"] for m in measured),
        "explorer_seconds": statistics.median(m["explorer_seconds"] for m in measured),
        "proof_seconds": statistics.median(m["proof_seconds"] for m in measured),
        "proofs": last["proofs"],
        "every_size": last["every_size"],
        "counterexamples": last["counterexamples"],
    }


def full_verify(runs: int, jobs: int, baseline: bool) -> list[dict[str, Any]]:
    """The default method, `--method bmc` and (with `baseline`) bmc without sharing, run
    by run in turn so that each sees the same load."""
    kinds = [("default", verdicts.METHOD_DEFAULT, True), ("bmc", verdicts.METHOD_BMC, True)]
    if baseline:
        kinds.append(("bmc, share=False", verdicts.METHOD_BMC, False))
    measured: dict[str, list[dict[str, Any]]] = {name: [] for name, _, _ in kinds}
    for _ in range(runs):
        for name, method, share in kinds:
            measured[name].append(_one_run(jobs, method, share))
            print(f"  {name}: {measured[name][-1]['wall']:.1f} s", file=sys.stderr)
    return [_summary(name, jobs, measured[name]) for name, _, _ in kinds]


def counterexamples_alone(cap: float) -> dict[str, Any]:
    """The time to each shortest counterexample of the catalog asked for alone: one
    (variant, scenario, environment, invariant) on a solver of its own, as a
    reviewer's `ackguard verify` of that one cell would. The full run's figures
    count each group's clock instead, which includes the other environments'
    queries. Variants that are the same model are timed once."""
    seen: set[tuple[Any, Invariant]] = set()
    timed: list[tuple[float, str]] = []
    for variant in VARIANTS:
        for scenario in SCENARIOS:
            for environment in ENVIRONMENTS:
                config = Config(variant, scenario, environment)
                for invariant in Invariant:
                    key = (config.behaviour(), invariant)
                    if expected_verdict(config, invariant) != COUNTEREXAMPLE or key in seen:
                        continue
                    seen.add(key)
                    started = time.perf_counter()
                    (result,) = check_configs([config], (invariant,), timeout=cap)
                    seconds = time.perf_counter() - started
                    assert result.verdict == COUNTEREXAMPLE, result
                    name = (
                        f"{variant.name} / {scenario.name} / {environment.name} / "
                        f"{invariant.value} (depth {result.depth})"
                    )
                    timed.append((seconds, name))
    timed.sort()
    times = [s for s, _ in timed]
    return {
        "counterexamples": len(timed),
        "median": statistics.median(times),
        "under_2s": sum(1 for s in times if s < 2.0),
        "max": times[-1],
        "slowest": [{"seconds": s, "cell": name} for s, name in timed[-5:]],
    }


def items_scenario(outputs: int) -> Scenario:
    return Scenario(
        name=f"{outputs}-outputs",
        summary=f"a push of {outputs} tool outputs overlapping a text user turn",
        calls=(
            Call("tool-outputs", adds=tuple(f"out{i}" for i in range(outputs))),
            Call("user-turn", adds=("hello",)),
        ),
    )


def tasks_scenario(pushes: int) -> Scenario:
    return Scenario(
        name=f"{pushes}-pushes",
        summary=f"{pushes} concurrent snapshot pushes of one item each",
        calls=tuple(
            Call(_LOCKED_SNAPSHOT_SITES[i % len(_LOCKED_SNAPSHOT_SITES)], adds=(f"item{i}",))
            for i in range(pushes)
        ),
    )


def measure(scenario: Scenario, cap: float) -> dict[str, Any]:
    """Shortest counterexample of unlocked, proof of lock5 (by k-induction and by the
    reachable-set invariant), for one scenario (base environment)."""
    row: dict[str, Any] = {
        "scenario": scenario.name,
        "items": len(scenario.items()),
        "tasks": len(scenario.calls),
    }
    for variant, kind, method in (
        ("unlocked", "cex", "k-induction"),
        ("lock5", "proof", "k-induction"),
        ("lock5", "invariant", "invariant"),
    ):
        config = Config(VARIANTS_BY_NAME[variant], scenario, BASE)
        started = time.perf_counter()
        invariants = (Invariant.NO_UNINTENDED_DELETE,) if kind == "cex" else tuple(Invariant)
        results = check_configs([config], invariants, timeout=cap, method=method)
        seconds = time.perf_counter() - started
        verdicts = {r.verdict for r in results}
        row[f"{kind}_seconds"] = seconds
        row[f"{kind}_verdict"] = "/".join(sorted(verdicts))
        row[f"{kind}_depth"] = max((r.depth or 0) for r in results)
        row[f"{kind}_states"] = sum(1 for _ in reachable(config))
    return row


def scaling(scenarios: Sequence[Scenario], cap: float) -> list[dict[str, Any]]:
    rows = []
    for scenario in scenarios:
        row = measure(scenario, cap)
        rows.append(row)
        print(f"  {json.dumps(row)}", file=sys.stderr)
    return rows


def _table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| scenario | items | tasks | shortest counterexample (unlocked) | states | "
        "proof, k-induction (lock5) | proof, reachable-set invariant (lock5) | states |",
        "| --- | ---: | ---: | --- | ---: | --- | --- | ---: |",
    ]
    for row in rows:
        cex = (
            f"{row['cex_seconds']:.2f} s, depth {row['cex_depth']}"
            if row["cex_verdict"] == "counterexample"
            else f"{row['cex_verdict']} after {row['cex_seconds']:.0f} s"
        )
        proof = (
            f"{row['proof_seconds']:.2f} s, k = {row['proof_depth']}"
            if row["proof_verdict"] == "proved"
            else f"{row['proof_verdict']} after {row['proof_seconds']:.0f} s"
        )
        invariant = (
            f"{row['invariant_seconds']:.2f} s"
            if row["invariant_verdict"] == "proved"
            else f"{row['invariant_verdict']} after {row['invariant_seconds']:.0f} s"
        )
        lines.append(
            f"| {row['scenario']} | {row['items']} | {row['tasks']} | {cex} | "
            f"{row['cex_states']} | {proof} | {invariant} | {row['proof_states']} |"
        )
    return "\n".join(lines)


def _print_full(summaries: list[dict[str, Any]]) -> None:
    print("| method | median wall | runs | matched | explorer groups | first-order proofs |")
    print("| --- | ---: | --- | --- | ---: | ---: |")
    for full in summaries:
        proofs = (
            f"{full['proofs']} proofs, {full['proof_seconds']:.1f} s, "
            f"{full['every_size']} cells for every size"
            if full["method"] == "default"
            else "-"
        )
        explorer = f"{full['explorer_seconds']:.1f} s" if full["method"] == "default" else "-"
        print(
            f"| {full['method']} | **{full['wall_median']:.1f} s** | "
            f"{', '.join(f'{w:.1f}' for w in full['wall_all'])} | {full['matched']} | "
            f"{explorer} | {proofs} |"
        )
    ratio = summaries[0]["wall_median"] / summaries[1]["wall_median"]
    print(
        f"\n- ratio of the medians, default over bmc: {ratio:.2f} "
        f"({summaries[0]['jobs']} worker processes)\n"
    )


def _scaling_tables(figures: dict[str, Any], cap: float, max_tasks: int) -> None:
    print("scaling with items ...", file=sys.stderr)
    figures["items"] = scaling([items_scenario(k) for k in range(1, 5)], cap)
    print("## Items (2 tasks, base environment)\n")
    print(_table(figures["items"]) + "\n")
    print("scaling with tasks ...", file=sys.stderr)
    figures["tasks"] = scaling([tasks_scenario(n) for n in range(2, max_tasks + 1)], cap)
    print("## Concurrent pushes (one item each, base environment)\n")
    print(_table(figures["tasks"]) + "\n")


def _print_machine() -> None:
    print(
        f"machine: {os.cpu_count()} CPUs, load average at the end "
        f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="full verify runs (default 5)")
    parser.add_argument("--jobs", type=int, default=DEFAULT_JOBS)
    parser.add_argument("--cap", type=float, default=300.0, help="seconds per measurement")
    parser.add_argument("--max-tasks", type=int, default=5)
    parser.add_argument("--skip-full", action="store_true", help="skip the full verify runs")
    parser.add_argument(
        "--baseline",
        action="store_true",
        help="also run --method bmc without sharing the checks of variants that are the "
        "same model, in turn with the others",
    )
    parser.add_argument("--skip-scaling", action="store_true", help="no scaling tables")
    parser.add_argument(
        "--skip-alone", action="store_true", help="do not time each counterexample alone"
    )
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    figures: dict[str, Any] = {"cpus": os.cpu_count(), "load": os.getloadavg()}
    if not args.skip_full:
        print(f"full verify x {args.runs}, each method in turn ...", file=sys.stderr)
        print(f"load average at the start: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
        figures["full"] = full_verify(args.runs, args.jobs, args.baseline)
        print("## Full verify, by method\n")
        _print_full(figures["full"])
    if not args.skip_alone:
        print("each counterexample alone ...", file=sys.stderr)
        alone = figures["alone"] = counterexamples_alone(args.cap)
        print("## Each shortest counterexample, asked for alone\n")
        print(
            f"- {alone['counterexamples']} counterexamples (variants that are the same model "
            f"once): median {alone['median']:.2f} s, {alone['under_2s']} under 2 s, "
            f"max {alone['max']:.2f} s"
        )
        for slow in alone["slowest"]:
            print(f"  - {slow['seconds']:.2f} s: {slow['cell']}")
        print()
    if not args.skip_scaling:
        _scaling_tables(figures, args.cap, args.max_tasks)
    _print_machine()
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
