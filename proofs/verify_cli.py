"""`ackguard verify`: z3 verdicts for the catalog, with traces a reviewer can read."""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from model import Invariant
from proofs import choices
from proofs.render import trace_json, trace_lines
from proofs.render_formats import itf, mermaid
from proofs.smt.bmc import COUNTEREXAMPLE, METHOD_KIND, METHODS, CellResult
from proofs.smt.verify import DEFAULT_JOBS, DEFAULT_TIMEOUT, Cell, run

_EXAMPLE = """examples:
  ackguard verify                                   # the whole catalog
  ackguard verify --variant lock3 --scenario replacement-first --trace
  ackguard verify --variant unlocked --invariant no-unintended-delete --mermaid
  ackguard verify --json --itf traces/              # for CI: JSON, and one ITF file each

exit status: 0 when every verdict matches the catalog's expectation, 1 when one
does not (a proof where a bug was expected, a new counterexample, or unknown),
2 on bad arguments."""

INVARIANTS = {invariant.value: invariant for invariant in Invariant}


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text}")
    return value


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="z3 verdicts: shortest counterexamples and proofs for the catalog",
        description=textwrap.fill(
            "Check each (variant, invariant, environment) of the catalog with z3 over the "
            "chosen scenarios: bounded model checking finds the shortest counterexample, "
            "replayed through the model; where none exists, k-induction proves the invariant "
            "for the scenario's items and tasks. A cell is a counterexample if any scenario "
            "has one (the shortest is shown), proved if every scenario is proved, unknown "
            "otherwise.",
            width=78,
        ),
        epilog=_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--variant", action="append", metavar="V", help="repeatable")
    parser.add_argument("--scenario", action="append", metavar="S", help="repeatable")
    parser.add_argument(
        "--invariant",
        action="append",
        metavar="I",
        help=f"repeatable; one of: {', '.join(INVARIANTS)}",
    )
    parser.add_argument(
        "--environment",
        action="append",
        metavar="E",
        help="repeatable; base, all, or options joined by '+' (stale-copies, server-items, "
        "timeouts, rejections); default: the catalog's six columns",
    )
    parser.add_argument(
        "--trace", action="store_true", help="print each counterexample as a timeline"
    )
    parser.add_argument(
        "--mermaid", action="store_true", help="print each counterexample as a Mermaid diagram"
    )
    parser.add_argument(
        "--itf",
        metavar="FILE_OR_DIR",
        help="write counterexamples as ITF traces: into a directory, one file each, or into "
        "one FILE.json when there is exactly one",
    )
    parser.add_argument("--json", action="store_true", help="print the cells as JSON")
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"time limit of each cell, wall clock (default {DEFAULT_TIMEOUT:g}); a cell that "
        "runs out is unknown",
    )
    parser.add_argument(
        "--method",
        choices=METHODS,
        default=METHOD_KIND,
        help="how cells that hold are proved: k-induction (bounded model checking until no "
        "run goes on; the default) or invariant (the explorer's reachable states as a "
        "candidate inductive invariant, checked by z3)",
    )
    parser.add_argument(
        "--jobs",
        type=choices.positive_int,
        default=DEFAULT_JOBS,
        metavar="N",
        help=f"worker processes (default: one per core, here {DEFAULT_JOBS})",
    )
    parser.set_defaults(run=run_command)


