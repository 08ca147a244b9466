"""`ackguard demo`: every variant against a real loopback websocket server."""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import math
from collections.abc import Callable

from impl.policy import POLICIES
from impl.ws_server import LoopbackServer
from impl.ws_transport import WebSocketTransport
from proofs.adapters.impl.demo import DEMO_ENVIRONMENT, Agent, run_demo
from proofs.cli import options as choices
from proofs.errors import UsageError
from proofs.report.demo import LEGEND, table_lines

_EXAMPLE = """\
examples:
  ackguard demo --variant unlocked --variant three-way --turns 5
  ackguard demo --latency-ms 50 --jitter-ms 20 --seed 3 --json

exit status: 0 unless three-way loses an item, 2 on bad input (a latency whose ack
round trip would pass the 5 s ack timeout, more than 1000 turns), 130 on Ctrl-C."""

#: The most turns a run takes: at the default latency a turn of all five variants
#: takes about 0.75 s (this 2-core machine, load average 3.3), so 1000 turns are
#: about 12 minutes; more is a typo more often than a wish.
MAX_TURNS = 1000


def _milliseconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected milliseconds, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative number, got {text!r}")
    return value


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="run each variant over a real loopback websocket and count lost items",
        description=(
            "Start a loopback websocket server that speaks the item events of the OpenAI "
            "realtime protocol (on 127.0.0.1, a free port), and run the same short randomized "
            "conversation against each variant: every turn a tool-output push and a text user "
            "turn that overlap, plus random replacements from stale copies, cleanups of "
            "never-played items and the model's own items. Prints per variant the items lost, "
            "the deletes no one intended and push latency percentiles."
        ),
        epilog=_EXAMPLE,
    )
    parser.add_argument("--variant", action="append", metavar="V", help="repeatable; all if none")
    parser.add_argument(
        "--turns",
        type=choices.bounded_int(MAX_TURNS, "the loopback server lives an hour"),
        default=8,
        metavar="N",
        help=f"turns per variant, 1 to {MAX_TURNS} (default 8)",
    )
    parser.add_argument(
        "--latency-ms", type=_milliseconds, default=20.0, metavar="L", help="per message, one way"
    )
    parser.add_argument(
        "--jitter-ms", type=_milliseconds, default=5.0, metavar="J", help="uniform, +/-"
    )
    parser.add_argument("--seed", type=int, default=0, metavar="S")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(run=run)


def _default(function: Callable[..., object], name: str) -> float:
    """A keyword's default, read where it is set, so the check below cannot drift."""
    default = inspect.signature(function).parameters[name].default
    assert isinstance(default, float)
    return default


def _check_latency(latency_ms: float, jitter_ms: float) -> None:
    """The demo runs without ack timeouts (`DEMO_ENVIRONMENT`): a message that takes
    longer than the connect timeout, or an ack round trip longer than the ack
    timeout, would make it time out instead of measuring what it says."""
    one_way = latency_ms + jitter_ms
    connect = 1000 * _default(WebSocketTransport.connect, "open_timeout")
    ack = 1000 * _default(Agent.open, "ack_timeout")
    given = f"--latency-ms {latency_ms:g} --jitter-ms {jitter_ms:g}"
    if one_way >= connect:
        raise UsageError(
            f"{given}: a message takes up to {one_way:g} ms one way, past the {connect:g} ms "
            "connect timeout; keep latency + jitter under it"
        )
    if 2 * one_way >= ack:
        raise UsageError(
            f"{given}: an ack round trip takes up to {2 * one_way:g} ms, past the {ack:g} ms "
            f"ack timeout of the demo's environment (no timeouts); keep latency + jitter under "
            f"{ack / 2:g} ms"
        )


def run(args: argparse.Namespace) -> int:
    _check_latency(args.latency_ms, args.jitter_ms)
    variants = [variant.name for variant in choices.variants(args.variant)]
    missing = [name for name in variants if name not in POLICIES]
    if missing:
        raise UsageError(f"variant {missing[0]!r} has no implementation in impl")
    urls: list[str] = []

    def note(server: LoopbackServer) -> None:
        urls.append(server.url)

    tallies = asyncio.run(
        run_demo(
            variants,
            turns=args.turns,
            latency=args.latency_ms / 1000,
            jitter=args.jitter_ms / 1000,
            seed=args.seed,
            on_server=note,
        )
    )
    if args.json:
        print(json.dumps([tally.as_json() for tally in tallies], indent=2))
    else:
        print(
            f"{args.turns} turns per variant against the loopback server at {urls[0]}, "
            f"{args.latency_ms:g} ms +/- {args.jitter_ms:g} ms per message, seed {args.seed}, "
            f"environment {DEMO_ENVIRONMENT.name}"
        )
        print()
        for line in table_lines(tallies):
            print(line)
        print()
        print(LEGEND)
    broken = [t for t in tallies if t.variant == "three-way" and (t.lost or t.unintended)]
    return 1 if broken else 0
