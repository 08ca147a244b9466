"""Which cells the parameterized proof settles: a sweep, printed as Markdown rows.

    .venv/bin/python benchmarks/bench_fol_coverage.py three-way     # every environment
    .venv/bin/python benchmarks/bench_fol_coverage.py lock5 lock5-hoisted   # site subsets
    .venv/bin/python benchmarks/bench_fol_coverage.py --write lock5   # and certificates
    .venv/bin/python benchmarks/bench_fol_coverage.py --order lock5   # the order relations

For three-way: invariant 1 with all six sites under each environment of
`model.ENVIRONMENTS` (base, each option alone, all; `--environments` picks some), each
other environment seeded by the base proof (or the base cell's committed certificate).
For a locked variant: every non-empty subset of the six sites, base environment, first
through the explorer on every mix of up to `--calls` calls (4 by default; `fails` with
its shortest trace, the scenario named: with two calls, lock5 {user-turn, replacement}
and {user-turn, tool-outputs, cleanup} looked as if they held, and three calls break
both); then the parameterized proof runs on the maximal subsets that did not fail. A
proof for a set of sites covers every subset of it: a run whose calls are of fewer sites
is a run of the larger cell. One run per cell, wall seconds, the load average printed
before and after. `--write` stores each proved invariant as a certificate
(`proofs/engines/fol/certificate.py`), unless the committed certificate of the cell with
every option the engine reads already proves the cell (`fol.cover`: three-way's base and
single-option columns; its server-items certificate stays committed for the tests that
check it); `bench_fol_certificates.py` checks every one for every size, the tests some.
"""

from __future__ import annotations

import argparse
import os
import time
from itertools import combinations

from model import ENVIRONMENTS, SITES, VARIANTS_BY_NAME, Environment
from proofs.engines.fol import PROVED, Cell, Clause, Outcome, contained, prove, run_to, widest
from proofs.engines.fol.certificate import committed, write
from proofs.engines.fol.data import config_of, mixes
from proofs.engines.fol.proving import shortest_counterexample
from proofs.engines.fol.shrink import minimal

WRITE = False
LIMIT = 300.0


def order_checks(variant: str, calls: int) -> None:
    """The ordered first-order system (`Cell(ordered=True)`) against the model: `run_to` a
    mirror out of creation order on {tool-outputs} (2 tasks, 2 items, 8 steps), and every
    move of every mix of up to `calls` calls of {user-turn, cleanup} and of the lean mixes
    of {tool-outputs, replacement} as a step of the system (`simulate.unjoined`)."""
    from model import SITES_BY_NAME
    from proofs.engines.fol import FiniteSorts, Problem, order
    from proofs.engines.fol.simulate import unjoined

    def ordered(names: tuple[str, ...]) -> Cell:
        sites = tuple(SITES_BY_NAME[n] for n in names)
        return Cell(VARIANTS_BY_NAME[variant], sites, Environment(), ordered=True)

    started = time.perf_counter()
    found = run_to(
        Problem(ordered(("tool-outputs",)), FiniteSorts(2, 2)),
        order.MIRROR_BY_CREATION_SETTLED,
        8,
        timeout_ms=600_000,
    )
    depth = None if found is None else found.depth
    print(f"run_to {{tool-outputs}}: {depth} steps, {time.perf_counter() - started:.1f} s")
    for names, lean in ((("user-turn", "cleanup"), False), (("tool-outputs", "replacement"), True)):
        cell = ordered(names)
        for scenario in mixes(cell.sites, calls, cell.environment, lean=lean):
            started = time.perf_counter()
            problem = Problem(cell, FiniteSorts(len(scenario.calls), len(scenario.items())))
            missing = sorted(set(unjoined(problem, config_of(cell, scenario), cell)))
            wall = time.perf_counter() - started
            print(f"{scenario.name}: {wall:.1f} s, moves no action joins: {missing}", flush=True)


def row(cell: Cell, seed: tuple[Clause, ...] = ()) -> str:
    return text(cell, *run(cell, seed))


