"""``ackguard audit``: the command-line face of :mod:`proofs.engines.audit` (the agent's
push places) and of the provider side (`proofs.engines.audit_session`: session shapes).

Kept apart from ``proofs/cli.py`` so the audit's options live next to the
audit; ``proofs.cli.main`` only calls :func:`register`. Exit codes are for CI:
0 every place keeps the discipline, 1 some place breaks it, 2 the input could
not be audited.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from proofs.cli import options as choices
from proofs.engines.audit import AuditConfig, audit_paths, audit_session_paths, emit_sites
from proofs.engines.audit_session_file import session_file_json
from proofs.engines.audit_session_shape import InferredShape
from proofs.errors import InputError, UsageError
from proofs.report.audit import format_sessions, format_table

__all__ = ["main", "register", "run_audit"]

EXIT_OK = 0
EXIT_BROKEN = 1
EXIT_INPUT = 2

_EPILOG = """\
examples:
  ackguard audit livekit_agents-1.8.9-py3-none-any.whl
  ackguard audit src/ --json
  ackguard audit agent_activity.py --emit-sites sites.json
  ackguard audit realtime_api.py --emit-sites session.json   (a provider file: its shape)
  ackguard audit my_agent/ --session-attr _session --lock-attr _push_lock

exit status: 0 every place keeps the discipline, 1 some place breaks it,
2 the input could not be read or parsed.
"""

_DEFAULTS = AuditConfig()

#: AuditConfig fields by the option that sets each, for error messages.
_OPTIONS = {
    "local_owner_attr": "--local-owner",
    "session_attr": "--session-attr",
    "mirror_attr": "--mirror-attr",
    "push_method": "--push-method",
    "lock_attr": "--lock-attr",
    "local_attr": "--local-attr",
}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``audit`` subcommand; ``args.run(args)`` then runs it."""
    parser = subparsers.add_parser(
        "audit",
        help="statically audit push sites for the activity-lock discipline",
        description=(
            "Find every push of a requested chat context to the realtime session and "
            "every read of its mirror, and check that each snapshot and its push are "
            "inside one `async with <activity lock>` block; and, for every provider "
            "session class, the session shape its push has (mirror, sends, lock, acks, "
            "writers, while disconnected, reconnect), with the line each is read from. "
            "Reads .py files, directories and .whl/.zip archives without importing them."
        ),
        epilog=_EPILOG,
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help=".py file, directory or .whl")
    parser.add_argument("--json", action="store_true", help="print the places as JSON")
    parser.add_argument(
        "--emit-sites",
        metavar="FILE",
        help=(
            "write the push places as model site records (JSON) to FILE ('-': stdout); "
            "for a provider file (no push place, one session class), its session file"
        ),
    )
    parser.add_argument(
        "--session-class",
        metavar="NAME",
        help="with --emit-sites: the session class whose session file to write",
    )
    names = parser.add_argument_group("names (defaults: livekit-agents)")
    names.add_argument(
        "--session-attr", default=_DEFAULTS.session_attr, help="attribute holding the session"
    )
    names.add_argument(
        "--mirror-attr", default=_DEFAULTS.mirror_attr, help="session property that is the mirror"
    )
    names.add_argument(
        "--push-method", default=_DEFAULTS.push_method, help="session method that pushes"
    )
    names.add_argument(
        "--lock-attr", default=_DEFAULTS.lock_attr, help="attribute holding the activity lock"
    )
    names.add_argument(
        "--local-attr",
        default=_DEFAULTS.local_attr,
        help="attribute holding the local context",
    )
    names.add_argument(
        "--local-owner",
        default=_DEFAULTS.local_owner_attr,
        help="attribute owning the local context ('' for any object)",
    )
    provider = parser.add_argument_group(
        "provider side (session classes: their push, and the session shape it has)"
    )
    provider.add_argument(
        "--diff-function",
        action="append",
        default=[],
        metavar="NAME",
        help="a callable that diffs, besides those named *diff* (repeatable)",
    )
    provider.add_argument(
        "--session-lock",
        action="append",
        default=[],
        metavar="ATTR",
        help="a session attribute that is its lock, besides *lock* and *Lock() (repeatable)",
    )
    parser.set_defaults(run=run_audit)