def run_command(args: argparse.Namespace) -> int:
    variants = choices.variants(args.variant)
    scenarios = choices.scenarios(args.scenario)
    environments = choices.environments(args.environment)
    invariants = choices.pick("invariant", args.invariant, INVARIANTS)
    itf_target = _itf_target(args.itf) if args.itf else None
    started = time.perf_counter()
    cells = run(
        variants,
        scenarios,
        environments,
        invariants,
        args.timeout,
        args.jobs,
        args.method,
        progress=_progress if sys.stderr.isatty() else None,
    )
    elapsed = time.perf_counter() - started
    failing = [cell for cell in cells if cell.witness and cell.verdict == COUNTEREXAMPLE]
    if itf_target is not None:
        _write_itf(itf_target, failing)
    matched = all(cell.matched for cell in cells)
    if args.json:
        print(json.dumps([cell_json(cell, args.mermaid) for cell in cells], indent=2))
        return 0 if matched else 1
    _print_table(cells)
    for cell in failing:
        witness = cell.witness
        assert witness is not None
        result = witness.result
        if args.trace or args.mermaid:
            print()
            # the violation's text begins with the invariant's name
            print(f"{_title(result, invariant=result.violation is None)}: {_violation(result)}")
        if args.trace:
            assert result.trace is not None
            for line in trace_lines(result.config, result.trace):
                print(f"  {line}")
        if args.mermaid:
            assert result.trace is not None
            print()
            print(mermaid(result.config, result.trace, result.violation, _title(result)), end="")
    checks = sum(len(cell.scenarios) for cell in cells)
    mismatched = [cell for cell in cells if not cell.matched]
    print()
    shared = _shared(cells)
    if shared:
        print("checked once, for variants that are the same model in a scenario that calls")
        print("no site where they differ:")
        for line in shared:
            print(f"  {line}")
    if matched:
        print(
            f"every verdict matched the catalog's expectation ({len(cells)} cells, "
            f"{checks} checks, {elapsed:.1f} s)"
        )
    else:
        print(
            f"{len(mismatched)} OF {len(cells)} CELLS DID NOT MATCH the catalog's expectation "
            f"({checks} checks, {elapsed:.1f} s)"
        )
    return 0 if matched else 1


# -- output ---------------------------------------------------------------------


def _progress(done: int, total: int) -> None:
    """One line on a terminal, rewritten as each (variant, scenario) finishes."""
    end = "\r" if done < total else "\r" + " " * 60 + "\r"
    print(f"verify: {done} of {total} (variant, scenario) checked", end=end, file=sys.stderr)
    sys.stderr.flush()


def _title(result: CellResult, invariant: bool = True) -> str:
    config = result.config
    title = f"{config.variant.name} / {config.scenario.name} / {config.environment.name}"
    return f"{title} / {result.invariant.value}" if invariant else title


def _violation(result: CellResult) -> str:
    return result.violation.describe() if result.violation is not None else result.reason


def _shared(cells: list[Cell]) -> list[str]:
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


def _print_table(cells: list[Cell]) -> None:
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
        print(
            "  ".join(text.ljust(width) for text, width in zip(row, widths, strict=True)).rstrip()
        )
    for cell in cells:
        for verdict in cell.scenarios:
            if not verdict.matched:
                result = verdict.result
                why = f": {result.reason}" if result.reason else ""
                print(
                    f"  mismatch: {_title(result)}: {result.verdict}, expected "
                    f"{verdict.expected}{why}"
                )


def cell_json(cell: Cell, with_mermaid: bool = False) -> dict[str, Any]:
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
            data["mermaid"] = mermaid(result.config, result.trace, result.violation, _title(result))
    return data


def _itf_target(text: str) -> Path:
    path = Path(text)
    if path.suffix != ".json":
        if path.exists() and not path.is_dir():
            raise choices.UsageError(f"--itf {text}: not a directory (name a FILE.json or a DIR)")
        return path
    if path.parent and not path.parent.exists():
        raise choices.UsageError(f"--itf {text}: directory {path.parent} does not exist")
    return path


def _file_name(result: CellResult) -> str:
    config = result.config
    parts = (
        config.variant.name,
        config.scenario.name,
        config.environment.name,
        result.invariant.value,
    )
    return ".".join(re.sub(r"[^A-Za-z0-9_+-]", "_", part) for part in parts) + ".itf.json"


def _write_itf(target: Path, cells: list[Cell]) -> None:
    results = [cell.witness.result for cell in cells if cell.witness is not None]
    if target.suffix == ".json":
        if len(results) != 1:
            raise choices.UsageError(
                f"--itf {target}: {len(results)} counterexamples; name a directory, or narrow "
                "the run to one"
            )
        targets = [(target, results[0])]
    else:
        target.mkdir(parents=True, exist_ok=True)
        targets = [(target / _file_name(result), result) for result in results]
    for path, result in targets:
        assert result.trace is not None
        document = itf(result.config, result.trace, result.invariant, result.violation)
        path.write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {len(targets)} ITF trace(s) to {target}", file=sys.stderr)
