"""The table of `ackguard audit`: every push place and whether it keeps the discipline."""

from __future__ import annotations

from collections.abc import Sequence

from proofs.engines.audit import Place


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
