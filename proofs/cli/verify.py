"""`ackguard verify`: a verdict per cell, with its scope, and traces a reviewer can read."""

from __future__ import annotations

import argparse
import json
import math
import sys
import textwrap
import time
from pathlib import Path

from attrs import evolve

from model import CASES, CASES_BY_NAME, Invariant
from proofs.adapters.registry import adapter_factory
from proofs.cli import options as choices
from proofs.engines.case_file import CaseRecord, load_case_file
from proofs.engines.verdicts import (
    COUNTEREXAMPLE,
    DEFAULT_FOL_SECONDS,
    DEFAULT_JOBS,
    DEFAULT_TIMEOUT,
    METHOD_DEFAULT,
    METHODS,
    CellVerdict,
    Witness,
    replay_in,
    run,
)
from proofs.errors import InputError, Interrupted, UsageError
from proofs.report.casebook import JudgedCase, case_json, case_lines, judged, summary_line
from proofs.report.formats import itf, mermaid
from proofs.report.render import trace_lines
from proofs.report.verify import (
    cell_json,
    itf_file_name,
    shared_lines,
    table_lines,
    title,
    violation_text,
)

_EXAMPLE = """examples:
  ackguard verify                                   # the whole catalog
  ackguard verify --variant lock3 --scenario replacement-first --trace
  ackguard verify --variant unlocked --invariant no-unintended-delete --mermaid
  ackguard verify --json --itf traces/              # for CI: JSON, and one ITF file each
  ackguard verify --method bmc                      # the per-scenario z3 engines instead
  ackguard verify --case all                        # the casebook (docs/casebook.md)
  ackguard verify --case-file my-report.json        # a case written as data

exit status: 0 when every verdict matches the catalog's expectation, 1 when one
does not (a proof where a bug was expected, a new counterexample, unknown, or
a committed first-order certificate that no longer checks),
2 on bad arguments, an --itf path that cannot be written (checked before any
solving) or a case file that does not follow its schema, 3 on an error in
ackguard itself, 130 on Ctrl-C (after printing the cells done so far, marked
incomplete)."""

#: The session shapes the per-scenario z3 encoding models (`smt.encoding`).
_Z3_SHAPES = ("openai", "three-way")

INVARIANTS = {invariant.value: invariant for invariant in Invariant}


#: The longest time limit: z3 takes it in milliseconds as an unsigned 32-bit number
#: (about 49 days); a week is more than any cell of the catalog needs.
MAX_TIMEOUT = 7 * 24 * 3600.0


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or not 0 < value <= MAX_TIMEOUT:
        raise argparse.ArgumentTypeError(
            f"expected a number of seconds above 0 and at most {MAX_TIMEOUT:g} (a week), "
            f"got {text!r}"
        )
    return value


