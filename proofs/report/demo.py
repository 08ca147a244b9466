"""The table of `ackguard demo`: items lost and push latency per variant."""

from __future__ import annotations

from proofs.adapters.impl.demo import Tally

LEGEND = (
    "lost: items the local context keeps that are gone from the server (at rest after a turn)\n"
    "unintended deletes: deletes of acknowledged items that no push meant to remove; "
    "moves: the same push re-created the item\n"
    "resurrected: items a delete removed that a later create put back\n"
    "push: time from a site's call to its return"
)


def table_lines(tallies: list[Tally]) -> list[str]:
    out: list[str] = []
    header = (
        "variant",
        "pushes",
        "lost",
        "unintended deletes (moves)",
        "resurrected",
        "push p50 ms",
        "p90",
        "p99",
    )
    rows = [header]
    for tally in tallies:
        summary = tally.as_json()
        latency = summary["push_ms"]
        rows.append(
            (
                tally.variant,
                str(tally.pushes),
                str(tally.lost),
                f"{tally.unintended} ({tally.moves})",
                str(tally.resurrected),
                _ms(latency["p50"]),
                _ms(latency["p90"]),
                _ms(latency["p99"]),
            )
        )
    widths = [max(len(row[col]) for row in rows) for col in range(len(header))]
    for row in rows:
        cells = [row[0].ljust(widths[0])]
        cells += [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        out.append("  ".join(cells))
    return out


def _ms(value: float | None) -> str:
    """A latency cell: one decimal, or a dash when there was no push to time."""
    return "-" if value is None else f"{value:.1f}"
