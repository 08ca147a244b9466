"""`ackguard conform`: the implementation against the model, in lockstep."""

from __future__ import annotations

import argparse
import json
import logging
from typing import Any

from model import Environment
from proofs import choices
from proofs.conformance.machine import conformance_machine, machine_settings
from proofs.conformance.run import DEFAULT_DEPTH, CellReport, VariantReport, check_variant
from proofs.conformance.steps import format_steps

_EXAMPLE = """\
examples:
  ackguard conform --variant lock3 --scenario replacement-first --depth 8
  ackguard conform --variant lock5 --environment all
  ackguard conform --json

exit status: 0 when every variant breaks exactly what the catalog expects (no mismatch,
every counterexample reproduced), 1 when one does not, 2 on bad input."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "conform",
        help="check the asyncio implementation against the model, step by step",
        description=(
            "Drive the implementation (impl/) and the model in lockstep over every stimulus "
            "sequence up to a depth, and replay every counterexample the explorer finds. "
            "Per variant: sequences explored, mismatches between implementation and model, "
            "and the invariants the implementation breaks, each with its shortest failing "
            "sequence."
        ),
        epilog=_EXAMPLE,
    )
    choices.add_catalog_arguments(parser)
    parser.add_argument(
        "--environment",
        action="append",
        metavar="E",
        help="base, all, or options joined by '+' (repeatable; default: each scenario's own)",
    )
    parser.add_argument(
        "--depth",
        type=choices.positive_int,
        default=DEFAULT_DEPTH,
        metavar="D",
        help=f"longest stimulus sequence (default {DEFAULT_DEPTH}: every catalog sequence)",
    )
    parser.add_argument(
        "--hypothesis",
        type=choices.positive_int,
        metavar="N",
        help="also run N Hypothesis examples per cell with bursts and random schedules",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    variants = choices.variants(args.variant)
    scenarios = choices.scenarios(args.scenario)
    environments: list[Environment] | None = None
    if args.environment:
        environments = choices.environments(args.environment)
    quiet = logging.getLogger("impl")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # timeouts and rejections are logged by design
    try:
        reports = [check_variant(v, scenarios, environments, args.depth) for v in variants]
        hypothesis_failures = _hypothesis(reports, args.hypothesis) if args.hypothesis else {}
    finally:
        quiet.setLevel(level)
    ok = all(report.as_expected for report in reports) and not hypothesis_failures
    if args.json:
        print(json.dumps([_json(r, hypothesis_failures) for r in reports], indent=2))
    else:
        _print(reports, hypothesis_failures)
        print()
        print(
            "every variant behaves as the catalog expects"
            if ok
            else "SOME VARIANTS DO NOT BEHAVE AS THE CATALOG EXPECTS"
        )
    return 0 if ok else 1


def _hypothesis(reports: list[VariantReport], examples: int) -> dict[str, list[str]]:
    """Mismatches found by scheduled Hypothesis runs, by variant name."""
    from hypothesis.stateful import run_state_machine_as_test

    found: dict[str, list[str]] = {}
    for report in reports:
        for cell in report.cells:
            machine = conformance_machine(cell.config, scheduled=True)
            try:
                run_state_machine_as_test(machine, settings=machine_settings(examples))
            except Exception as error:  # a mismatch, with Hypothesis's steps as notes
                notes = "\n".join(getattr(error, "__notes__", []))
                found.setdefault(report.variant.name, []).append(f"{error}\n{notes}")
    return found


def _verdict(cell: CellReport) -> str:
    if cell.as_expected:
        return "as expected"
    if cell.mismatches:
        return "MISMATCH"
    return "NOT AS EXPECTED"


def _print(reports: list[VariantReport], hypothesis: dict[str, list[str]]) -> None:
    header = ("variant", "scenario", "environment", "sequences", "mismatches", "breaks", "verdict")
    rows = [header]
    for report in reports:
        for cell in report.cells:
            breaks = ", ".join(
                f"{v.invariant.value} at {len(v.found.steps)}" for v in cell.violations
            )
            rows.append(
                (
                    report.variant.name,
                    cell.config.scenario.name,
                    cell.config.environment.name,
                    str(cell.exhaustion.sequences),
                    str(len(cell.mismatches)),
                    breaks or "-",
                    _verdict(cell),
                )
            )
    widths = [max(len(row[col]) for row in rows) for col in range(len(header))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
    print()
    for report in reports:
        mismatches = sum(len(cell.mismatches) for cell in report.cells)
        traces = [trace for cell in report.cells for trace in cell.traces]
        reproduced = sum(trace.reproduced for trace in traces)
        print(
            f"{report.variant.name}: {report.sequences} sequences, {mismatches} mismatches, "
            f"{reproduced}/{len(traces)} explorer counterexamples reproduced, "
            f"{report.seconds:.2f} s"
        )
    for report in reports:
        for cell in report.cells:
            where = (
                f"{report.variant.name} / {cell.config.scenario.name} / "
                f"{cell.config.environment.name}"
            )
            for violation in cell.violations:
                model = "the model's own" if violation.same_as_model else "NOT the model's"
                print(f"\n{where}: {violation.invariant.value} ({model})")
                print(f"  {format_steps(violation.found.steps)}")
                print(f"  {violation.found.reason}")
            for invariant in cell.missed:
                print(f"\n{where}: the implementation never broke {invariant.value} (expected)")
            for failure in cell.mismatches:
                print(f"\n{where}: MISMATCH after {format_steps(failure.steps)}")
                print(f"  {failure.detail}")
            for trace in cell.traces:
                if not trace.reproduced:
                    print(f"\n{where}: explorer trace for {trace.invariant.value} NOT reproduced")
                    print(f"  {format_steps(trace.steps)}: {trace.detail}")
    for variant, texts in hypothesis.items():
        for text in texts:
            print(f"\n{variant}: Hypothesis found a mismatch:\n{text}")


def _json(report: VariantReport, hypothesis: dict[str, list[str]]) -> dict[str, Any]:
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