def _fol_seconds(text: str) -> float:
    """Seconds as `--timeout` takes them, or 0: committed certificates only."""
    try:
        if float(text) == 0:
            return 0.0
    except ValueError:
        pass
    return _seconds(text)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="a verdict per cell: shortest counterexamples, and proofs with their scope",
        description=textwrap.fill(
            "Check each (variant, invariant, environment) of the catalog over the chosen "
            "scenarios. The explorer settles the scenarios exactly: a failing cell gets the "
            "counterexample with the fewest calls, then the shortest, replayed through the "
            "model and ackguard's implementation. A holding cell is proved by z3's "
            "first-order engine for every number of calls and items where a committed "
            "certificate of that engine still checks (by default it is asked for nothing "
            "else: --fol-seconds N lets it infer too), and otherwise keeps the explorer's "
            "proof for the scenarios and small mixes of calls; the scope column says "
            "which. --method bmc and --method invariant run the per-scenario z3 engines "
            "instead.",
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
        help=f"time limit of each job, wall clock (default {DEFAULT_TIMEOUT:g}): an explorer "
        "group or a proof (default method), a (variant, scenario) (bmc, invariant); a cell "
        "whose explorer or z3 run runs out is unknown, one whose first-order proof runs out "
        "keeps its bounded proof",
    )
    parser.add_argument(
        "--method",
        choices=METHODS,
        default=METHOD_DEFAULT,
        help="default: the explorer, and z3's first-order proofs where they reach; bmc: "
        "per-scenario z3 bounded model checking, proofs by k-induction; invariant: the same "
        "with the explorer's reachable states as a candidate inductive invariant",
    )
    choices.add_session_argument(parser)
    parser.add_argument(
        "--fol-seconds",
        type=_fol_seconds,
        default=DEFAULT_FOL_SECONDS,
        metavar="SECONDS",
        help="wall seconds each first-order proof may take, inference included; past it a "
        "cell keeps the explorer's bounded proof and says so (default "
        f"{DEFAULT_FOL_SECONDS:g}: only check the committed certificates, each once, "
        "beside the explorer; a cell without one keeps its bounded proof)",
    )
    parser.add_argument(
        "--jobs",
        type=choices.positive_int,
        default=DEFAULT_JOBS,
        metavar="N",
        help=f"worker processes (default: one per core, here {DEFAULT_JOBS})",
    )
    parser.add_argument(
        "--case",
        action="append",
        metavar="NAME",
        help="repeatable: judge a case of the casebook (docs/casebook.md) instead of the "
        "verify grid, every configuration of it (before the fix and each fix) under every "
        "environment column it names, each failing cell with its shortest counterexample "
        "as a timeline (--mermaid: and a diagram); `all`: every case",
    )
    parser.add_argument(
        "--case-file",
        action="append",
        metavar="PATH",
        help="repeatable: judge the case a file writes as data "
        "(proofs/schemas/case-file.schema.json; docs/casebook.md, 'Adding a report')",
    )
    parser.set_defaults(run=run_command)


def run_command(args: argparse.Namespace) -> int:
    if args.case or args.case_file:
        return run_cases(args)
    # a name given twice is checked once (`choices.pick`)
    # a variant record carries the session shape it is checked under: one per
    # meaningful (variant, shape) pair of those chosen
    # (--method bmc / invariant: the z3 encoding models the openai and three-way shapes
    # and no reconnect, so those are its defaults; asked for more, it says so, one line)
    per_scenario = args.method != METHOD_DEFAULT
    shapes = choices.sessions(args.session or (list(_Z3_SHAPES) if per_scenario else None))
    variants = [
        evolve(variant, shape=shape.name)
        for variant, shape in choices.pairs(choices.variants(args.variant), shapes)
    ]
    scenarios = choices.scenarios(args.scenario)
    environments = choices.environments(args.environment)
    if per_scenario and not args.environment:
        # its columns without the reconnect it does not model: `all` less reconnects
        environments = list(dict.fromkeys(evolve(env, reconnects=False) for env in environments))
    invariants = choices.pick("invariant", args.invariant, INVARIANTS)
    # checked before any solving: a path that cannot be written is found now, not
    # after minutes of work whose results would then be lost
    itf_target = _itf_target(args.itf) if args.itf else None
    started = time.perf_counter()
    total = len(variants) * len(invariants) * len(environments)
    try:
        cells = run(
            variants,
            scenarios,
            environments,
            invariants,
            args.timeout,
            args.jobs,
            args.method,
            progress=_progress if sys.stderr.isatty() else None,
            impl=replay_in(adapter_factory("impl")),
            fol_seconds=args.fol_seconds,
        )
    except Interrupted as stop:
        # Ctrl-C: the cells settled are shown; the rest are named, and the run is said
        # to be incomplete
        every = [cell for cell in stop.done if isinstance(cell, CellVerdict)]
        cells = [cell for cell in every if cell.complete]
        incomplete = (
            f"INTERRUPTED: {len(cells)} of {total} cells were checked before Ctrl-C; the run "
            "is incomplete, not a verdict"
        )
        _report(args, cells, time.perf_counter() - started, itf_target, incomplete)
        for line in _unfinished([cell for cell in every if not cell.complete]):
            print(line, file=sys.stderr if args.json else sys.stdout)
        return 130
    return _report(args, cells, time.perf_counter() - started, itf_target)


def _unfinished(cells: list[CellVerdict]) -> list[str]:
    """Per variant with cells left unfinished, how many."""
    lines = []
    for name in dict.fromkeys(cell.variant.name for cell in cells):
        mine = [cell for cell in cells if cell.variant.name == name]
        lines.append(f"  not finished: {name}, {len(mine)} of its cells")
    return lines


