"""The `ackguard` command line.

Each command lives in its own module exposing `register(subparsers)`; the module
sets a `run(args) -> int` handler with `set_defaults(run=...)`. `main` is the one
place that maps errors to exit statuses (see its docstring): bad input exits with
status 2 and one line naming the valid choices, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from typing import cast

from proofs.cli.options import HelpFormatter, Parser
from proofs.errors import CannotRun

#: The commands, in the order help lists them, and the module of each; a module has
#: `register(subparsers) -> None`. Modules are imported only when their command is
#: built: each pulls in its own engines (Hypothesis, websockets, z3), and a run of one
#: command should not wait for the others' imports.
COMMANDS: dict[str, str] = {
    "explore": "proofs.cli.explore",
    "audit": "proofs.cli.audit",
    "conform": "proofs.cli.conform",
    "demo": "proofs.cli.demo",
    "livekit": "proofs.cli.livekit",
    "verify": "proofs.cli.verify",
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The `ackguard` parser with every command of `COMMANDS` registered, or only
    command `only` (what `main` builds when the command line names one)."""
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
    for name, module in COMMANDS.items():
        if only is None or name == only:
            importlib.import_module(module).register(subparsers)
    for command in subparsers.choices.values():
        command.formatter_class = HelpFormatter
    return parser


#: Set to a file name, every last-resort report is also appended to it: the test
#: suite sets it and fails any test during which the handler fired.
CRASH_LOG = "ACKGUARD_CRASH_LOG"
#: Set to 1 (any non-empty value), the last-resort handler prints the traceback too.
TRACEBACK = "ACKGUARD_TRACEBACK"
#: Where to report an error ackguard did not expect.
REPORT_HINT = (
    "this is a bug in ackguard: please file a report with the command line "
    f"(run again with {TRACEBACK}=1 for the traceback)"
)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; the exit status says which of four things happened.

    0 the verdicts are as expected, 1 a verdict is not (a counterexample, a
    mismatch), 2 the run could not be done as asked (`CannotRun`: bad input, an
    unreadable file or an unwritable one), 3 ackguard itself failed (an error it
    did not expect, or `InternalError`); 130 interrupted, 141 the reader of its
    output went away. Every error is one line on standard error.
    """
    words = list(sys.argv[1:] if argv is None else argv)
    named = words[0] if words and words[0] in COMMANDS else None
    try:
        parser = build_parser(only=named)
    except KeyboardInterrupt:
        # Ctrl-C while the command's module loads (z3, Hypothesis): one line, no
        # traceback from inside an import, as once the command runs
        print(f"ackguard {named or ''}".rstrip() + ": interrupted", file=sys.stderr)
        return 130
    args = parser.parse_args(words)
    run: Callable[[argparse.Namespace], int] | None = getattr(args, "run", None)
    if run is None:
        parser.print_help()
        return 2
    try:
        with interrupts_not_lost():
            return run(args)
    except CannotRun as error:
        # bad input, an unreadable file, a release that cannot be had: one line, status 2
        print(f"ackguard {args.command}: error: {_one_line(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"ackguard {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader stopped reading (`ackguard verify --trace | head`): not an error
        # of ours; point stdout at nothing so that the exit flush does not fail too
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except Exception as error:  # the last resort: anything not raised on purpose
        return _last_resort(args.command, error)


@contextlib.contextmanager
def interrupts_not_lost() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt wherever Python is; raised inside a weakref
    callback or a `__del__` (asyncio's task set, z3's terms), Python prints "Exception
    ignored" and the command runs on. While a command runs, such a lost interrupt is
    sent again, so it is raised at the next point where it can be (`conform` under load
    once ran on for minutes after Ctrl-C). Only where Ctrl-C raises KeyboardInterrupt."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    before = sys.unraisablehook

    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
            # sent from another thread a moment later: sent from here, it would be
            # raised inside this hook, and be lost again
            again = threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT))
            again.daemon = True
            again.start()
            return
        before(unraisable)

    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = before


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def _last_resort(command: str, error: Exception) -> int:
    """One line naming the error and where to report it, exit 3, never a bare traceback."""
    line = f"ackguard {command}: internal error: {type(error).__name__}: {_one_line(error)}"
    line = line if len(line) <= 300 else line[:297] + "..."
    if os.environ.get(TRACEBACK):
        traceback.print_exception(error, file=sys.stderr)
    print(f"{line}; {REPORT_HINT}", file=sys.stderr)
    log = os.environ.get(CRASH_LOG)
    if log:
        with open(log, "a", encoding="utf-8") as file:
            file.write(f"{line}\n")
    return 3
