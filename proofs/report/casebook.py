"""The casebook as people and machines read it: `ackguard verify --case` tables and
JSON, and `docs/casebook.md`, all from the cells `proofs.engines.casebook` judges.

What a fix closes, leaves open or opens is worked out here from the cells (a cell
that fails before the fix and holds after it is closed), so the judge's records stay
as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from attrs import frozen

from model import Environment, Invariant, Move, Verdict
from model.cases import Fix
from proofs.engines.case_file import CaseRecord
from proofs.engines.casebook import CaseVerdict
from proofs.report.formats import mermaid
from proofs.report.render import trace_json, trace_lines


@frozen
class JudgedCase:
    """One case and every cell judged for it, the configuration before first."""

    record: CaseRecord
    cells: tuple[CaseVerdict, ...]

    @property
    def matched(self) -> bool:
        return all(cell.matches for cell in self.cells)

    def of(self, fix: Fix) -> list[CaseVerdict]:
        return [cell for cell in self.cells if cell.fix == fix.name]

    def fix(self, cell: CaseVerdict) -> Fix:
        return next(fix for fix in self.record.case.configurations if fix.name == cell.fix)

    def why(self, cell: CaseVerdict) -> str:
        """The record's reason for an expected failure, if it gives one."""
        for expected in self.fix(cell).fails:
            if expected.invariant is cell.invariant and cell.environment.covers(
                expected.environment
            ):
                return expected.why
        return ""


def judged(record: CaseRecord) -> JudgedCase:
    """Every cell of `record`, judged now (`CaseRecord.judge`)."""
    return JudgedCase(record, record.judge())


def _mark(verdict: Verdict) -> str:
    return "✗ counterexample" if verdict is Verdict.COUNTEREXAMPLE else "✓ holds"


def _depth(cell: CaseVerdict) -> str:
    return "" if cell.trace is None else f" (depth {cell.trace.depth})"


# -- the command's table ------------------------------------------------------------


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in (headers, *rows)) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        return "  ".join(text.ljust(width) for text, width in zip(row, widths, strict=True))

    return [line(headers).rstrip(), "  ".join("-" * w for w in widths)] + [
        line(row).rstrip() for row in rows
    ]


def _violation(cell: CaseVerdict) -> str:
    """The violation's line without the invariant's name, which the title gives."""
    if cell.violation is None:
        return "a counterexample"
    return cell.violation.describe().removeprefix(f"{cell.invariant.value}: ")


def cell_title(judged: JudgedCase, cell: CaseVerdict) -> str:
    fix = judged.fix(cell)
    return (
        f"{cell.case} / {fix.name} ({fix.variant}, {fix.shape.name}) / "
        f"{cell.environment.name} / {cell.invariant.value}"
    )


def case_lines(judged: JudgedCase, with_mermaid: bool = False) -> list[str]:
    """One case as `ackguard verify --case` prints it: its table, then each failing
    cell's shortest counterexample as a timeline (and a Mermaid diagram if asked)."""
    case = judged.record.case
    where = f" (from {judged.record.path})" if judged.record.path else ""
    lines = [f"case {case.name}: {case.title}{where}"]
    rows = []
    for cell in judged.cells:
        fix = judged.fix(cell)
        verdict = _mark(cell.verdict) + _depth(cell)
        if not cell.matches:
            verdict += " MISMATCH"
        rows.append(
            [
                f"{fix.name} ({fix.variant}, {fix.shape.name})",
                fix.status or "-",
                cell.invariant.value,
                cell.environment.name,
                verdict,
                cell.expected.value,
                cell.scope,
            ]
        )
    headers = ("configuration", "status", "invariant", "environment", "verdict", "expected")
    lines += _table([*headers, "scope"], rows)
    for cell in judged.cells:
        if cell.trace is None:
            continue
        config = judged.record.config(judged.fix(cell), cell.environment)
        violation = _violation(cell)
        lines += ["", f"{cell_title(judged, cell)}: {violation}"]
        lines += [f"  {line}" for line in trace_lines(config, cell.trace)]
        if with_mermaid:
            diagram = mermaid(config, cell.trace, cell.violation, cell_title(judged, cell))
            lines += ["", *diagram.rstrip().splitlines()]
    return lines


def summary_line(cases: Sequence[JudgedCase], seconds: float) -> str:
    cells = [cell for case in cases for cell in case.cells]
    wrong = [cell for cell in cells if not cell.matches]
    if not wrong:
        return (
            f"every verdict matched the case records ({len(cases)} cases, {len(cells)} cells, "
            f"{seconds:.1f} s)"
        )
    return (
        f"{len(wrong)} OF {len(cells)} CELLS DID NOT MATCH the case records ({len(cases)} "
        f"cases, {seconds:.1f} s)"
    )


