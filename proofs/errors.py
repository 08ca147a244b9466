"""Every error ackguard raises on purpose, under one root.

The command line catches `CannotRun` in one place (`proofs.cli.main`) and
prints it as one line with exit status 2: the run could not be done as asked
(bad input, an unreadable file, code that cannot be driven), never a verdict.
Verdicts are values (a counterexample, a mismatch report), not exceptions; the
one exception that carries a finding, the conformance harness's `Mismatch`,
derives from `AckguardError` directly and never leaves the engines. A few
classes also derive from the built-in a caller would catch (`ValueError` for
bad values), so callers that caught those keep working.

Errors that mean ackguard itself is wrong (`EncodingMismatch`) derive from
`InternalError`, which is never reported as bad input.

`Interrupted` is Ctrl-C with what was finished before it; it derives from
`KeyboardInterrupt`, not from the root, so that no `except Exception` takes it
for an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "AckguardError",
    "AuditInputError",
    "CannotRun",
    "CaseFileError",
    "EncodingMismatch",
    "InputError",
    "InternalError",
    "Interrupted",
    "LoopError",
    "NotEnabled",
    "ReleaseUnavailable",
    "SetupError",
    "SiteFileError",
    "Unsettled",
    "UnsupportedConfig",
    "UsageError",
]


class AckguardError(Exception):
    """The root: an error ackguard raises on purpose, with a message meant for people."""


class CannotRun(AckguardError):
    """The run cannot be done as asked; the command line prints it, exit status 2."""


class UsageError(CannotRun):
    """Bad input on the command line (an unknown name, options that do not go together)."""


class InputError(CannotRun):
    """A file or source that cannot be read or parsed; the message names it."""


class SiteFileError(InputError, ValueError):
    """A site file that cannot be read; the message says what to fix."""


class SessionFileError(SiteFileError):
    """A session file (the shape `audit --emit-sites` infers for a provider class) that
    cannot be read; the message names the file, the JSON path and what was expected."""


class CaseFileError(InputError, ValueError):
    """A case file (a report of the casebook written as data) that cannot be read; the
    message names the file, the JSON path and what was expected."""


class AuditInputError(InputError, ValueError):
    """Input the audit cannot use: a path it cannot read or parse, or a config value
    (an attribute name that is not a Python identifier)."""


class UnsupportedConfig(CannotRun, ValueError):
    """An adapter has no counterpart for part of a config (a site, a variant, a shape)."""


class SetupError(CannotRun, RuntimeError):
    """The code under test did not reach the state a scenario starts from."""


class ReleaseUnavailable(CannotRun, RuntimeError):
    """A release of a framework cannot be installed or run here."""


class NotEnabled(CannotRun, ValueError):
    """A stimulus the model does not allow in the current state."""


class LoopError(AckguardError, RuntimeError):
    """A callback of the controlled event loop raised, or the loop did not settle."""


class Unsettled(AckguardError):
    """z3 answered unknown (or ran out of time) on a query a verdict needs: the verdict is
    `unknown`, never `proved`."""


class InternalError(AckguardError, AssertionError):
    """ackguard itself is wrong: two of its engines disagree where they must not."""


class EncodingMismatch(InternalError):
    """z3 produced a trace the model does not confirm: the encoding is wrong."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, carrying the results an engine finished before it (`done`)."""

    def __init__(self, done: Sequence[Any]) -> None:
        super().__init__(f"interrupted after {len(done)} results")
        self.done: tuple[Any, ...] = tuple(done)