def _config(args: argparse.Namespace) -> AuditConfig:
    return AuditConfig(
        session_attr=args.session_attr,
        mirror_attr=args.mirror_attr,
        push_method=args.push_method,
        lock_attr=args.lock_attr,
        local_attr=args.local_attr,
        local_owner_attr=args.local_owner or None,
    )


def run_audit(args: argparse.Namespace) -> int:
    """Run the audit for parsed arguments; returns the exit status.

    Input it cannot audit raises (`UsageError`, `AuditInputError`), which
    `proofs.cli.main` prints as one line with status 2.
    """
    try:
        config = _config(args)
    except ValueError as exc:
        text = str(exc)
        for field, option in _OPTIONS.items():
            text = text.replace(field, option)
        raise UsageError(
            f"{text}; give the attribute's name alone (--session-attr _session for self._session)"
        ) from None
    for option, values in (
        ("--diff-function", args.diff_function),
        ("--session-lock", args.session_lock),
    ):
        for value in values:
            if not isinstance(value, str) or not value.isidentifier():
                raise UsageError(f"{option} takes a Python name (plan, gate), not {value!r}")
    if args.json and args.emit_sites == "-":
        raise UsageError(
            "--json and --emit-sites - both write stdout; give --emit-sites a file name"
        )
    # checked before the audit, so that its work is not lost to a path that cannot be written
    target = (
        choices.writable_file("--emit-sites", args.emit_sites)
        if args.emit_sites not in (None, "-")
        else None
    )
    places = audit_paths(args.paths, config)
    pushes = [p for p in places if p.is_push]
    # the provider side is read only where its result is shown: the table, or the
    # session file of a provider file (one with no agent push)
    wanted = not args.json and not (args.emit_sites and pushes)
    shapes = (
        audit_session_paths(args.paths, args.diff_function, args.session_lock) if wanted else []
    )
    if not places and not shapes:
        print(_nothing_found(args.paths, config), file=sys.stderr)
    if args.emit_sites:
        sites = _session_file(shapes, args.session_class) if shapes and not pushes else None
        if sites is None:
            sites = emit_sites(places)
        if target is None:
            print(sites)
        else:
            try:
                target.write_text(sites + "\n", encoding="utf-8")
            except OSError as exc:
                raise InputError(f"--emit-sites {args.emit_sites}: {exc.strerror}") from None
        skipped = sum(p.kind == "unknown" for p in places)
        if skipped and not shapes:
            print(
                f"ackguard audit: {skipped} push(es) of unknown request kind written with a note; "
                "they are skipped when the file is loaded",
                file=sys.stderr,
            )
    if args.json:
        print(json.dumps([p.to_dict() for p in places], indent=2))
    elif args.emit_sites != "-":
        print(format_table(places))
        if shapes:
            print(format_sessions(shapes))
    return EXIT_BROKEN if any(not p.ok for p in places) else EXIT_OK


def _session_file(shapes: Sequence[InferredShape], wanted: str | None) -> str:
    """The session file of the one session class found (or of `--session-class`)."""
    chosen = [s for s in shapes if wanted in (None, s.cls, s.name)]
    if len(chosen) != 1:
        names = ", ".join(s.name for s in shapes)
        why = f"no session class {wanted!r}" if wanted and not chosen else "several session classes"
        raise UsageError(f"--emit-sites: {why} ({names}); choose one with --session-class NAME")
    shape = chosen[0]
    if shape.undecided:
        print(
            f"ackguard audit: {shape.name}: undecided: {', '.join(shape.undecided)}",
            file=sys.stderr,
        )
    return session_file_json(shape)


def _nothing_found(paths: Sequence[str], config: AuditConfig) -> str:
    """The note for an audit that found no place (still exit 0: a hook meets such files)."""
    session = f"<x>.{config.session_attr}"
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    return (
        f"ackguard audit: note: no push place in {shown}: it looks for pushes "
        f"`{session}.{config.push_method}(...)` and mirror reads `{session}.{config.mirror_attr}`; "
        "if your code pushes under other names, give them with --session-attr, --mirror-attr "
        "and --push-method (see --help)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry (``python -m proofs.cli.audit audit ...``), also used by tests:
    the ``ackguard`` command itself, so help and errors read the same."""
    from proofs.cli import main as ackguard

    return ackguard(argv)


if __name__ == "__main__":
    sys.exit(main())
