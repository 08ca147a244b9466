"""The `ackguard` command line.

Each command lives in its own module exposing `register(subparsers)`; the module
sets a `run(args) -> int` handler with `set_defaults(run=...)`. Bad input exits
with status 2 and one line naming the valid choices, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import cast

from proofs.cli import audit, conform, demo, explore, livekit, verify
from proofs.cli.options import HelpFormatter, Parser
from proofs.errors import AckguardError

#: Modules that add a subcommand; each has `register(subparsers) -> None`.
COMMANDS: list[Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None]] = [
    explore.register,
    audit.register,
    conform.register,
    demo.register,
    livekit.register,
    verify.register,
]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="ackguard",
        description=(
            "Check that concurrent chat-context pushes to a realtime provider never delete "
            "each other's acknowledged items."
        ),
        epilog=(
            "examples:\n"
            "  ackguard verify --variant lock5 --scenario overlapping-push\n"
            "  ackguard verify --variant lock3 --trace\n"
            "  ackguard COMMAND --help"
        ),
        formatter_class=HelpFormatter,
    )
    subparsers = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(dest="command", metavar="COMMAND"),
    )
    for register in COMMANDS:
        register(subparsers)
    for command in subparsers.choices.values():
        command.formatter_class = HelpFormatter
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    run: Callable[[argparse.Namespace], int] | None = getattr(args, "run", None)
    if run is None:
        parser.print_help()
        return 2
    try:
        return run(args)
    except AckguardError as error:
        # bad input, an unreadable file, a release that cannot be had: one line, status 2
        print(f"ackguard {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ackguard: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader stopped reading (`ackguard verify --trace | head`): not an error
        # of ours; point stdout at nothing so that the exit flush does not fail too
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
