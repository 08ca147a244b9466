"""The `ackguard` command line: one module per command, shared options in `options`.

This is the top room: it parses arguments, calls the engines through the
adapters, prints what the report room renders, and maps `proofs.errors` to exit
statuses in one place (`main`).
"""

from proofs.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
