"""The table and findings of `ackguard conform`, and its reports as JSON."""

from __future__ import annotations

from typing import Any

from proofs.engines.conformance.run import CellReport, VariantReport
from proofs.engines.conformance.steps import format_steps


def cell_verdict(cell: CellReport) -> str:
    if cell.as_expected:
        return "as expected"
    if cell.mismatches:
        return "MISMATCH"
    return "NOT AS EXPECTED"


def table_lines(reports: list[VariantReport], hypothesis: dict[str, list[str]]) -> list[str]:
    out: list[str] = []
    header = (
        "variant",
        "session",
        "scenario",
        "environment",
        "sequences",
        "mismatches",
        "breaks",
        "verdict",
    )
    rows = [header]
    for report in reports:
        for cell in report.cells:
            breaks = ", ".join(
                f"{v.invariant.value} at {len(v.found.steps)}" for v in cell.violations
            )
            rows.append(
                (
                    report.variant.name,
                    cell.config.shape.name,
                    cell.config.scenario.name,
                    cell.config.environment.name,
                    str(cell.exhaustion.sequences),
                    str(len(cell.mismatches)),
                    breaks or "-",
                    cell_verdict(cell),
                )
            )
    widths = [max(len(row[col]) for row in rows) for col in range(len(header))]
    for row in rows:
        out.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
    out.append("")
    for report in reports:
        mismatches = sum(len(cell.mismatches) for cell in report.cells)
        traces = [trace for cell in report.cells for trace in cell.traces]
        reproduced = sum(trace.reproduced for trace in traces)
        out.append(
            f"{report.variant.name}: {report.sequences} sequences, {mismatches} mismatches, "
            f"{reproduced}/{len(traces)} explorer counterexamples reproduced, "
            f"{report.seconds:.2f} s"
        )
    for note in dict.fromkeys(note for report in reports for note in report.notes):
        out.append(f"note: {note}")
    for report in reports:
        for cell in report.cells:
            where = (
                f"{report.variant.name} / {cell.config.scenario.name} / "
                f"{cell.config.environment.name}"
            )
            for violation in cell.violations:
                model = "the model's own" if violation.same_as_model else "NOT the model's"
                out.append(f"\n{where}: {violation.invariant.value} ({model})")
                out.append(f"  {format_steps(violation.found.steps)}")
                out.append(f"  {violation.found.reason}")
            for invariant in cell.missed:
                out.append(
                    f"\n{where}: the implementation never broke {invariant.value} (expected)"
                )
            for failure in cell.mismatches:
                out.append(f"\n{where}: MISMATCH after {format_steps(failure.steps)}")
                out.append(f"  {failure.detail}")
            for trace in cell.traces:
                if not trace.reproduced:
                    out.append(
                        f"\n{where}: explorer trace for {trace.invariant.value} NOT reproduced"
                    )
                    out.append(f"  {format_steps(trace.steps)}: {trace.detail}")
    for variant, texts in hypothesis.items():
        for text in texts:
            out.append(f"\n{variant}: Hypothesis found a mismatch:\n{text}")
    return out


def variant_json(report: VariantReport, hypothesis: dict[str, list[str]]) -> dict[str, Any]:
    mismatches: list[dict[str, Any]] = [
        {
            "scenario": cell.config.scenario.name,
            "environment": cell.config.environment.name,
            "sequence": [str(step) for step in failure.steps],
            "detail": failure.detail,
        }
        for cell in report.cells
        for failure in cell.mismatches
    ]
    mismatches += [
        {"scenario": None, "environment": None, "sequence": [], "detail": text}
        for text in hypothesis.get(report.variant.name, [])
    ]
    violations = [
        {
            "scenario": cell.config.scenario.name,
            "environment": cell.config.environment.name,
            "invariant": violation.invariant.value,
            "expected": violation.expected.value,
            "sequence": [str(step) for step in violation.found.steps],
            "item": violation.found.item,
            "site": violation.found.site,
            "reason": violation.found.reason,
            "same_as_model": violation.same_as_model,
        }
        for cell in report.cells
        for violation in cell.violations
    ]
    traces = [trace for cell in report.cells for trace in cell.traces]
    return {
        "variant": report.variant.name,
        "sessions": sorted({cell.config.shape.name for cell in report.cells}),
        "notes": list(report.notes),
        "sequences": report.sequences,
        "mismatches": mismatches,
        "violations": violations,
        "missed": [
            {
                "scenario": cell.config.scenario.name,
                "environment": cell.config.environment.name,
                "invariant": invariant.value,
            }
            for cell in report.cells
            for invariant in cell.missed
        ],
        "traces_replayed": len(traces),
        "traces_reproduced": sum(trace.reproduced for trace in traces),
        "as_expected": report.as_expected and report.variant.name not in hypothesis,
        "seconds": round(report.seconds, 3),
    }