def _report(
    args: argparse.Namespace,
    cells: list[CellVerdict],
    elapsed: float,
    itf_target: Path | None,
    incomplete: str | None = None,
) -> int:
    """Print the cells as asked, then write their ITF files; the exit status.

    An `incomplete` run (Ctrl-C) ends with that line instead of a verdict on the
    whole: on standard output under the table, on standard error with `--json`.
    """
    failing = [cell for cell in cells if cell.witness and cell.verdict == COUNTEREXAMPLE]
    matched = all(cell.matched for cell in cells)
    if args.json:
        print(json.dumps([cell_json(cell, args.mermaid) for cell in cells], indent=2))
        if incomplete is not None:
            print(f"ackguard verify: {incomplete}", file=sys.stderr)
    else:
        _print_table(args, cells, failing, elapsed, incomplete)
    if itf_target is not None:
        # after the results are printed, so that no error here loses them
        sys.stdout.flush()
        _write_itf(itf_target, failing)
    return 0 if matched else 1


def _print_table(
    args: argparse.Namespace,
    cells: list[CellVerdict],
    failing: list[CellVerdict],
    elapsed: float,
    incomplete: str | None,
) -> None:
    matched = all(cell.matched for cell in cells)
    for line in table_lines(cells):
        print(line)
    for cell in failing:
        witness = cell.witness
        assert witness is not None and witness.trace is not None
        if args.trace or args.mermaid:
            print()
            # the violation's text begins with the invariant's name
            heading = title(witness, invariant=witness.violation is None)
            print(f"{heading}: {violation_text(cell)}")
        if args.trace:
            for line in trace_lines(witness.config, witness.trace):
                print(f"  {line}")
        if args.mermaid:
            print()
            print(mermaid(witness.config, witness.trace, witness.violation, title(witness)), end="")
    checks = sum(len(cell.scenarios) for cell in cells)
    mismatched = [cell for cell in cells if not cell.matched]
    print()
    shared = shared_lines(cells)
    if shared:
        print("checked once, for variants that are the same model in a scenario that calls")
        print("no site where they differ:")
        for line in shared:
            print(f"  {line}")
    if incomplete is not None:
        print(f"{incomplete} ({checks} checks, {elapsed:.1f} s)")
    elif matched:
        print(
            f"every verdict matched the catalog's expectation ({len(cells)} cells, "
            f"{checks} checks, {elapsed:.1f} s)"
        )
    else:
        print(
            f"{len(mismatched)} OF {len(cells)} CELLS DID NOT MATCH the catalog's expectation "
            f"({checks} checks, {elapsed:.1f} s)"
        )


# -- the casebook ------------------------------------------------------------------

#: Options of the verify grid that a case does not take: it names its own
#: configurations, columns and invariants, and the explorer settles every cell.
_GRID_ONLY = {
    "variant": None,
    "scenario": None,
    "invariant": None,
    "environment": None,
    "session": None,
    "itf": None,
    "method": METHOD_DEFAULT,
    "timeout": DEFAULT_TIMEOUT,
    "fol_seconds": DEFAULT_FOL_SECONDS,
    "jobs": DEFAULT_JOBS,
}


def case_records(names: list[str] | None, files: list[str] | None) -> list[CaseRecord]:
    """The catalog's cases named (`all`: every one), then each file's, each once."""
    known = {"all": None, **CASES_BY_NAME}
    records = []
    for name in dict.fromkeys(names or []):
        if name not in known:
            have = ", ".join(known) if CASES_BY_NAME else "all (the catalog has no case yet)"
            raise UsageError(f"unknown case {name!r}; choose from: {have}")
        if name == "all" and not CASES:
            raise UsageError("--case all: the catalog has no case yet (model/cases.py)")
        chosen = list(CASES) if name == "all" else [CASES_BY_NAME[name]]
        records += [CaseRecord(case) for case in chosen]
    records = list({record.name: record for record in records}.values())
    for path in dict.fromkeys(files or []):
        record = load_case_file(path)
        if any(other.name == record.name for other in records):
            raise UsageError(f"--case-file {path}: the case {record.name!r} is named twice")
        records.append(record)
    return records


