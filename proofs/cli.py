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
from typing import NoReturn, cast

from proofs import conform_cli, demo_cli, explore_cli, livekit_cli
from proofs.audit_cli import add_audit_parser
from proofs.choices import UsageError

#: Modules that add a subcommand; each has `register(subparsers) -> None`.
COMMANDS: list[Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None]] = [
    explore_cli.register,
    add_audit_parser,
    conform_cli.register,
    demo_cli.register,
    livekit_cli.register,
    __import__("proofs.verify_cli").verify_cli.register,
]


class HelpFormatter(argparse.HelpFormatter):
    """Prose is wrapped to the terminal; examples keep their line breaks.

    Text is split into paragraphs at blank lines. A paragraph with an indented
    line (`examples:` followed by one indented command a line) is printed as
    written, so no command is broken in two; any other paragraph is filled.
    Every subcommand gets this formatter (`build_parser`), so all render alike.
    """

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        filled = []
        for part in text.split("\n\n"):
            lines = part.strip("\n").splitlines()
            if any(line.startswith(" ") for line in lines):
                filled.append("\n".join(indent + line for line in lines))
            elif lines:
                filled.append(super()._fill_text(part, width, indent))
        return "\n\n".join(filled)


class _Parser(argparse.ArgumentParser):
    """Argument errors as one line and status 2, without the usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
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
    except UsageError as error:
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


if __name__ == "__main__":
    sys.exit(main())
