"""The tables of `ackguard audit`: every push place and whether it keeps the discipline,
and the session shape of every provider session class, field by field with its evidence."""

from __future__ import annotations

from collections.abc import Sequence

from proofs.engines.audit import Place
from proofs.engines.audit_session_file import push_facts
from proofs.engines.audit_session_shape import FIELDS, InferredShape


def format_table(places: Sequence[Place]) -> str:
    """A plain-text table a reviewer can read in a terminal or a CI log."""
    header = ("where", "function", "kind", "lock", "local update", "ok")
    rows = [
        (
            p.source,
            p.function,
            p.kind,
            p.lock or "-",
            p.local_update,
            "ok" if p.ok else f"NO: {p.reason}",
        )
        for p in places
    ]
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header) - 1)]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row[:-1], widths, strict=True)) + "  " + row[-1]
        for row in ((header, *rows) if rows else ())
    ]
    broken = sum(not p.ok for p in places)
    pushes = sum(p.is_push for p in places)
    lines.append(
        f"{len(places)} places ({pushes} pushes, {len(places) - pushes} mirror reads), "
        f"{broken} breaking the lock discipline"
    )
    return "\n".join(lines)


def format_sessions(shapes: Sequence[InferredShape]) -> str:
    """Per session class: its push, then each field's value and the line it was read from."""
    lines: list[str] = []
    for shape in shapes:
        push = shape.facts.primary
        lines.append(
            f"session {shape.name} ({shape.file}:{shape.line}): push {push.method} "
            f"(line {push.line}) diffs against self.{push.view[0]}"
            + (f" (with {', '.join('self.' + a for a in push.view[1:])})" if push.view[1:] else "")
        )
        for name in FIELDS:
            value = shape.session.get(name, "UNDECIDED")
            lines.append(f"  {name:<19} {value:<20} {shape.evidence[name]}")
        facts = push_facts(shape)
        for key in ("mirror_reads", "mirror_writes", "awaits_between_diff_and_write", "deletes"):
            shown = "; ".join(facts[key]) or "none"
            lines.append(f"  {key.replace('_', ' ')}: {shown}")
        lines.append("  (provider side: not judged by the agent's lock)")
    if shapes:
        undecided = sum(bool(s.undecided) for s in shapes)
        lines.append(f"{len(shapes)} session class(es), {undecided} with undecided fields")
    return "\n".join(lines)
