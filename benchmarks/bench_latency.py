"""How long a text user turn waits before it can ask for a reply, with tool-output
pushes in flight, over the loopback websocket server.

    python benchmarks/bench_latency.py                      # 200 turns a cell, ~2 min
    python benchmarks/bench_latency.py --turns 50 --json out.json

A turn: start `k` tool-output pushes (each one output), let each run to its
first await (it has sent its create, or waits for a lock), then start the user
turn and time it until the moment the site would send `response.create`:

- awaiting: when `generate_reply` returns, i.e. the user message's acks are in;
- pipelined: when the user message's create is handed to the socket, after
  which `response.create` could follow at once, relying on the socket's order.
  For `three-way` this is a real run whose pushes do not await their acks
  (`Pipelined`); `unlocked` and `lock5` cannot return before their acks (the
  session holds its lock across them), so their pipelined figure is the moment
  their create is sent, read off the awaiting run.

After each turn the connection settles (nothing in flight) before the next.
Turns are independent, so a cell's turns run on `--connections` connections at
once, each connection playing its share in sequence after a random pause of up
to one round trip (so that the connections' bursts of messages do not line up
and queue for the CPU), and each connection is
replaced every 10 turns so the conversation (and the diff) stays small. The
server runs in a process of its own, so its work does not delay the clients'
loop; the clients share one loop, so a figure includes any wait for it (compare
`--connections 1`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import multiprocessing
import random
import sys
import time
from collections.abc import Iterator, Sequence
from multiprocessing.connection import Connection
from pathlib import Path

from attrs import define, field

from impl.activity import AgentActivity, PushSession
from impl.chat_context import ChatMessage, FunctionCallOutput
from impl.policy import POLICIES, SessionKind
from impl.session import RealtimeSession
from impl.three_way import ThreeWaySession
from impl.transport import ClientOp, CreateOp
from impl.ws_server import LoopbackServer, ServerSettings
from impl.ws_transport import WebSocketTransport
from proofs.adapters.impl.demo import Pipelined, percentile, quiet_impl_logs

VARIANTS = ("unlocked", "lock5", "three-way")
IN_FLIGHT = (0, 1, 2, 4)
TURNS_PER_CONNECTION = 10


@define
class Cell:
    variant: str
    mode: str  # "awaiting" or "pipelined"
    in_flight: int
    seconds: list[float] = field(factory=list)

    def median(self) -> float:
        return percentile(self.seconds, 50)

    def p99(self) -> float:
        return percentile(self.seconds, 99)


@define
class Client:
    """One connection: transport, session, activity (the server is elsewhere)."""

    transport: WebSocketTransport
    session: RealtimeSession | ThreeWaySession
    activity: AgentActivity

    @classmethod
    async def open(cls, url: str, variant: str, pipelined: bool) -> Client:
        policy = POLICIES[variant]
        transport = await WebSocketTransport.connect(url)
        session: RealtimeSession | ThreeWaySession
        if policy.session is SessionKind.THREE_WAY:
            session = ThreeWaySession(transport)
        else:
            session = RealtimeSession(transport)
        session.start()
        pushes: PushSession = session
        if pipelined:
            assert isinstance(session, ThreeWaySession)
            pushes = Pipelined(session)
        client = cls(transport, session, AgentActivity(pushes, policy=policy))
        await client.activity.generate_reply(ChatMessage("hi0", "user", "hello"))
        await client.settle()
        return client

    async def settle(self) -> None:
        """Every op answered (the server sends one event per op, and no items of its own)."""
        async with asyncio.timeout(30):
            await self.transport.drained(self.transport.sent)

    async def aclose(self) -> None:
        await self.session.aclose()
        await self.transport.aclose()


async def _turn(client: Client, name: str, in_flight: int) -> tuple[float, float]:
    """One turn; returns (seconds to the user message's send, seconds to return)."""
    sent_at: list[float] = []
    user_id = f"{name}.user"

    def stamp(op: ClientOp) -> None:
        if isinstance(op, CreateOp) and op.item.id == user_id and not sent_at:
            sent_at.append(time.perf_counter())

    client.transport.on_send.append(stamp)
    try:
        tools = [
            asyncio.create_task(
                client.activity.push_tool_outputs(
                    [FunctionCallOutput(f"{name}.out{n}", f"call_{name}.{n}", "42")]
                )
            )
            for n in range(in_flight)
        ]
        await asyncio.sleep(0)  # each tool push runs to its first await
        started = time.perf_counter()
        await client.activity.generate_reply(ChatMessage(user_id, "user", "and now?"))
        returned = time.perf_counter()
        await asyncio.gather(*tools)
        await client.settle()
    finally:
        client.transport.on_send.remove(stamp)
    if not sent_at:
        raise RuntimeError(f"turn {name}: the user message was never sent")
    return sent_at[0] - started, returned - started


async def _connection(
    url: str, variant: str, pipelined: bool, in_flight: int, turns: range, gap: float
) -> list[tuple[float, float]]:
    """Play `turns` in sequence, each after a random pause of up to `gap` seconds
    (so that the connections' bursts do not line up and queue for the CPU)."""
    rng = random.Random(f"{variant}/{pipelined}/{in_flight}/{turns.start}")
    results: list[tuple[float, float]] = []
    client: Client | None = None
    try:
        for turn in turns:
            await asyncio.sleep(rng.uniform(0, gap))
            if client is None or turn % TURNS_PER_CONNECTION == 0:
                if client is not None:
                    await client.aclose()
                client = await Client.open(url, variant, pipelined)
            results.append(await _turn(client, f"t{turn}", in_flight))
    finally:
        if client is not None:
            await client.aclose()
    return results


async def _cell(
    url: str,
    variant: str,
    pipelined: bool,
    in_flight: int,
    turns: range,
    connections: int,
    gap: float,
) -> list[tuple[float, float]]:
    """Play `turns`, dealt round-robin to `connections` concurrent connections."""
    step = connections * turns.step
    shares = [range(turns.start + c, turns.stop, step) for c in range(connections)]
    parts = await asyncio.gather(
        *(_connection(url, variant, pipelined, in_flight, share, gap) for share in shares if share)
    )
    return [result for part in parts for result in part]


def _serve(settings: ServerSettings, pipe: Connection) -> None:
    """The server process: report the port, serve until the parent says stop (or dies)."""

    async def main() -> None:
        async with LoopbackServer(settings) as server:
            pipe.send(server.url)
            with contextlib.suppress(EOFError):
                await asyncio.get_running_loop().run_in_executor(None, pipe.recv)

    asyncio.run(main())


@contextlib.contextmanager
def server_process(settings: ServerSettings) -> Iterator[str]:
    """A loopback server in a process of its own; yields its URL, stops it on exit."""
    parent, child = multiprocessing.get_context("fork").Pipe()
    process = multiprocessing.get_context("fork").Process(
        target=_serve, args=(settings, child), daemon=True
    )
    process.start()
    try:
        if not parent.poll(10):
            raise RuntimeError("the server process did not start")
        url = parent.recv()
        assert isinstance(url, str)
        yield url
    finally:
        with contextlib.suppress(OSError):
            parent.send("stop")
        process.join(5)
        if process.is_alive():
            process.terminate()
            process.join(5)


async def run(args: argparse.Namespace, url: str) -> list[Cell]:
    """Every cell, interleaved: each cell's turns are played in `args.chunks` chunks,
    and chunk n of every cell runs before chunk n + 1 of any, so that a slow
    moment of the machine falls on every cell alike."""
    gap = 2 * args.latency_ms / 1000 if args.connections > 1 else 0.0
    # a run: (variant, in flight, pipelined); mirror-diff runs give both modes
    runs = [
        (variant, k, pipelined)
        for k in args.in_flight
        for variant in args.variant
        for pipelined in ((False, True) if variant == "three-way" else (False,))
    ]
    results: dict[tuple[str, int, bool], list[tuple[float, float]]] = {run: [] for run in runs}
    bounds = [args.turns * n // args.chunks for n in range(args.chunks + 1)]
    with quiet_impl_logs():
        for n, (start, stop) in enumerate(itertools.pairwise(bounds), 1):
            began = time.perf_counter()
            for variant, k, pipelined in runs:
                results[(variant, k, pipelined)] += await _cell(
                    url, variant, pipelined, k, range(start, stop), args.connections, gap
                )
            print(
                f"  chunk {n}/{args.chunks}: {time.perf_counter() - began:.1f} s", file=sys.stderr
            )
    cells: list[Cell] = []
    for variant in args.variant:
        for k in args.in_flight:
            awaited = results[(variant, k, False)]
            cells.append(Cell(variant, "awaiting", k, [returned for _, returned in awaited]))
            if variant == "three-way":
                piped = [returned for _, returned in results[(variant, k, True)]]
            else:
                piped = [sent for sent, _ in awaited]
            cells.append(Cell(variant, "pipelined", k, piped))
    return cells


def _table(cells: Sequence[Cell], modes: Sequence[str], ks: Sequence[int]) -> list[str]:
    by = {(c.variant, c.mode, c.in_flight): c for c in cells}
    variants = list(dict.fromkeys(c.variant for c in cells))
    lines = []
    for mode in modes:
        lines.append(f"\n{mode}: median / p99 in ms (median ratio to lock5)")
        lines.append("")
        header = "| variant | " + " | ".join(f"{k} in flight" for k in ks) + " |"
        lines += [header, "|---" * (len(ks) + 1) + "|"]
        for variant in variants:
            row = [variant]
            for k in ks:
                cell = by[(variant, mode, k)]
                text = f"{cell.median() * 1000:.1f} / {cell.p99() * 1000:.1f}"
                lock = by.get(("lock5", mode, k))
                if lock is not None and lock.median() > 0:
                    ratio = cell.median() / lock.median()
                    text += f" ({ratio:.2f}x)" if ratio >= 0.01 else " (<0.01x)"
                row.append(text)
            lines.append("| " + " | ".join(row) + " |")
        round_trip = by.get(("lock5", "awaiting", ks[0]))
        lines.append("")
        for variant in variants:
            base = by[(variant, mode, ks[0])].median()
            worst = by[(variant, mode, ks[-1])].median()
            per_push = (worst - base) / (ks[-1] - ks[0]) if ks[-1] > ks[0] else 0.0
            text = f"- {variant}: {per_push * 1000:+.1f} ms per push in flight"
            if round_trip is not None and round_trip.median() > 0:
                text += f" ({per_push / round_trip.median():.2f} round trips)"
            if mode == "awaiting" and base > 0:
                text += f"; {ks[-1]} in flight / {ks[0]} in flight = {worst / base:.2f}"
            lines.append(text)
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=200, help="turns per cell (default 200)")
    parser.add_argument("--latency-ms", type=float, default=20.0, help="per message, one way")
    parser.add_argument("--jitter-ms", type=float, default=5.0, help="uniform, +/-")
    parser.add_argument("--connections", type=int, default=8, help="concurrent connections")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--chunks", type=int, default=5, help="interleave the cells in this many chunks"
    )
    parser.add_argument("--variant", action="append", choices=VARIANTS, help="repeatable")
    parser.add_argument("--in-flight", type=int, action="append", help="repeatable")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the raw figures")
    args = parser.parse_args(argv)
    args.variant = args.variant or list(VARIANTS)
    args.in_flight = sorted(args.in_flight or IN_FLIGHT)
    if min(args.turns, args.connections, args.chunks) < 1:
        parser.error("--turns, --connections and --chunks must be at least 1")
    began = time.perf_counter()
    settings = ServerSettings(
        latency=args.latency_ms / 1000, jitter=args.jitter_ms / 1000, seed=args.seed
    )
    with server_process(settings) as url:
        cells = asyncio.run(run(args, url))
    print(
        f"{args.turns} turns per cell, {args.latency_ms:g} ms +/- {args.jitter_ms:g} ms per "
        f"message each way, {args.connections} connections, seed {args.seed}, "
        f"{time.perf_counter() - began:.0f} s"
    )
    for line in _table(cells, ("awaiting", "pipelined"), args.in_flight):
        print(line)
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                [
                    {
                        "variant": c.variant,
                        "mode": c.mode,
                        "in_flight": c.in_flight,
                        "median_ms": c.median() * 1000,
                        "p99_ms": c.p99() * 1000,
                        "turns": len(c.seconds),
                    }
                    for c in cells
                ],
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