def run_cases(args: argparse.Namespace) -> int:
    """`--case` / `--case-file`: judge the cases (`CaseRecord.judge`) and print each
    as a table with its counterexamples; 0 when every cell matches its record."""
    for option, default in _GRID_ONLY.items():
        if getattr(args, option) != default:
            flag = "--" + option.replace("_", "-")
            raise UsageError(
                f"{flag} is for the verify grid; a case names its own configurations, "
                "columns and invariants (drop one or the other)"
            )
    records = case_records(args.case, args.case_file)
    started = time.perf_counter()
    done: list[JudgedCase] = []
    try:
        for record in records:
            done.append(judged(record))
    except KeyboardInterrupt:
        # Ctrl-C: the cases judged in full are shown; the rest are named, and the run
        # is said to be incomplete instead of given a verdict
        incomplete = (
            f"INTERRUPTED: {len(done)} of {len(records)} cases were judged before Ctrl-C; "
            "the run is incomplete, not a verdict"
        )
        _report_cases(args, done, time.perf_counter() - started, incomplete)
        left = ", ".join(record.name for record in records[len(done) :])
        print(f"  not finished: {left}", file=sys.stderr if args.json else sys.stdout)
        return 130
    return _report_cases(args, done, time.perf_counter() - started)


def _report_cases(
    args: argparse.Namespace,
    done: list[JudgedCase],
    elapsed: float,
    incomplete: str | None = None,
) -> int:
    """Print the cases as asked; the exit status. An `incomplete` run ends with that
    line instead of the verdict on the whole (on standard error with `--json`)."""
    if args.json:
        print(json.dumps([case_json(case, args.mermaid) for case in done], indent=2))
        if incomplete is not None:
            print(f"ackguard verify: {incomplete}", file=sys.stderr)
    else:
        for case in done:
            for line in case_lines(case, with_mermaid=args.mermaid):
                print(line)
            print()
        print(summary_line(done, elapsed) if incomplete is None else incomplete)
    return 0 if all(case.matched for case in done) else 1


# -- output ---------------------------------------------------------------------


def _progress(done: int, total: int, unit: str) -> None:
    """One line on a terminal, rewritten as each piece of work finishes."""
    end = "\r" if done < total else "\r" + " " * 60 + "\r"
    print(f"verify: {done} of {total} {unit}", end=end, file=sys.stderr)
    sys.stderr.flush()


def _itf_target(text: str) -> Path:
    """Where `--itf` writes, checked to be writable before any work starts.

    A name ending in `.json` is one file, in a directory that must exist; any
    other name is a directory, which must exist or have a parent that does (it
    is then made, and the line that says what was written says so).
    """
    path = Path(text)
    if path.suffix == ".json":
        return choices.writable_file("--itf", text)
    if path.exists() and not path.is_dir():
        raise UsageError(f"--itf {text}: not a directory (name a FILE.json or a DIR)")
    choices.writable_directory("--itf", text, path if path.exists() else path.parent)
    return path


def _write_itf(target: Path, cells: list[CellVerdict]) -> None:
    witnesses: list[Witness] = [cell.witness for cell in cells if cell.witness is not None]
    made = False
    if target.suffix == ".json":
        if len(witnesses) != 1:
            raise UsageError(
                f"--itf {target}: {len(witnesses)} counterexamples; name a directory, or narrow "
                "the run to one"
            )
        targets = [(target, witnesses[0])]
    else:
        made = not target.exists()
        target.mkdir(exist_ok=True)
        targets = [(target / itf_file_name(witness), witness) for witness in witnesses]
    for path, witness in targets:
        assert witness.trace is not None
        document = itf(witness.config, witness.trace, witness.invariant, witness.violation)
        try:
            path.write_text(json.dumps(document, indent=1) + "\n")
        except OSError as error:
            raise InputError(f"--itf {path}: cannot write: {error.strerror}") from None
    where = f"{target} (a new directory)" if made else str(target)
    print(f"wrote {len(targets)} ITF trace(s) to {where}", file=sys.stderr)
