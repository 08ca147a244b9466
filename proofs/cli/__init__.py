"""The `ackguard` command line: one module per command, shared options in `options`.

This is the top room: it parses arguments, calls the engines through the
adapters, prints what the report room renders, and maps `proofs.errors` to exit
statuses in one place (`main`).

A Ctrl-C during an import would print a traceback from inside it, so while
`main` is imported here, and while `main` imports the one command it runs (z3,
Hypothesis: `proofs.cli.main.COMMANDS`), Ctrl-C exits with status 130 and one
line, as it does once a command runs.
"""

import signal as _signal
import sys as _sys
import threading as _threading
from types import FrameType as _FrameType


def _interrupted_while_loading(signum: int, frame: _FrameType | None) -> None:
    print("ackguard: interrupted", file=_sys.stderr)
    raise SystemExit(130)


# only where Ctrl-C would raise KeyboardInterrupt: a process started with SIGINT
# ignored (in the background of a script) keeps ignoring it
_main_thread = (
    _threading.current_thread() is _threading.main_thread()
    and _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler
)
if _main_thread:
    _before = _signal.signal(_signal.SIGINT, _interrupted_while_loading)
try:
    from proofs.cli.main import build_parser, main
finally:
    if _main_thread:
        _signal.signal(_signal.SIGINT, _before)

__all__ = ["build_parser", "main"]
