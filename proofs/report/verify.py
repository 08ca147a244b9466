"""The verdict table of `ackguard verify`, its cells as JSON, and names for its traces."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from proofs.engines.smt.bmc import COUNTEREXAMPLE, CellResult
from proofs.engines.smt.verify import Cell
from proofs.report.formats import mermaid
from proofs.report.render import trace_json


def title(result: CellResult, invariant: bool = True) -> str:
    config = result.config
    title = f"{config.variant.name} / {config.scenario.name} / {config.environment.name}"
    return f"{title} / {result.invariant.value}" if invariant else title


def violation_text(result: CellResult) -> str:
    return result.violation.describe() if result.violation is not None else result.reason


def shared_lines(cells: list[Cell]) -> list[str]:
    """'overlapping-push: lock5 = lock3' for each variant that took the verdicts of
    another (`Config.behaviour`)."""
    pairs = {
        (v.scenario, v.result.config.variant.name, v.result.same_as)
        for cell in cells
        for v in cell.scenarios
        if v.result.same_as
    }
    return [f"{scenario}: {mine} = {theirs}" for scenario, mine, theirs in sorted(pairs)]


def verdict_text(cell: Cell) -> str:
    if cell.verdict == COUNTEREXAMPLE:
        return f"counterexample at depth {cell.depth}"
    return cell.verdict


def table_lines(cells: Sequence[Cell]) -> list[str]:
    out: list[str] = []
    header = (
        "variant",
        "invariant",
        "environment",
        "verdict",
        "scenario",
        "method",
        "bound",
        "seconds",
        "expected",
    )
    rows = [header]
    for cell in cells:
        witness = cell.witness
        scenario = witness.scenario if witness is not None else f"all {len(cell.scenarios)}"
        rows.append(
            (
                cell.variant.name,
                cell.invariant.value,
                cell.environment.name,
                verdict_text(cell),
                scenario,
                cell.method,
                cell.bound,
                f"{cell.seconds:.2f}",
                cell.expected + ("" if cell.matched else "  <-- MISMATCH"),
            )
        )
    widths = [max(len(row[col]) for row in rows) for col in range(len(header))]
    for row in rows:
        out.append(
            "  ".join(text.ljust(width) for text, width in zip(row, widths, strict=True)).rstrip()
        )
    for cell in cells:
        for verdict in cell.scenarios:
            if not verdict.matched:
                result = verdict.result
                why = f": {result.reason}" if result.reason else ""
                out.append(
                    f"  mismatch: {title(result)}: {result.verdict}, expected "
                    f"{verdict.expected}{why}"
                )
    return out


def cell_json(cell: Cell, with_mermaid: bool = False) -> dict[str, Any]:
    """One verdict cell for `--json` and `docs/variants.md`, with its trace if it has one."""
    witness = cell.witness
    result = witness.result if witness is not None else None
    data: dict[str, Any] = {
        "variant": cell.variant.name,
        "invariant": cell.invariant.value,
        "environment": cell.environment.name,
        "scenario": witness.scenario if witness is not None else None,
        "verdict": cell.verdict,
        "expected": cell.expected,
        "matched": cell.matched,
        "depth": cell.depth,
        "method": cell.method,
        "bound": cell.bound,
        "seconds": round(cell.seconds, 4),
        "violation": None
        if result is None or result.violation is None
        else result.violation.describe(),
        "reason": None if result is None or not result.reason else result.reason,
        "trace": None,
        "scenarios": [
            {
                "scenario": verdict.scenario,
                "verdict": verdict.result.verdict,
                "expected": verdict.expected,
                "matched": verdict.matched,
                "depth": verdict.result.depth,
                "method": verdict.result.method,
                "bound": verdict.result.bound,
                "seconds": round(verdict.result.seconds, 4),
                "same_model_as": verdict.result.same_as or None,
            }
            for verdict in cell.scenarios
        ],
    }
    if result is not None and result.trace is not None:
        data["trace"] = trace_json(result.config, result.trace)
        if with_mermaid:
            data["mermaid"] = mermaid(result.config, result.trace, result.violation, title(result))
    return data


def itf_file_name(result: CellResult) -> str:
    config = result.config
    parts = (
        config.variant.name,
        config.scenario.name,
        config.environment.name,
        result.invariant.value,
    )
    return ".".join(re.sub(r"[^A-Za-z0-9_+-]", "_", part) for part in parts) + ".itf.json"
