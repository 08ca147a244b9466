"""The verdict table of `ackguard verify`, its cells as JSON, and names for its traces."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from proofs.engines.verdicts import COUNTEREXAMPLE, CellVerdict, FirstOrder, Witness
from proofs.report.formats import mermaid
from proofs.report.render import trace_json


def title(witness: Witness, invariant: bool = True) -> str:
    config = witness.config
    title = f"{config.variant.name} / {config.scenario.name} / {config.environment.name}"
    return f"{title} / {witness.invariant.value}" if invariant else title


def violation_text(cell: CellVerdict) -> str:
    witness = cell.witness
    if witness is not None and witness.violation is not None:
        return witness.violation.describe()
    return cell.reason


def shared_lines(cells: Sequence[CellVerdict]) -> list[str]:
    """'overlapping-push: lock5 = lock3' for each variant that took the verdicts of
    another (`Config.behaviour`; `--method bmc` only)."""
    pairs = {
        (check.scenario, cell.variant.name, check.same_model_as)
        for cell in cells
        for check in cell.scenarios
        if check.same_model_as
    }
    return [f"{scenario}: {mine} = {theirs}" for scenario, mine, theirs in sorted(pairs)]


def first_order_lines(cells: Sequence[CellVerdict]) -> list[str]:
    """One line per first-order job the cells' verdicts rest on: what it checked, its
    answer, and the other columns that took that answer (one first-order system)."""
    jobs: dict[tuple[str, str, str], tuple[FirstOrder, list[str]]] = {}
    covering: dict[tuple[str, str, str], bool] = {}
    for cell in cells:
        job = cell.first_order
        if job is None or not job.checked_on:
            continue
        where = (cell.variant.name, cell.session, job.checked_on)
        _, columns = jobs.setdefault(where, (job, []))
        covering[where] = covering.get(where, False) or bool(job.cover)
        if cell.environment.name not in columns:
            columns.append(cell.environment.name)
    out = []
    for (variant, session, checked_on), (job, columns) in jobs.items():
        what = f"certificate {job.certificate}" if job.certificate else "inference"
        others = [name for name in columns if name != checked_on]
        line = f"{variant} / {session} / {checked_on}: {what}: {job.status} ({job.seconds:.2f} s)"
        if others and covering[(variant, session, checked_on)]:
            line += (
                f"; it proves {', '.join(others)} too (each one's first-order system is "
                "contained in this one's)"
            )
        elif others:
            line += f"; the same answer for {', '.join(others)}"
        out.append(line)
    return out


def verdict_text(cell: CellVerdict) -> str:
    if cell.verdict == COUNTEREXAMPLE:
        return f"counterexample at depth {cell.depth}"
    if cell.by_construction:
        return f"{cell.verdict} (by construction)"
    return cell.verdict


def table_lines(cells: Sequence[CellVerdict]) -> list[str]:
    out: list[str] = []
    header = (
        "variant",
        "session",
        "invariant",
        "environment",
        "verdict",
        "scope",
        "scenario",
        "method",
        "seconds",
        "expected",
    )
    rows = [header]
    for cell in cells:
        scenario = cell.scenario if cell.scenario is not None else f"all {len(cell.scenarios)}"
        rows.append(
            (
                cell.variant.name,
                cell.session,
                cell.invariant.value,
                cell.environment.name,
                verdict_text(cell),
                cell.scope or "-",
                scenario,
                cell.method,
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
        name = (
            f"{cell.variant.name} / {cell.session} / {cell.invariant.value} / "
            f"{cell.environment.name}"
        )
        for check in cell.scenarios:
            if not check.matched:
                out.append(
                    f"  mismatch: {name}, scenario {check.scenario}: {check.verdict}, expected "
                    f"{check.expected}" + (f": {cell.reason}" if cell.reason else "")
                )
        if cell.stale_certificate:
            out.append(
                f"  mismatch: {name}: the committed certificate {cell.stale_certificate} no "
                f"longer checks, so the proof is bounded: {cell.reason}"
            )
        elif not cell.matched and all(check.matched for check in cell.scenarios):
            why = cell.reason or (cell.witness.impl if cell.witness is not None else "")
            out.append(f"  mismatch: {name}: {cell.verdict}, expected {cell.expected}: {why}")
    notes = [c for c in cells if c.reason and c.verdict != COUNTEREXAMPLE and c.matched]
    if notes:
        out.append("")
        out.append("why a proof is bounded or a cell unknown:")
        out += [
            f"  {c.variant.name} / {c.invariant.value} / {c.environment.name}: {c.reason}"
            for c in notes
        ]
    jobs = first_order_lines(cells)
    if jobs:
        out.append("")
        out.append("first-order jobs, one per first-order system or one for every column whose")
        out.append("system the checked one contains (columns that differ only in options that")
        out.append("engine leaves out take the same answer):")
        out += [f"  {line}" for line in jobs]
    return out


def cell_json(cell: CellVerdict, with_mermaid: bool = False) -> dict[str, Any]:
    """One verdict cell for `--json` and `docs/variants.md`, with its trace if it has one."""
    witness = cell.witness
    data: dict[str, Any] = {
        "variant": cell.variant.name,
        "session": cell.session,
        "invariant": cell.invariant.value,
        "environment": cell.environment.name,
        "scenario": cell.scenario,
        "verdict": cell.verdict,
        "expected": cell.expected,
        "matched": cell.matched,
        "depth": cell.depth,
        "method": cell.method,
        "scope": cell.scope,
        "assumptions": list(cell.assumptions),
        "bound": cell.bound,
        "seconds": round(cell.seconds, 4),
        "violation": None
        if witness is None or witness.violation is None
        else witness.violation.describe(),
        "reason": cell.reason or None,
        "by_construction": cell.by_construction,
        "calls": None
        if witness is None or witness.trace is None
        else [call.site for call in witness.config.scenario.calls],
        "impl_replay": None if witness is None or not witness.impl else witness.impl,
        "first_order": None if cell.first_order is None else _first_order_json(cell.first_order),
        "trace": None,
        "scenarios": [
            {
                "scenario": check.scenario,
                "verdict": check.verdict,
                "expected": check.expected,
                "matched": check.matched,
                "depth": check.depth,
                "method": check.method,
                "bound": check.bound,
                "seconds": round(check.seconds, 4),
                "same_model_as": check.same_model_as or None,
            }
            for check in cell.scenarios
        ],
    }
    if witness is not None and witness.trace is not None:
        data["trace"] = trace_json(witness.config, witness.trace)
        if with_mermaid:
            data["mermaid"] = mermaid(
                witness.config, witness.trace, witness.violation, title(witness)
            )
    return data


def _first_order_json(job: FirstOrder) -> dict[str, Any]:
    return {
        "status": job.status,
        "certificate": job.certificate or None,
        "checked_on": job.checked_on or None,
        "seconds": round(job.seconds, 4),
        "cover": job.cover or None,
    }


def itf_file_name(witness: Witness) -> str:
    config = witness.config
    parts = (
        config.variant.name,
        config.scenario.name,
        config.environment.name,
        witness.invariant.value,
    )
    return ".".join(re.sub(r"[^A-Za-z0-9_+-]", "_", part) for part in parts) + ".itf.json"