# -- JSON -------------------------------------------------------------------------


def case_json(judged: JudgedCase, with_mermaid: bool = False) -> dict[str, Any]:
    """One case for `ackguard verify --case --json` (`verify-output.schema.json`, `case`)."""
    record = judged.record
    case = record.case
    cells = []
    for cell in judged.cells:
        config = record.config(judged.fix(cell), cell.environment)
        data: dict[str, Any] = {
            "fix": cell.fix,
            "invariant": cell.invariant.value,
            "environment": cell.environment.name,
            "verdict": cell.verdict.value,
            "expected": cell.expected.value,
            "matched": cell.matches,
            "scope": cell.scope,
            "states": cell.states,
            "seconds": round(cell.seconds, 4),
            "depth": None if cell.trace is None else cell.trace.depth,
            "violation": None if cell.violation is None else cell.violation.describe(),
            "why": judged.why(cell) or None,
            "trace": None if cell.trace is None else trace_json(config, cell.trace),
        }
        if with_mermaid and cell.trace is not None:
            data["mermaid"] = mermaid(config, cell.trace, cell.violation, cell_title(judged, cell))
        cells.append(data)
    return {
        "case": case.name,
        "title": case.title,
        "reports": list(case.reports),
        "summary": case.summary,
        "scenario": case.scenario.name,
        "file": record.path or None,
        "matched": judged.matched,
        "configurations": [
            {
                "name": fix.name,
                "summary": fix.summary,
                "status": fix.status,
                "link": fix.link,
                "release": fix.release,
                "variant": fix.variant,
                "session": fix.shape.name,
            }
            for fix in case.configurations
        ],
        "cells": cells,
    }


# -- what each fix closes -----------------------------------------------------------

#: A cell's place in the case: (invariant, environment).
Key = tuple[Invariant, Environment]


@frozen
class FixEffect:
    """What a fix does to the cells that fail before it."""

    closes: tuple[CaseVerdict, ...]
    leaves_open: tuple[CaseVerdict, ...]
    #: Cells that hold before the fix and fail after it: the window it opens.
    opens: tuple[CaseVerdict, ...]


def fix_effect(judged: JudgedCase, fix: Fix) -> FixEffect:
    before = {(c.invariant, c.environment): c for c in judged.of(judged.record.case.before)}
    after = judged.of(fix)
    failed = {key for key, c in before.items() if c.verdict is Verdict.COUNTEREXAMPLE}

    def key(cell: CaseVerdict) -> Key:
        return (cell.invariant, cell.environment)

    return FixEffect(
        closes=tuple(c for c in after if key(c) in failed and c.verdict is Verdict.HOLDS),
        leaves_open=tuple(
            c for c in after if key(c) in failed and c.verdict is Verdict.COUNTEREXAMPLE
        ),
        opens=tuple(
            c for c in after if key(c) not in failed and c.verdict is Verdict.COUNTEREXAMPLE
        ),
    )


# -- docs/casebook.md -----------------------------------------------------------------


def _moves(cell: CaseVerdict) -> tuple[Move, ...]:
    return () if cell.trace is None else cell.trace.moves


def _counterexamples(judged: JudgedCase, cells: Sequence[CaseVerdict]) -> list[str]:
    """Each distinct counterexample among `cells` once (a trace that several columns
    share is shown with all of them), as a timeline and a Mermaid diagram."""
    lines: list[str] = []
    groups: dict[tuple[Invariant, tuple[Move, ...]], list[CaseVerdict]] = {}
    for cell in cells:
        if cell.trace is not None:
            groups.setdefault((cell.invariant, _moves(cell)), []).append(cell)
    for (invariant, _), group in groups.items():
        first = group[0]
        assert first.trace is not None
        config = judged.record.config(judged.fix(first), first.environment)
        columns = ", ".join(cell.environment.name for cell in group)
        lines += [
            f"**{invariant.value}**, under {columns}, at depth {first.trace.depth}: "
            f"{_violation(first)}",
            "",
        ]
        why = judged.why(first)
        if why:
            lines += [f"The record says why: {why.rstrip('.')}.", ""]
        lines += [f"{line.strip()}" for line in trace_lines(config, first.trace)]
        diagram = mermaid(config, first.trace, first.violation, cell_title(judged, first))
        lines += ["", "```mermaid", diagram.rstrip(), "```", ""]
    return lines


