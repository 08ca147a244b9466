"""Benchmark of `ackguard verify` (z3): the full catalog, and how it scales.

Run it with

    .venv/bin/python benchmarks/bench_verify.py            # 5 full runs, then scaling
    .venv/bin/python benchmarks/bench_verify.py --runs 1 --cap 120
    .venv/bin/python benchmarks/bench_verify.py --baseline --skip-scaling

It prints Markdown tables (the ones in docs/proofs.md):

1. the full default verify (every variant x invariant x environment over every
   scenario, one worker process per core): median wall time and CPU time of `--runs` runs,
   and the distribution of the time each counterexample took; with `--baseline`,
   the same without sharing the check of variants that are the same model, in turn;
   then each shortest counterexample of the catalog asked for alone;
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
import resource
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
from proofs.engines.smt.bmc import COUNTEREXAMPLE, check_configs
from proofs.engines.smt.simulation import reachable
from proofs.engines.smt.verify import DEFAULT_JOBS, DEFAULT_TIMEOUT, Cell, expected_verdict, run

BASE = Environment()
#: snapshot sites that lock5 locks, taken in turn by the pushes of the task series
_LOCKED_SNAPSHOT_SITES = ("tool-outputs", "user-turn", "interrupted-tool-outputs")


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def _workers_cpu(cells: list[Cell]) -> float:
    """The CPU of the worker processes: each (variant, scenario) group's last verdict
    carries its process's total (the workers are the fork server's children, so
    `getrusage` here does not see them)."""
    per_group: dict[tuple[str, str], float] = {}
    for cell in cells:
        for verdict in cell.scenarios:
            result = verdict.result
            key = (result.config.variant.name, result.config.scenario.name)
            per_group[key] = max(per_group.get(key, 0.0), result.cpu_seconds)
    return sum(per_group.values())


def full_verify(runs: int, jobs: int) -> dict[str, Any]:
    return _summary(jobs, True, [_one_full_run(jobs, share=True) for _ in range(runs)])


def _one_full_run(jobs: int, share: bool) -> tuple[float, float, bool, list[float]]:
    """Wall and CPU seconds of one full verify, whether it matched, and the time to
    each counterexample."""
    cpu, started = _cpu(), time.perf_counter()
    cells = run(
        VARIANTS, SCENARIOS, ENVIRONMENTS, tuple(Invariant), DEFAULT_TIMEOUT, jobs, share=share
    )
    wall = time.perf_counter() - started
    cex_seconds = sorted(
        verdict.result.seconds
        for cell in cells
        for verdict in cell.scenarios
        if verdict.result.verdict == COUNTEREXAMPLE
    )
    matched = all(cell.matched for cell in cells)
    return wall, _cpu() - cpu + _workers_cpu(cells), matched, cex_seconds


def _summary(
    jobs: int, share: bool, measured: list[tuple[float, float, bool, list[float]]]
) -> dict[str, Any]:
    walls = [wall for wall, _, _, _ in measured]
    cex_seconds = measured[-1][3]
    return {
        "runs": len(measured),
        "jobs": jobs,
        "share": share,
        "wall_median": statistics.median(walls),
        "wall_all": walls,
        "cpu_median": statistics.median(cpu for _, cpu, _, _ in measured),
        "matched": all(matched for _, _, matched, _ in measured),
        "counterexamples": len(cex_seconds),
        "cex_median": statistics.median(cex_seconds) if cex_seconds else None,
        "cex_max": cex_seconds[-1] if cex_seconds else None,
        "cex_under_2s": sum(1 for s in cex_seconds if s < 2.0),
    }


def full_verify_against_baseline(runs: int, jobs: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Full verify as it is, and with every (variant, scenario) checked even when it
    is the same model as another (`share=False`), run by run in turn so that both
    see the same load."""
    shared, alone = [], []
    for _ in range(runs):
        shared.append(_one_full_run(jobs, share=True))
        alone.append(_one_full_run(jobs, share=False))
    return _summary(jobs, True, shared), _summary(jobs, False, alone)


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


def _print_full(full: dict[str, Any]) -> None:
    print(f"- runs: {full['runs']}, worker processes: {full['jobs']}")
    print(
        f"- median wall time: {full['wall_median']:.1f} s "
        f"(all: {', '.join(f'{w:.1f}' for w in full['wall_all'])})"
    )
    print(f"- median CPU time (all processes): {full['cpu_median']:.1f} s")
    print(f"- every verdict matched the catalog: {full['matched']}")
    print(
        f"- counterexamples: {full['counterexamples']}, time to each (its group's clock): "
        f"median {full['cex_median']:.2f} s, max {full['cex_max']:.2f} s, "
        f"{full['cex_under_2s']} under 2 s\n"
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
        help="also run verify without sharing the checks of variants that are the same "
        "model, run by run in turn, and print the ratio",
    )
    parser.add_argument("--skip-scaling", action="store_true", help="no scaling tables")
    parser.add_argument(
        "--skip-alone", action="store_true", help="do not time each counterexample alone"
    )
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    figures: dict[str, Any] = {"cpus": os.cpu_count(), "load": os.getloadavg()}
    if not args.skip_full:
        print(f"full verify x {args.runs} ...", file=sys.stderr)
        if args.baseline:
            full, baseline = full_verify_against_baseline(args.runs, args.jobs)
            figures["baseline"] = baseline
        else:
            full = full_verify(args.runs, args.jobs)
        figures["full"] = full
        print("## Full default verify\n")
        _print_full(full)
        if args.baseline:
            print("## Baseline: every (variant, scenario) checked, same model or not\n")
            _print_full(baseline)
            print(
                f"- ratio of the medians, default over baseline: wall "
                f"{full['wall_median'] / baseline['wall_median']:.2f}, CPU "
                f"{full['cpu_median'] / baseline['cpu_median']:.2f}\n"
            )
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