def run(cell: Cell, seed: tuple[Clause, ...] = ()) -> tuple[Outcome, float]:
    started = time.perf_counter()
    outcome: Outcome = prove(cell, seconds_limit=LIMIT, certified=False, seed=seed)
    wall = time.perf_counter() - started
    if WRITE and outcome.status == PROVED and not _covered(cell):
        # the certificate is the smallest part of the proof that is still inductive with
        # the sorts unbounded: fewer conjuncts, fewer queries in every later check
        write(cell, minimal(cell, outcome.invariant))
    return outcome, wall


def _covered(cell: Cell) -> bool:
    """Whether the committed certificate of the cell with every option the engine reads
    proves this one (`fol.cover`): then a certificate of its own is never asked for."""
    wide = widest(cell)
    return cell != wide and committed(wide) is not None and not contained(cell, wide)


def text(cell: Cell, outcome: Outcome, wall: float) -> str:
    sites = ", ".join(site.name for site in cell.sites)
    found = outcome.counterexample
    detail = (
        f"{found.scenario} ({found.trace.depth} moves)"
        if found is not None
        else (f"{len(outcome.invariant)} conjuncts" if outcome.invariant else outcome.reason)
    )
    return (
        f"| {cell.variant.name} | {sites} | {cell.environment.name} | {outcome.status} "
        f"| {wall:.1f} | {detail} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="+")
    parser.add_argument("--calls", type=int, default=4, help="explorer mixes of up to N calls")
    parser.add_argument("--write", action="store_true", help="write certificates of proofs")
    parser.add_argument("--order", action="store_true", help="the order relations' checks")
    parser.add_argument("--no-proofs", action="store_true", help="the explorer's sweep only")
    parser.add_argument("--seconds", type=float, default=300.0, help="inference limit per cell")
    parser.add_argument(
        "--environments", type=lambda x: x.split(","), default=None, help="three-way: NAME,..."
    )
    args = parser.parse_args()
    global WRITE, LIMIT
    WRITE = args.write
    LIMIT = args.seconds
    print(f"load average before: {os.getloadavg()}")
    if args.order:
        for name in args.variants:
            order_checks(name, args.calls)
        print(f"load average after: {os.getloadavg()}")
        return
    print("| variant | sites | environment | verdict | wall s | invariant or trace |")
    print("| --- | --- | --- | --- | --- | --- |", flush=True)
    for name in args.variants:
        variant = VARIANTS_BY_NAME[name]
        if name == "three-way":
            # every other environment is seeded by the base proof, or the base cell's
            # certificate (a seed changes how fast a proof is found, never what is proved)
            base_cell = Cell(variant, SITES, Environment())
            seed: tuple[Clause, ...] = committed(base_cell) or ()
            for environment in ENVIRONMENTS:
                if args.environments and environment.name not in args.environments:
                    continue
                cell = Cell(variant, SITES, environment)
                outcome, wall = run(cell, seed)
                if environment.name == "base" and outcome.status == PROVED:
                    seed = outcome.invariant
                print(text(cell, outcome, wall), flush=True)
            continue
        holding = []
        for size in range(1, len(SITES) + 1):
            for sites in combinations(SITES, size):
                cell = Cell(variant, sites, Environment())
                started = time.perf_counter()
                found = shortest_counterexample(cell, args.calls)
                if found is None:
                    holding.append(frozenset(sites))
                    continue
                names = ", ".join(site.name for site in sites)
                print(
                    f"| {name} | {names} | base | fails | {time.perf_counter() - started:.1f} "
                    f"| {found.scenario} ({found.trace.depth} moves) |",
                    flush=True,
                )
        maximal = [s for s in holding if not any(s < other for other in holding)]
        if args.no_proofs:
            for sites_set in maximal:
                names = ", ".join(site.name for site in SITES if site in sites_set)
                print(f"| {name} | {names} | base | holds (explorer) | | |", flush=True)
            continue
        for sites_set in maximal:
            ordered = tuple(site for site in SITES if site in sites_set)
            print(row(Cell(variant, ordered, Environment())), flush=True)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
