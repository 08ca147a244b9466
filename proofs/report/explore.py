"""The table and traces of `ackguard explore`, and its rows as JSON."""

from __future__ import annotations

from typing import Any

from model import by_construction
from proofs.engines.explore import Exploration
from proofs.engines.sweep import CellResult, MixResult
from proofs.report.render import trace_json, trace_lines


def rows(result: Exploration) -> list[dict[str, Any]]:
    config = result.config
    shape = config.shape
    inert = [
        f"{name} does not apply: {why}"
        for name, why in shape.inert_options()
        if config.environment.on(name)
    ]
    rows = []
    for finding in result.findings:
        expected = config.variant.expected(
            config.scenario.name, config.environment, finding.invariant, shape.name
        )
        known = config.variant.known_failure(
            config.scenario.name, config.environment, finding.invariant, shape.name
        )
        basis = by_construction(finding.invariant, shape)
        rows.append(
            {
                "variant": config.variant.name,
                "session": shape.name,
                "scenario": config.scenario.name,
                "environment": config.environment.name,
                "invariant": finding.invariant.value,
                "verdict": finding.verdict.value,
                "expected": expected.value,
                "states": result.states,
                "depth": finding.depth,
                "violation": None if finding.violation is None else finding.violation.describe(),
                "trace": None if finding.trace is None else trace_json(config, finding.trace),
                "seconds": round(result.seconds, 4),
                "by_construction": basis,
                "not_applying": inert,
                "confirmed": None if known is None else known.confirmed,
            }
        )
    return rows


def table_lines(rows: list[dict[str, Any]], results: list[Exploration], traces: bool) -> list[str]:
    out: list[str] = []
    header = (
        "variant",
        "session",
        "scenario",
        "environment",
        "invariant",
        "verdict",
        "expected",
        "states",
    )
    table = [header] + [
        (
            row["variant"],
            row["session"],
            row["scenario"],
            row["environment"],
            row["invariant"],
            _verdict_text(row),
            row["expected"] + ("" if row["verdict"] == row["expected"] else "  <-- MISMATCH"),
            str(row["states"]),
        )
        for row in rows
    ]
    widths = [max(len(line[col]) for line in table) for col in range(len(header))]
    for line in table:
        out.append("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)))
    notes = dict.fromkeys(
        f"note: {row['session']}: {note}" for row in rows for note in row["not_applying"]
    )
    out.extend(notes)
    if traces:
        for result in results:
            for finding in result.findings:
                if finding.trace is None or finding.violation is None:
                    continue
                config = result.config
                out.append("")
                out.append(
                    f"{config.variant.name} / {config.shape.name} / {config.scenario.name} / "
                    f"{config.environment.name}: {finding.violation.describe()}"
                )
                for line in trace_lines(config, finding.trace):
                    out.append(f"  {line}")
    return out


def _verdict_text(row: dict[str, Any]) -> str:
    """The verdict, its depth, and what it rests on: by construction, or where a
    failure was confirmed on the real class."""
    text: str = row["verdict"] + ("" if row["depth"] is None else f" at depth {row['depth']}")
    if row["verdict"] == "holds" and row["by_construction"]:
        text += f" (by construction: {row['by_construction']})"
    if row["verdict"] == "counterexample" and row["confirmed"]:
        text += f" ({row['confirmed']})"
    return text


def _mix_json(result: MixResult) -> dict[str, Any]:
    return {
        "mix": list(result.mix),
        "states": result.states,
        "broken": [
            {
                "invariant": inv.value,
                "depth": depth,
                "violation": text,
                "moves": [move.label() for move in moves],
            }
            for inv, depth, text, moves in result.broken
        ],
    }


def sweep_rows(cells: list[CellResult]) -> list[dict[str, Any]]:
    """One row per cell: its failing mixes and the smallest of them."""
    out = []
    for cell in cells:
        smallest = cell.smallest
        out.append(
            {
                "variant": cell.variant,
                "environment": cell.environment,
                "mixes": cell.mixes,
                "states": cell.states,
                "failing": [_mix_json(r) for r in cell.failing],
                "smallest": None if smallest is None else _mix_json(smallest),
            }
        )
    return out


def _mix_text(result: MixResult) -> str:
    broken = ", ".join(f"{inv.value} at depth {depth}" for inv, depth, _, _ in result.broken)
    return f"{' + '.join(result.mix)}: {broken}"


def sweep_lines(cells: list[CellResult], traces: bool) -> list[str]:
    """A table of cells (failing mixes, the smallest), then each cell's failing mixes."""
    header = ("variant", "environment", "mixes", "failing", "smallest failing mix", "states")
    table = [header]
    for cell in cells:
        smallest = cell.smallest
        table.append(
            (
                cell.variant,
                cell.environment,
                str(cell.mixes),
                str(len(cell.failing)),
                "-" if smallest is None else _mix_text(smallest),
                str(cell.states),
            )
        )
    widths = [max(len(line[col]) for line in table) for col in range(len(header))]
    out = ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) for line in table]
    for cell in cells:
        if not cell.failing:
            continue
        out.append("")
        out.append(f"{cell.variant} / {cell.environment}: {len(cell.failing)} failing mixes")
        for result in cell.failing:
            out.append(f"  {_mix_text(result)}")
            if traces:
                for _, _, text, moves in result.broken:
                    out.append(f"    {text}")
                    out.append(f"    {', '.join(move.label() for move in moves)}")
    failing = sum(len(cell.failing) for cell in cells)
    total = sum(cell.mixes for cell in cells)
    out.append("")
    out.append(
        f"{failing} of {total} mixes fail in {sum(bool(c.failing) for c in cells)} of "
        f"{len(cells)} cells ({sum(c.states for c in cells)} states)"
    )
    return out
