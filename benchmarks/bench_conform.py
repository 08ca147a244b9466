"""Conformance throughput, and what the exhaustive mode costs by depth.

    python benchmarks/bench_conform.py             # everything, medians of 3 runs
    python benchmarks/bench_conform.py --quick     # one run, shallower
    python benchmarks/bench_conform.py --json

Three tables:

1. lockstep throughput per variant: every catalog scenario under every
   environment option at once, exhaustively to `--throughput-depth`. Model
   moves per second counts what the implementation stood for (stimuli plus the
   WAKE and RESUME moves its tasks made on their own), implementation and model
   together (adapter, event loop, abstraction, comparison, both invariant
   checks); "model only" walks the same sequences through the model's successor
   function alone.
2. the exhaustive mode's cost by depth (lock5 and three-way, every scenario,
   every option): sequences, stimuli given (replays included), seconds.
3. scenarios beyond the catalog: every pair of call kinds (as in
   `benchmarks/stress_model.py`), base environment, to full depth.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from _calls import CALLS, combination

from model import (
    INTERNAL_MOVES,
    SCENARIOS,
    VARIANTS,
    VARIANTS_BY_NAME,
    Config,
    Scenario,
    initial_state,
    successors,
)
from model.environment import ALL, BASE
from proofs.adapters.impl import impl_adapter
from proofs.engines.conformance.exhaustive import Exhaustion, exhaust


def pair_scenario(names: tuple[str, ...]) -> Scenario:
    return combination(names, "a pair of call kinds", server_pool=("call1",))


def timed(runs: int, work: Callable[[], Any]) -> tuple[float, Any]:
    """The median CPU time of `runs` runs, and the last result.

    CPU time, not wall time: the work is single-threaded and CPU-bound, and CPU
    time stays put when other processes share the machine."""
    times = []
    result = None
    for _ in range(runs):
        started = time.process_time()
        result = work()
        times.append(time.process_time() - started)
    return statistics.median(times), result


def model_only(config: Config, depth: int) -> int:
    """Walk every stimulus sequence up to `depth` through the model alone, the way
    the exhaustive mode does (each sibling from its own replay); moves made."""
    moves = 0

    def settle(state: Any) -> Any:
        nonlocal moves
        while True:
            internal = [s for m, s in successors(state, config) if m.kind in INTERNAL_MOVES]
            if not internal:
                return state
            moves += 1
            state = internal[0]

    def walk(prefix: list[Any], state: Any) -> None:
        nonlocal moves
        if len(prefix) >= depth:
            return
        stimuli = [(m, s) for m, s in successors(state, config) if m.kind not in INTERNAL_MOVES]
        for position, (move, successor) in enumerate(stimuli):
            if position < len(stimuli) - 1:
                replay = settle(initial_state(config))
                for earlier in prefix:
                    replay = settle(next(s for m, s in successors(replay, config) if m == earlier))
                    moves += 1
            moves += 1
            walk([*prefix, move], settle(successor))

    walk([], settle(initial_state(config)))
    return moves


def throughput(runs: int, depth: int) -> list[dict[str, Any]]:
    rows = []
    for variant in VARIANTS:
        configs = [Config(variant, scenario, ALL) for scenario in SCENARIOS]

        def conform(configs: list[Config] = configs) -> list[Exhaustion]:
            return [exhaust(config, depth, impl_adapter) for config in configs]

        def model(configs: list[Config] = configs) -> int:
            return sum(model_only(config, depth) for config in configs)

        seconds, results = timed(runs, conform)
        model_seconds, model_moves = timed(runs, model)
        moves = sum(r.model_moves for r in results)
        rows.append(
            {
                "variant": variant.name,
                "sequences": sum(r.sequences for r in results),
                "stimuli": sum(r.stimuli for r in results),
                "model_moves": moves,
                "cpu_seconds": round(seconds, 3),
                "moves_per_second": round(moves / seconds),
                "model_only_moves_per_second": round(model_moves / model_seconds),
                "mismatches": sum(len(r.mismatches) for r in results),
            }
        )
    return rows


def by_depth(runs: int, depths: range) -> list[dict[str, Any]]:
    rows = []
    for name in ("lock5", "three-way"):
        for depth in depths:
            configs = [Config(VARIANTS_BY_NAME[name], scenario, ALL) for scenario in SCENARIOS]

            def work(configs: list[Config] = configs, depth: int = depth) -> list[Exhaustion]:
                return [exhaust(config, depth, impl_adapter) for config in configs]

            seconds, results = timed(runs, work)
            rows.append(
                {
                    "variant": name,
                    "depth": depth,
                    "sequences": sum(r.sequences for r in results),
                    "stimuli": sum(r.stimuli for r in results),
                    "cpu_seconds": round(seconds, 3),
                    "complete": not any(r.truncated for r in results),
                }
            )
    return rows


def wider(runs: int) -> list[dict[str, Any]]:
    rows = []
    pairs = [pair_scenario(p) for p in itertools.combinations_with_replacement(CALLS, 2)]
    for name in ("lock5", "three-way"):
        configs = [Config(VARIANTS_BY_NAME[name], scenario, BASE) for scenario in pairs]

        def work(configs: list[Config] = configs) -> list[Exhaustion]:
            return [exhaust(config, 16, impl_adapter) for config in configs]

        seconds, results = timed(runs, work)
        broken = sorted(
            {f"{r.config.scenario.name}:{inv.value}" for r in results for inv in r.violations}
        )
        rows.append(
            {
                "variant": name,
                "scenarios": len(pairs),
                "sequences": sum(r.sequences for r in results),
                "stimuli": sum(r.stimuli for r in results),
                "mismatches": sum(len(r.mismatches) for r in results),
                "violations": broken,
                "cpu_seconds": round(seconds, 3),
            }
        )
    return rows


def table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    lines = [columns, *[[_cell(row[c]) for c in columns] for row in rows]]
    widths = [max(len(line[i]) for line in lines) for i in range(len(columns))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True))
        for line in lines
    )


def _cell(value: Any) -> str:
    if isinstance(value, list):
        return str(len(value))
    return str(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--throughput-depth", type=int, default=6)
    parser.add_argument("--max-depth", type=int, default=12)
    parser.add_argument("--quick", action="store_true", help="one run, depths up to 8")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    logging.getLogger("impl").setLevel(logging.ERROR)
    runs = 1 if args.quick else args.repeat
    max_depth = min(args.max_depth, 8) if args.quick else args.max_depth
    result: dict[str, Any] = {
        "throughput": throughput(runs, args.throughput_depth),
        "by_depth": by_depth(runs, range(1, max_depth + 1)),
        "wider": wider(runs),
        "runs": runs,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"lockstep throughput, every option at once, depth {args.throughput_depth}")
    print(f"(median of {runs}):")
    print(
        table(
            result["throughput"],
            [
                "variant",
                "sequences",
                "stimuli",
                "model_moves",
                "cpu_seconds",
                "moves_per_second",
                "model_only_moves_per_second",
                "mismatches",
            ],
        )
    )
    print("\nexhaustive cost by depth, every scenario, every option:")
    print(
        table(
            result["by_depth"],
            ["variant", "depth", "sequences", "stimuli", "cpu_seconds", "complete"],
        )
    )
    print("\nevery pair of call kinds, base environment, full depth:")
    print(
        table(
            result["wider"],
            ["variant", "scenarios", "sequences", "stimuli", "mismatches", "cpu_seconds"],
        )
    )
    for row in result["wider"]:
        if row["violations"]:
            # the pairs start with asst1 on the server and not in the local context,
            # so a replacement's copy lacks it: the lock cannot save it (as in the
            # catalog's server-item cell); the model agrees on every one
            print(f"{row['variant']} breaks (the model agrees): {', '.join(row['violations'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
