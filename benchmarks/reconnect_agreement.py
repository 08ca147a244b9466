"""Replays the model's reconnect counterexamples against the real OpenAI plugin.

For each catalog scenario under the `reconnects` column, with livekit 1.8.9's
released reconnect (`openai-reconnect`) and the installed release's variant
(lock5), it takes the explorer's shortest counterexample of invariants 1 and 2,
and the shortest one with exactly one dropped connection
(`reconnect.shortest_with_drops`), replays each through the lockstep plugin
adapter over the gated server (`proofs.adapters.livekit.reconnect`), and prints
whether the real code loses the same item under the same invariant; a trace the
replay cannot give in its order (`reconnect.undriven`) is printed as not driven.
Then, per scenario, a push in OpenAI's drop window: the server the model ends with
(with the released `drop_window = unrecorded` and with `lost`), settled as the
replay's drain settles the real run (`reconnect.settled`), beside the plugin's.

    python benchmarks/reconnect_agreement.py [--runs N] [--variant V]
    PYTHONPATH=.cache/livekit/1.8.8 python benchmarks/reconnect_agreement.py --variant unlocked

Needs the `livekit` extra (livekit-agents 1.8.9), or 1.8.8 under `.cache` first
on the path (its `_reconnect` is 1.8.9's, five lines higher). Prints one markdown row per
replay and the median seconds per replay over `--runs` repetitions.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import attrs

from model import (
    SCENARIOS,
    DropWindow,
    Environment,
    Invariant,
    check,
    initial_state,
    step,
)
from proofs.adapters.livekit.reconnect import (
    released_reconnect,
    run_reconnects,
    settled,
    shortest_with_drops,
    undriven,
    window_moves,
)
from proofs.engines.explore import explore
from proofs.errors import UnsupportedConfig

INVARIANTS = (Invariant.NO_UNINTENDED_DELETE, Invariant.AGREEMENT_AT_REST)


def _real_items(outcome: object, invariant: Invariant) -> tuple[str, ...]:
    if invariant is Invariant.NO_UNINTENDED_DELETE:
        return outcome.unintended  # type: ignore[attr-defined,no-any-return]
    return (*outcome.lost, *outcome.recreated)  # type: ignore[attr-defined]


def _window_rows(variant: str, runs: int, seconds: list[float]) -> None:
    """For each scenario, its first push in OpenAI's drop window
    (`disconnect; call; disconnect; connect`): the server the model ends with against
    the plugin's, with the released `unrecorded` and with `lost` (recorded, re-sent)."""
    print()
    print("| scenario | trace | model's server (unrecorded) | (lost) | real server | agrees |")
    print("| --- | --- | --- | --- | --- | --- |")
    for scenario in SCENARIOS:
        config = released_reconnect(variant, scenario, Environment(reconnects=True))
        window = window_moves(config)
        if window is None:
            continue
        moves = list(window)
        servers = []
        for value in (DropWindow.UNRECORDED, DropWindow.LOST):
            model = attrs.evolve(config, shape=attrs.evolve(config.shape, drop_window=value))
            state = initial_state(model)
            for move in moves:
                state = step(state, model, move)
            servers.append(settled(state, model).server)
        trace = "; ".join(move.label() for move in moves)
        try:
            for _ in range(runs):
                start = time.perf_counter()
                outcome = run_reconnects(config, moves)
                seconds.append(time.perf_counter() - start)
            real = outcome.server
            agrees = "yes" if real == servers[0] else "NO"
        except UnsupportedConfig as error:
            real, agrees = (f"not driven: {error}",), "n/a"
        shown = [", ".join(server) or "-" for server in (*servers, real)]
        print(f"| {scenario.name} | {trace} | {' | '.join(shown)} | {agrees} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument(
        "--variant",
        default="lock5",
        help="the installed release's variant: lock5 for 1.8.9, unlocked for 1.8.8",
    )
    args = parser.parse_args()
    env = Environment(reconnects=True)
    from proofs.adapters.livekit.releases import installed_version

    print(f"livekit-agents {installed_version()}, variant {args.variant}")
    print(f"load average at start: {os.getloadavg()}")
    print("| scenario | invariant | trace | model's item | real items | agrees |")
    print("| --- | --- | --- | --- | --- | --- |")
    seconds: list[float] = []
    for scenario in SCENARIOS:
        config = released_reconnect(args.variant, scenario, env)
        found = explore(config, INVARIANTS)
        for finding in found.findings:
            traces = {}
            if finding.trace is not None:
                traces["shortest"] = tuple(finding.trace.moves)
            single = shortest_with_drops(config, finding.invariant, 1)
            if single is not None:
                traces["one drop"] = single
            for kind, moves in traces.items():
                state = initial_state(config)
                for move in moves:
                    state = step(state, config, move)
                violation = check(state, config, finding.invariant)
                item = "-" if violation is None else violation.item
                reason = undriven(config, moves)
                if reason is not None:
                    print(
                        f"| {scenario.name} | {finding.invariant.value} | {kind} ({len(moves)}"
                        f" moves) | {item} | not driven: {reason} | n/a |",
                        flush=True,
                    )
                    continue
                try:
                    for _ in range(args.runs):
                        start = time.perf_counter()
                        outcome = run_reconnects(config, moves)
                        seconds.append(time.perf_counter() - start)
                    real = _real_items(outcome, finding.invariant)
                    agrees = "yes" if item in real else "NO"
                    shown = ", ".join(real) or "-"
                except UnsupportedConfig as error:
                    shown, agrees = f"not driven: {error}", "n/a"
                print(
                    f"| {scenario.name} | {finding.invariant.value} | {kind} ({len(moves)} moves)"
                    f" | {item} | {shown} | {agrees} |",
                    flush=True,
                )
    _window_rows(args.variant, args.runs, seconds)
    if seconds:
        print(f"median seconds per replay: {statistics.median(seconds):.2f} ({len(seconds)})")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