def _grid(judged: JudgedCase) -> list[str]:
    """Configurations by rows, (invariant, environment) by columns."""
    case = judged.record.case
    keys = [(i, e) for e in case.environments for i in case.invariants]
    lines = [
        "| configuration | " + " | ".join(f"{i.value} ({e.name})" for i, e in keys) + " |",
        "| --- |" + " --- |" * len(keys),
    ]
    for fix in case.configurations:
        cells = {(c.invariant, c.environment): c for c in judged.of(fix)}
        row = []
        for key in keys:
            cell = cells[key]
            failed = cell.verdict is Verdict.COUNTEREXAMPLE and cell.trace is not None
            text = f"✗ depth {cell.trace.depth}" if failed and cell.trace else "✓"
            if not cell.matches:
                text += f" (expected {cell.expected.value}!)"
            row.append(text)
        lines.append(f"| `{fix.name}` | " + " | ".join(row) + " |")
    lines.append("")
    scopes: dict[str, list[str]] = {}
    for cell in judged.cells:
        if cell.verdict is Verdict.HOLDS:
            where = f"`{cell.fix}` {cell.invariant.value} {cell.environment.name}"
            scopes.setdefault(cell.scope, []).append(where)
    lines += [f"- ✓ proved for {scope}: {', '.join(where)}." for scope, where in scopes.items()]
    return [*lines, ""] if scopes else lines


def _cells_text(cells: Sequence[CaseVerdict]) -> str:
    return ", ".join(f"{c.invariant.value} under {c.environment.name}" for c in cells) or "none"


def _sentence(text: str) -> str:
    """`text` as the start of a sentence."""
    return text[:1].upper() + text[1:]


def _configuration_line(fix: Fix) -> str:
    parts = [f"variant `{fix.variant}`, session `{fix.shape.name}`"]
    if fix.status:
        parts.append(fix.status)
    if fix.link:
        parts.append(f"<{fix.link}>")
    parts.append(f"release {fix.release}" if fix.release else "no release")
    parts.append(f"on the real code: {fix.confirmed}" if fix.confirmed else "not run on real code")
    return "; ".join(parts)


def case_section(judged: JudgedCase, level: str = "##") -> list[str]:
    """One case's section of the page: the report, the counterexample before the fix,
    the verdict per fix, and the command that reproduces it."""
    record = judged.record
    case = record.case
    calls = "; ".join(
        f"{call.site}"
        + (f" adds {', '.join(call.adds)}" if call.adds else "")
        + (f" drops {', '.join(call.drops)}" if call.drops else "")
        for call in case.scenario.calls
    )
    command = (
        f"ackguard verify --case-file {record.path}"
        if record.path
        else f"ackguard verify --case {case.name}"
    )
    lines = [f"{level} `{case.name}`: {case.title}", ""]
    if case.reports:
        lines += ["Reports: " + ", ".join(f"<{link}>" for link in case.reports) + ".", ""]
    lines += [
        case.summary,
        "",
        f"Scenario `{case.scenario.name}`: {calls}; the server starts with "
        f"[{', '.join(case.scenario.server)}]"
        + (
            f", and the model may create [{', '.join(case.scenario.server_pool)}]"
            if case.scenario.server_pool
            else ""
        )
        + ". Reproduce it with:",
        "",
        "```",
        command,
        "```",
        "",
    ]
    lines += _grid(judged)
    before = case.before
    failing = [c for c in judged.of(before) if c.verdict is Verdict.COUNTEREXAMPLE]
    lines += [
        f"{level}# Before the fix",
        "",
        f"{_sentence(before.summary)} ({_configuration_line(before)}).",
        "",
    ]
    if failing:
        lines += _counterexamples(judged, failing)
    else:
        lines += ["No cell fails before the fix: the case's scenario does not show the report.", ""]
    for fix in case.fixes:
        effect = fix_effect(judged, fix)
        lines += [
            f"{level}# `{fix.name}`",
            "",
            f"{_sentence(fix.summary)} ({_configuration_line(fix)}).",
            "",
            f"- closes: {_cells_text(effect.closes)};",
            f"- leaves open: {_cells_text(effect.leaves_open)};",
            f"- opens: {_cells_text(effect.opens)}.",
            "",
        ]
        lines += _counterexamples(judged, [*effect.leaves_open, *effect.opens])
    return lines


