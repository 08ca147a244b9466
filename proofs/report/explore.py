"""The table and traces of `ackguard explore`, and its rows as JSON."""

from __future__ import annotations

from typing import Any

from proofs.engines.explore import Exploration
from proofs.report.render import trace_json, trace_lines


def rows(result: Exploration) -> list[dict[str, Any]]:
    config = result.config
    rows = []
    for finding in result.findings:
        expected = config.variant.expected(
            config.scenario.name, config.environment, finding.invariant
        )
        rows.append(
            {
                "variant": config.variant.name,
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
            }
        )
    return rows


def table_lines(rows: list[dict[str, Any]], results: list[Exploration], traces: bool) -> list[str]:
    out: list[str] = []
    header = ("variant", "scenario", "environment", "invariant", "verdict", "expected", "states")
    table = [header] + [
        (
            row["variant"],
            row["scenario"],
            row["environment"],
            row["invariant"],
            row["verdict"] + ("" if row["depth"] is None else f" at depth {row['depth']}"),
            row["expected"] + ("" if row["verdict"] == row["expected"] else "  <-- MISMATCH"),
            str(row["states"]),
        )
        for row in rows
    ]
    widths = [max(len(line[col]) for line in table) for col in range(len(header))]
    for line in table:
        out.append("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)))
    if traces:
        for result in results:
            for finding in result.findings:
                if finding.trace is None or finding.violation is None:
                    continue
                config = result.config
                out.append("")
                out.append(
                    f"{config.variant.name} / {config.scenario.name} / "
                    f"{config.environment.name}: {finding.violation.describe()}"
                )
                for line in trace_lines(config, finding.trace):
                    out.append(f"  {line}")
    return out
