"""Every multiset of site calls of a given size, under every environment option,
for the variants that should hold: does any of them fail?

The catalog's scenarios have one or two calls; this widens the bound. It prints
one line per combination and a summary; exit 1 when a variant expected to hold
everywhere (by default `three-way`) fails anywhere.

    python benchmarks/stress_model.py --calls 2
    python benchmarks/stress_model.py --calls 3 --variant three-way --variant lock5
    python benchmarks/stress_model.py --calls 3 --compare-symmetry --environment timeouts

With `--compare-symmetry`, every combination is explored with and without
symmetry reduction as well, and a combination whose verdicts or shortest depths
differ is a failure (the comparison of tests/proofs/test_explore_symmetry.py,
over any environment and bound).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time

from _calls import CALLS, combination

from model import VARIANTS_BY_NAME, Config, Scenario, Verdict, parse_environment
from proofs.engines.explore import explore


def scenario(names: tuple[str, ...]) -> Scenario:
    return combination(names, "stress", server_pool=("srv1",))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2, help="calls per combination")
    parser.add_argument("--variant", action="append", help="default: three-way")
    parser.add_argument("--environment", default="all", help="default: all")
    parser.add_argument("--compare-symmetry", action="store_true")
    args = parser.parse_args()
    environment = parse_environment(args.environment)
    variants = [VARIANTS_BY_NAME[name] for name in (args.variant or ["three-way"])]
    started = time.perf_counter()
    failures = 0
    largest = 0
    combos = [
        names
        for names in itertools.combinations_with_replacement(sorted(CALLS), args.calls)
        if names.count("cleanup") <= 1
    ]
    for names in combos:
        for variant in variants:
            config = Config(variant, scenario(names), environment)
            result = explore(config)
            largest = max(largest, result.states)
            if args.compare_symmetry:
                plain = explore(config, symmetry=False)
                if [(f.verdict, f.depth) for f in plain.findings] != [
                    (f.verdict, f.depth) for f in result.findings
                ]:
                    print(f"SYMMETRY CHANGES A VERDICT OR DEPTH: {variant.name} {names}")
                    failures += 1
            broken = [f for f in result.findings if f.verdict is Verdict.COUNTEREXAMPLE]
            status = "holds" if not broken else "FAILS"
            print(f"{variant.name:14} {'+'.join(names):28} {result.states:8} states  {status}")
            for finding in broken:
                assert finding.violation is not None and finding.trace is not None
                print(f"    {finding.violation.describe()}")
                print("    " + ", ".join(move.label() for move in finding.trace.moves))
                if variant.name == "three-way":
                    failures += 1
            sys.stdout.flush()
    seconds = time.perf_counter() - started
    print(
        f"{len(combos)} combinations x {len(variants)} variants, largest {largest} states, "
        f"{seconds:.1f} s, failures (three-way, or symmetry changing an answer): {failures}"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