def render_casebook(cases: Sequence[JudgedCase], example: JudgedCase) -> str:
    """`docs/casebook.md`: every case of the catalog, then the how-to with `example`
    (a case file outside the catalog) judged as the command judges it."""
    lines = [
        "# The casebook: real reports, each a verdict",
        "",
        "<!-- generated by `python -m proofs.pages` from the cases of model/cases.py;",
        "     do not edit by hand: tests/proofs/test_casebook_surface.py fails when this page"
        " is out of date -->",
        "",
        "Each case is a report from a public tracker in this bug class, written as data",
        "(`model/cases.py`): a scenario, the configuration before the fix, and each fix or",
        "proposal as another configuration (an agent-side variant and a provider session",
        "shape). Every configuration is explored exhaustively on the case's scenario under",
        "each environment column of the case (`docs/model.md`), and each verdict is compared",
        "with what the record expects. In the tables ✗ is a counterexample (with the depth",
        "of the shortest one) and ✓ a proof, whose scope the list under each table gives",
        "(the explorer's: the case's scenario at every depth); a cell marked",
        "`expected ...!` does not match its record. A fix *closes* a cell that fails",
        "before it and holds with it, *leaves open* one that fails in both, and *opens* one",
        "that holds before it and fails with it.",
        "",
    ]
    if cases:
        lines += [
            "| case | title | configurations | matches its record |",
            "| --- | --- | --- | --- |",
        ]
        lines += [
            f"| [`{j.record.name}`](#{_anchor(j)}) | {j.record.case.title} | "
            f"{', '.join(f'`{fix.name}`' for fix in j.record.case.configurations)} | "
            f"{'yes' if j.matched else 'NO'} |"
            for j in cases
        ]
        lines.append("")
    else:
        lines += ["The catalog has no case yet.", ""]
    for case in cases:
        lines += case_section(case)
    lines += _how_to(example)
    return "\n".join(lines).rstrip() + "\n"


def _anchor(judged: JudgedCase) -> str:
    """GitHub's anchor of a case's heading."""
    text = f"{judged.record.name}: {judged.record.case.title}".lower()
    return "".join(ch for ch in text.replace(" ", "-") if ch.isalnum() or ch in "-_")


def _how_to(example: JudgedCase) -> list[str]:
    path = example.record.path
    return [
        "## Adding a report: a case file, no model code",
        "",
        "The next report is data. Write it as a case file (JSON, schema",
        "`proofs/schemas/case-file.schema.json`) and run",
        "",
        "```",
        "ackguard verify --case-file CASE.json",
        "```",
        "",
        "which judges it exactly as `--case` judges the catalog's: exit 0 when every cell",
        "matches the file's expectations, 1 when one does not, 2 (one line naming the file,",
        "the JSON path and what was expected) when the file is wrong. Step by step:",
        "",
        "1. **The sites.** Find the places in the code that push the chat context. A",
        "   place the catalog already has (`model/sites.py`: user-turn, tool-outputs,",
        "   interrupted-tool-outputs, replacement, cleanup, spoken-message) is named in",
        "   the scenario's calls. Another is a record under `sites`, as a site file writes",
        "   one (`ackguard audit --emit-sites` finds them): where its request comes from",
        "   (`mirror-snapshot`, `local-context`, `caller-copy`) and when it changes the",
        "   local context (`before`, `after`, `replace`, `none`).",
        "2. **The scenario.** The calls that overlap (each a site, the items it adds",
        "   and the items it means to drop), the server's items at the start, the",
        "   items the model may create server-side (`server_pool`) and what kind each",
        "   item is (`kinds`: message, function-call, function-output, empty-message).",
        "3. **The configurations.** `before` and each fix: an agent-side variant by",
        "   name (`model/variants.py`), a session shape by name (`model/shapes.py`),",
        "   and `fields` overriding any of the shape's fields by value name (every",
        "   field of `SessionShape` is accepted, read from the class). `locks` names",
        "   the file's own sites that hold the activity lock in that configuration.",
        "4. **The columns and expectations.** `environments` lists the columns (`base`,",
        "   `all`, or option names joined by `+`); each configuration's `fails` lists",
        "   the (invariant, environment) cells it is expected to fail, and every other",
        "   cell is expected to hold. A failure expected under an environment is",
        "   expected under every column that covers it. An expectation no column",
        "   checks is refused, so it cannot pass by never being looked at.",
        "5. **Run it**, and read the counterexamples: a mismatch is either a wrong",
        "   expectation or a finding. When the case belongs in the catalog, the same",
        "   records go into `model/cases.py`, and this page shows it.",
        "",
        f"The worked example is [`{path}`](../{path}), a case no catalog record holds: an",
        "application's own summariser (a site of the file's, pushing a caller's copy under",
        "the activity lock) against ackguard's three-way diff, once as its own session and",
        "once inside the OpenAI session (the catalog's `openai` shape with its `diff` field",
        f"overridden). `ackguard verify --case-file {path}` gives:",
        "",
        *case_section(example, level="###"),
    ]
