"""Soak: thousands of randomized overlapping pushes per variant, over the loopback
websocket server, under each environment option and all at once; items lost and
unintended deletes per variant.

    python benchmarks/soak.py                          # 5,000 pushes a cell, 30 cells
    python benchmarks/soak.py --pushes 500 --variant three-way --environment all

A round (see `proofs.adapters.impl.demo.plan_round`) starts two to five site calls at random
moments within about one ack round trip, so that they overlap: tool outputs,
interrupted tool outputs, text user turns, spoken messages, replacements (with a
copy taken at the call, or with `stale-copies` at a random earlier moment of the
round) and cleanups of a never-played item (set up at rest before the round).
The environment adds, per option:

- `server-items`: the model adds one or two items of its own during the round;
  the local context learns each at a random moment after its ack;
- `timeouts`: each push's ack timeout is, at random, either short next to the
  jitter (`--timeout-ms`) or 5 s, so about half the pushes give up while their
  ops are still in flight and the others hold on;
- `rejections`: the server rejects each op it could apply with probability
  `--reject`.

After each round the connection settles (nothing in flight) and the invariants
are judged (`proofs.adapters.impl.demo.Agent.check`). Each cell (variant, environment) runs on
`--connections` concurrent connections, each replaced every 10 rounds so the
conversation stays short; cells run in `--jobs` processes, each with its own
server. Any finding for three-way is printed with its round and the socket's
interleaving, and written to `--traces`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from attrs import frozen

from impl.ws_server import LoopbackServer, ServerSettings
from model.environment import ALL, ENVIRONMENTS, Environment, parse_environment
from proofs.adapters.impl.demo import (
    SOAK_SITES,
    Agent,
    Tally,
    plan_round,
    quiet_impl_logs,
    round_window,
)

VARIANTS = ("unlocked", "lock3", "lock5", "lock5-hoisted", "three-way")
ROUNDS_PER_CONNECTION = 5
#: Findings kept per cell for variants other than three-way (three-way keeps all).
KEEP_FINDINGS = 3


@frozen
class Settings:
    pushes: int
    latency: float
    jitter: float
    timeout: float
    reject: float
    connections: int
    seed: int
    sites: tuple[str, ...] = SOAK_SITES


async def _connection(
    server: LoopbackServer,
    variant: str,
    environment: Environment,
    settings: Settings,
    number: int,
    done: list[int],
    tally: Tally,
) -> None:
    """Play rounds until the cell has made its pushes, on a fresh connection every
    ROUNDS_PER_CONNECTION rounds."""
    rng = random.Random(f"{settings.seed}/{variant}/{environment.name}/{number}")
    window = round_window(settings.latency, settings.jitter)
    index = 0
    while done[0] < settings.pushes:
        agent = await Agent.open(server, variant, trace=400)
        if environment.timeouts:
            agent.ack_timeouts = (settings.timeout, 5.0)
            agent.rng = random.Random(rng.random())
        rounds = 0
        try:
            while rounds < ROUNDS_PER_CONNECTION and done[0] < settings.pushes:
                index += 1
                plan = plan_round(rng, index, environment, window, sites=settings.sites)
                before = agent.pushes
                await agent.play(plan, window=window)
                done[0] += agent.pushes - before
                rounds += 1
        finally:
            await agent.aclose()
        keep = len(agent.findings) if variant == "three-way" else KEEP_FINDINGS
        room = max(0, keep - len(tally.findings))
        agent.findings = agent.findings[:room]
        tally.add(agent, rounds)


async def _cell(variant: str, environment: Environment, settings: Settings) -> Tally:
    server_settings = ServerSettings(
        latency=settings.latency,
        jitter=settings.jitter,
        seed=settings.seed,
        reject_probability=settings.reject if environment.rejections else 0.0,
        max_lifetime=3600.0,
    )
    tally = Tally(variant, environment.name)
    done = [0]
    with quiet_impl_logs():
        async with LoopbackServer(server_settings) as server:
            await asyncio.gather(
                *(
                    _connection(server, variant, environment, settings, n, done, tally)
                    for n in range(settings.connections)
                )
            )
    return tally


def run_cell(variant: str, environment: str, settings: Settings) -> tuple[Tally, float]:
    """One cell in this process (the unit of work of the process pool)."""
    began = time.perf_counter()
    tally = asyncio.run(_cell(variant, parse_environment(environment), settings))
    return tally, time.perf_counter() - began


def _tables(tallies: Sequence[Tally], environments: Sequence[str]) -> list[str]:
    by = {(t.variant, t.environment): t for t in tallies}
    variants = list(dict.fromkeys(t.variant for t in tallies))
    lines: list[str] = []
    metrics: tuple[tuple[str, Callable[[Tally], str]], ...] = (
        ("items lost (at rest, the local context keeps them)", lambda t: str(t.lost)),
        (
            "unintended deletes (of which moves: deleted and re-created by the same push)",
            lambda t: f"{t.unintended} ({t.moves})",
        ),
        ("resurrected (deleted on purpose, then created again)", lambda t: str(t.resurrected)),
        (
            "pushes / pushes timed out / ops answered by an error (rejected or refused)",
            lambda t: f"{t.pushes}/{t.timeouts}/{t.rejected}",
        ),
    )
    for title, show in metrics:
        lines += ["", title, ""]
        lines.append("| variant | " + " | ".join(environments) + " |")
        lines.append("|---" * (len(environments) + 1) + "|")
        for variant in variants:
            cells = [show(by[(variant, env)]) for env in environments]
            lines.append(f"| {variant} | " + " | ".join(cells) + " |")
    sites = sorted({site for t in tallies for site in t.by_site})
    if sites:
        lines += ["", "unintended deletes by the site that sent them (every environment)", ""]
        lines.append("| variant | " + " | ".join(sites) + " |")
        lines.append("|---" * (len(sites) + 1) + "|")
        for variant in variants:
            counts = [
                sum(t.by_site.get(site, 0) for t in tallies if t.variant == variant)
                for site in sites
            ]
            lines.append(f"| {variant} | " + " | ".join(map(str, counts)) + " |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--pushes", type=int, default=5000, help="per cell (default 5000)")
    parser.add_argument("--latency-ms", type=float, default=2.0, help="per message, one way")
    parser.add_argument("--jitter-ms", type=float, default=2.0, help="uniform, +/-")
    parser.add_argument(
        "--timeout-ms", type=float, default=4.0, help="the ack timeout under `timeouts`"
    )
    parser.add_argument("--reject", type=float, default=0.05, help="under `rejections`")
    parser.add_argument("--connections", type=int, default=8, help="per cell, concurrent")
    parser.add_argument("--jobs", type=int, default=2, help="cells run in this many processes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variant", action="append", choices=VARIANTS, help="repeatable")
    parser.add_argument(
        "--environment",
        action="append",
        metavar="E",
        help="base, all, or options joined by '+'; repeatable (default: base, each option, all)",
    )
    parser.add_argument(
        "--without",
        action="append",
        choices=SOAK_SITES,
        default=[],
        help="leave a site out of the rounds; repeatable",
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures")
    parser.add_argument(
        "--traces", type=Path, metavar="PATH", help="write every three-way finding here"
    )
    args = parser.parse_args(argv)
    variants = args.variant or list(VARIANTS)
    try:
        environments = [parse_environment(e) for e in args.environment or ()] or list(ENVIRONMENTS)
    except ValueError as error:
        parser.error(str(error))
    if min(args.pushes, args.connections, args.jobs) < 1:
        parser.error("--pushes, --connections and --jobs must be at least 1")
    settings = Settings(
        pushes=args.pushes,
        latency=args.latency_ms / 1000,
        jitter=args.jitter_ms / 1000,
        timeout=args.timeout_ms / 1000,
        reject=args.reject,
        connections=args.connections,
        seed=args.seed,
        sites=tuple(site for site in SOAK_SITES if site not in args.without),
    )
    began = time.perf_counter()
    cells = [(v, e.name) for e in environments for v in variants]
    tallies: dict[tuple[str, str], Tally] = {}
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        try:
            futures = {cell: pool.submit(run_cell, *cell, settings) for cell in cells}
            for cell, future in futures.items():
                tally, seconds = future.result()
                tallies[cell] = tally
                print(
                    f"  {cell[0]} / {cell[1]}: {tally.pushes} pushes, {tally.lost} lost, "
                    f"{tally.unintended} unintended deletes, {seconds:.0f} s",
                    file=sys.stderr,
                )
        except KeyboardInterrupt:
            # the workers got the interrupt too; without cancelling, the pool would
            # run every cell not yet started before it let the soak end
            pool.shutdown(wait=False, cancel_futures=True)
            print("soak: interrupted", file=sys.stderr)
            return 130
    ordered = [tallies[cell] for cell in cells]
    print(
        f"soak: >= {args.pushes} pushes per cell, {args.latency_ms:g} ms +/- {args.jitter_ms:g} "
        f"ms per message each way, ack timeout {args.timeout_ms:g} ms under timeouts, "
        f"rejection probability {args.reject:g} under rejections, {args.connections} "
        f"connections per cell, seed {args.seed}, {time.perf_counter() - began:.0f} s"
        + (f", without {', '.join(args.without)}" if args.without else "")
    )
    names = [e.name for e in environments]
    for line in _tables(ordered, names):
        print(line)
    findings = [(t, f) for t in ordered if t.variant == "three-way" for f in t.findings]
    print()
    if findings:
        print(f"THREE-WAY FINDINGS: {len(findings)}")
        for tally, finding in findings[:3]:
            print(f"[{tally.environment}]")
            print("\n".join(finding.describe()))
    else:
        print("three-way: no finding in any environment")
    if args.traces is not None:
        args.traces.write_text(
            "\n\n".join("\n".join([f"[{t.environment}]", *f.describe()]) for t, f in findings)
            + "\n"
        )
    if args.json is not None:
        payload: list[dict[str, Any]] = [t.as_json() for t in ordered]
        args.json.write_text(json.dumps(payload, indent=2))
    return 1 if findings else 0


if __name__ == "__main__":
    assert ALL in ENVIRONMENTS
    sys.exit(main())
