"""State counts and shortest violations of the readable model over the catalog.

For every catalog variant, scenario and environment column given (the
scenario's own by default), a breadth-first search over every reachable state
of `model.successors` prints the number of states and, per invariant, the
depth of the shortest violation ('-': none). Run it on two trees and compare
the outputs to see what a model change costs in states and which verdicts move:

    python benchmarks/local_order_states.py > after.txt
    (cd ../main && python /path/to/benchmarks/local_order_states.py) > before.txt
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import deque

from model import (
    ENVIRONMENTS_BY_NAME,
    SCENARIOS,
    VARIANTS,
    Config,
    Invariant,
    State,
    initial_state,
    successors,
)
from model.invariants import check


def survey(config: Config) -> tuple[int, dict[Invariant, int]]:
    """Every reachable state's count, and the shortest violation depth per invariant."""
    start = initial_state(config)
    depth: dict[State, int] = {start: 0}
    queue = deque([start])
    shortest: dict[Invariant, int] = {}
    while queue:
        state = queue.popleft()
        for invariant in Invariant:
            if invariant not in shortest and check(state, config, invariant) is not None:
                shortest[invariant] = depth[state]
        for _, successor in successors(state, config):
            if successor not in depth:
                depth[successor] = depth[state] + 1
                queue.append(successor)
    return len(depth), shortest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--environment", default="", help="a column name (default: own)")
    args = parser.parse_args()
    total = 0
    started = time.perf_counter()
    for variant in VARIANTS:
        for scenario in SCENARIOS:
            environment = (
                ENVIRONMENTS_BY_NAME[args.environment] if args.environment else scenario.environment
            )
            count, shortest = survey(Config(variant, scenario, environment))
            total += count
            depths = " ".join(
                f"{invariant.value}={shortest.get(invariant, '-')}" for invariant in Invariant
            )
            print(f"{variant.name:14} {scenario.name:36} {count:7} {depths}")
    print(f"total {total} states, {time.perf_counter() - started:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
