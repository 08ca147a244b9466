"""The casebook's surface: `ackguard verify --case` / `--case-file`, its JSON and
schema, and `docs/casebook.md`.

Until the catalog has cases, the command is shown on a case built here from
catalog records (the scenario `server-item-during-replacement`; before: `lock5` on
`openai`; the fix: `three-way`), put in the catalog the command reads; and on the
worked example file, which no catalog record holds.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from attrs import evolve
from referencing import Registry, Resource

from model import (
    SCENARIOS_BY_NAME,
    SHAPES_BY_NAME,
    Environment,
    Invariant,
)
from model.cases import Case, Expected, Fix
from model.environment import BASE
from proofs.cli import main
from proofs.cli import verify as command
from proofs.report import pages

EXAMPLE = pages.EXAMPLE_CASE
ROOT = Path(__file__).resolve().parents[2]
SERVER = Environment(server_items=True)

CASE = Case(
    name="test-server-item",
    title="a replacement deletes the model's function call",
    reports=("https://example.invalid/report",),
    summary="Built in the test from catalog records.",
    scenario=SCENARIOS_BY_NAME["server-item-during-replacement"],
    before=Fix(
        name="before",
        summary="lock5 on the OpenAI session",
        variant="lock5",
        shape=SHAPES_BY_NAME["openai"],
        fails=(
            Expected(Invariant.NO_UNINTENDED_DELETE, SERVER, "the copy lacks the call"),
            Expected(Invariant.AGREEMENT_AT_REST, SERVER),
        ),
    ),
    fixes=(
        Fix(
            name="three-way",
            summary="the three-way diff",
            variant="three-way",
            shape=SHAPES_BY_NAME["three-way"],
            status="proposal",
        ),
    ),
    invariants=(Invariant.NO_UNINTENDED_DELETE, Invariant.AGREEMENT_AT_REST),
    environments=(BASE, SERVER),
)
#: The same case, with a record that wrongly says the fix leaves one cell open.
WRONG = evolve(
    CASE,
    name="test-wrong-record",
    fixes=(evolve(CASE.fixes[0], fails=(Expected(Invariant.NO_UNINTENDED_DELETE, SERVER),)),),
)


@pytest.fixture
def catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    """The two cases above as the catalog the command reads."""
    monkeypatch.setattr(command, "CASES", (CASE, WRONG))
    monkeypatch.setattr(command, "CASES_BY_NAME", {CASE.name: CASE, WRONG.name: WRONG})


def _verify(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["verify", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_case_is_a_table_with_each_counterexample_as_a_timeline(
    catalog: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _verify(capsys, "--case", CASE.name)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"case {CASE.name}: {CASE.title}"
    assert lines[1].split() == [
        "configuration", "status", "invariant", "environment", "verdict", "expected", "scope",
    ]  # fmt: skip
    rows = [line for line in lines if line.startswith(("before (", "three-way ("))]
    assert len(rows) == 8  # 2 configurations x 2 invariants x 2 columns
    assert sum("✗ counterexample" in row for row in rows) == 2
    assert all("three-way (three-way, three-way)  proposal" in r for r in rows[4:])
    heading = f"{CASE.name} / before (lock5, openai) / server-items / no-unintended-delete: call1: "
    assert any(line.startswith(heading) for line in lines)
    assert "   3. T0 replacement: called; requests [msg0]; sends delete call1" in out
    assert "MISMATCH" not in out
    assert lines[-1].startswith("every verdict matched the case records (1 cases, 8 cells")


def test_a_wrong_record_exits_1_and_says_where(
    catalog: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _verify(capsys, "--case", "all", "--mermaid")
    assert code == 1
    assert out.count("case test-") == 2
    mismatched = [line for line in out.splitlines() if "MISMATCH" in line]
    assert len(mismatched) == 1 and mismatched[0].startswith("three-way (three-way")
    assert mismatched[0].split()[4:9] == [
        "no-unintended-delete", "server-items", "✓", "holds", "MISMATCH",
    ]  # fmt: skip
    assert mismatched[0].split()[9] == "counterexample"
    assert "sequenceDiagram" in out
    assert out.splitlines()[-1].startswith("1 OF 16 CELLS DID NOT MATCH the case records")


def test_names_are_checked_before_any_work(
    catalog: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _verify(capsys, "--case", "livekit-agents-0")
    assert (code, out) == (2, "")
    assert err == (
        "ackguard verify: error: unknown case 'livekit-agents-0'; choose from: all, "
        f"{CASE.name}, {WRONG.name}\n"
    )
    code, _, err = _verify(capsys, "--case", CASE.name, "--variant", "lock5")
    assert code == 2 and "--variant is for the verify grid" in err
    code, _, err = _verify(capsys, "--case-file", "no-such.json")
    assert code == 2 and err.count("\n") == 1 and "no-such.json: no such file" in err
    code, _, err = _verify(capsys, "--case", CASE.name, "--case-file", str(ROOT / EXAMPLE))
    assert code == 0


def test_an_empty_catalog_is_said_not_passed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(command, "CASES", ())
    monkeypatch.setattr(command, "CASES_BY_NAME", {})
    code, _, err = _verify(capsys, "--case", "all")
    assert code == 2 and "the catalog has no case yet" in err


def test_ctrl_c_prints_the_cases_judged_and_exits_130(
    catalog: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = command.judged
    calls: list[str] = []

    def interrupted(record: Any) -> Any:
        if calls:
            raise KeyboardInterrupt
        calls.append(record.name)
        return real(record)

    monkeypatch.setattr(command, "judged", interrupted)
    code, out, _ = _verify(capsys, "--case", "all")
    assert code == 130
    assert f"case {CASE.name}" in out and f"case {WRONG.name}" not in out
    assert "INTERRUPTED: 1 of 2 cases were judged before Ctrl-C" in out
    assert "every verdict matched" not in out  # no verdict on the whole
    assert out.splitlines()[-1] == f"  not finished: {WRONG.name}"
    calls.clear()
    code, out, err = _verify(capsys, "--case", "all", "--json")
    assert code == 130 and [case["case"] for case in json.loads(out)] == [CASE.name]
    assert "ackguard verify: INTERRUPTED" in err


def test_the_help_names_both_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    out = capsys.readouterr().out
    assert "--case NAME" in out and "--case-file PATH" in out
    assert "ackguard verify --case all" in out


# -- the worked example: a case outside the catalog, no model code ------------------


def test_the_example_file_runs_through_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _verify(capsys, "--case-file", str(ROOT / EXAMPLE))
    assert code == 0
    assert "before (lock5+summarise, openai)" in out
    assert "T0 summarise: called; requests [msg0]; sends delete call1" in out


def test_a_wrong_expectation_in_the_example_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The check can fail: the example with the fix recorded as leaving a cell open,
    and with the configuration before recorded as holding everywhere."""
    data = json.loads((ROOT / EXAMPLE).read_text())
    for change in ("fix", "before"):
        wrong = copy.deepcopy(data)
        if change == "fix":
            wrong["fixes"][0]["fails"] = [wrong["before"]["fails"][0]]
        else:
            wrong["before"]["fails"] = []
        path = tmp_path / f"{change}.json"
        path.write_text(json.dumps(wrong))
        code, out, _ = _verify(capsys, "--case-file", str(path))
        assert code == 1, change
        assert out.count("MISMATCH") == (1 if change == "fix" else 2)


# -- JSON and its schema --------------------------------------------------------------


def _schema(name: str) -> dict[str, Any]:
    text = resources.files("proofs.schemas").joinpath(f"{name}.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _validator() -> jsonschema.protocols.Validator:
    schemas = [_schema("verify-output"), _schema("output-common")]
    registry: Registry[Any] = Registry().with_resources(
        (s["$id"], Resource.from_contents(s)) for s in schemas
    )
    return jsonschema.Draft202012Validator(schemas[0], registry=registry)


def _objects(node: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from _objects(value, (*path, key))
    elif isinstance(node, list):
        for value in node:
            yield from _objects(value, (*path, "*"))


#: Fields written only sometimes (with --mermaid).
OPTIONAL = {"mermaid"}
#: Below these, the objects are the shared trace's (output-common, checked elsewhere).
SHARED = {"trace"}


def _at(document: Any, path: tuple[str, ...]) -> Any:
    """The object at `path`, the first item of each list on the way."""
    node = document
    for key in path:
        node = node[0] if key == "*" else node[key]
    return node


def _broken_copies(document: list[Any]) -> Iterator[tuple[str, list[Any]]]:
    """Each object shape of the case record (its first occurrence) without each
    field, and with an undocumented one."""
    seen: set[tuple[str, ...]] = set()
    for path, _ in list(_objects(document)):
        if path in seen or SHARED & set(path):
            continue
        seen.add(path)
        for field in [*_at(document, path), "undocumented"]:
            if field in OPTIONAL:
                continue
            broken = copy.deepcopy(document)
            target = _at(broken, path)
            if field == "undocumented":
                target[field] = True
            else:
                del target[field]
            yield f"{'/'.join(path)}: {field}", broken


def test_the_json_follows_the_schema_and_a_broken_copy_does_not(
    catalog: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _verify(capsys, "--case", "all", "--json", "--mermaid")
    assert code == 1
    document = json.loads(out)
    validator = _validator()
    assert [e.message for e in validator.iter_errors(document)] == []
    assert [case["matched"] for case in document] == [True, False]
    cells = document[0]["cells"]
    assert {c["verdict"] for c in cells} == {"holds", "counterexample"}
    assert any("mermaid" in c for c in cells) and document[0]["file"] is None
    accepted = [what for what, broken in _broken_copies(document) if validator.is_valid(broken)]
    assert accepted == []
    failing = next(i for i, c in enumerate(cells) if c["verdict"] == "counterexample")
    holding = next(i for i, c in enumerate(cells) if c["verdict"] == "holds")
    wrong: list[tuple[str, tuple[Any, ...], Any]] = [
        ("a verdict", (0, "cells", holding, "verdict"), "proved"),
        ("an expectation", (0, "cells", holding, "expected"), "unknown"),
        ("an invariant", (0, "cells", holding, "invariant"), "no-loss"),
        ("an environment", (0, "cells", holding, "environment"), "server_items"),
        ("a status", (0, "configurations", 1, "status"), "maybe"),
        ("a counterexample without trace", (0, "cells", failing, "trace"), None),
        ("a holding cell with a depth", (0, "cells", holding, "depth"), 3),
        ("a holding cell with a violation", (0, "cells", holding, "violation"), "lost"),
    ]
    passed = []
    for what, path, value in wrong:
        broken = copy.deepcopy(document)
        node: Any = broken
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        if validator.is_valid(broken):
            passed.append(what)
    assert passed == []


def test_a_case_file_s_json_names_its_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _verify(capsys, "--case-file", str(ROOT / EXAMPLE), "--json")
    assert code == 0
    (case,) = json.loads(out)
    assert case["file"] == str(ROOT / EXAMPLE)
    assert case["configurations"][0]["variant"] == "lock5+summarise"
    assert _validator().is_valid([case])


# -- the page -------------------------------------------------------------------


@pytest.fixture(scope="module")
def casebook_text() -> str:
    """The casebook page as the cases give it now (every case judged: a second or so)."""
    return pages.casebook_page()


def test_the_casebook_page_is_what_the_cases_give_now(casebook_text: str) -> None:
    """docs/casebook.md is generated (`python -m proofs.pages --page casebook`)."""
    page = casebook_text
    committed = pages.CASEBOOK_PAGE.read_text()
    assert committed == page, (
        f"{pages.CASEBOOK_PAGE} is out of date: run python -m proofs.pages --page casebook"
    )
    assert "## Adding a report: a case file, no model code" in page
    assert f"ackguard verify --case-file {EXAMPLE}" in page
    assert "```mermaid" in page and "- closes: no-unintended-delete under server-items" in page


def test_a_case_section_has_the_report_the_counterexample_the_fixes_and_the_command() -> None:
    from proofs.engines.case_file import CaseRecord
    from proofs.report.casebook import case_section, judged

    text = "\n".join(case_section(judged(CaseRecord(WRONG))))
    assert text.startswith(f"## `{WRONG.name}`: {WRONG.title}")
    assert "Reports: <https://example.invalid/report>." in text
    assert f"```\nackguard verify --case {WRONG.name}\n```" in text
    assert "| `before` | ✓ | ✓ | ✗ depth 3 | ✗ depth 7 |" in text
    assert "| `three-way` | ✓ | ✓ | ✓ (expected counterexample!) | ✓ |" in text
    assert "### Before the fix" in text and "The record says why: the copy lacks the call." in text
    closed = "no-unintended-delete under server-items, agreement-at-rest under server-items"
    assert f"- closes: {closed};" in text
    assert "- leaves open: none;" in text and "- opens: none." in text
    assert text.count("```mermaid") == 2  # the two before the fix


def test_the_page_command_writes_the_casebook_and_its_check_fails_on_a_stale_one(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    casebook_text: str,
) -> None:
    page = tmp_path / "casebook.md"
    page.write_text("# stale\n")
    # the command is run three times on the page the cases give, made once for the
    # module (that it is the cases' page is the test above's check)
    monkeypatch.setitem(pages.PAGES, "casebook", (page, lambda: casebook_text))
    assert pages.main(["--page", "casebook", "--check"]) == 1
    assert "is out of date" in capsys.readouterr().err
    assert pages.main(["--page", "casebook"]) == 0
    assert pages.main(["--page", "casebook", "--check"]) == 0
    assert page.read_text() == pages.CASEBOOK_PAGE.read_text()


def test_a_catalog_case_is_judged_by_the_casebook_s_judge_itself(
    catalog: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What `proofs.engines.casebook.judge` comes to reach (a first-order proof, say)
    shows on the command's table: the command calls it, not a copy of it."""
    import proofs.engines.casebook as casebook

    real = casebook.judge

    def marked(case: Case) -> Any:
        return tuple(evolve(cell, scope="marked " + cell.scope) for cell in real(case))

    monkeypatch.setattr(casebook, "judge", marked)
    code, out, _ = _verify(capsys, "--case", CASE.name)
    assert code == 0 and out.count("marked the case's scenario") == 8


def test_the_page_lists_each_case_with_a_link_and_whether_it_matches() -> None:
    from proofs.engines.case_file import CaseRecord, load_case_file
    from proofs.report.casebook import judged, render_casebook

    example = judged(evolve(load_case_file(str(ROOT / EXAMPLE)), path=EXAMPLE))
    page = render_casebook([judged(CaseRecord(CASE)), judged(CaseRecord(WRONG))], example)
    assert (
        f"| [`{CASE.name}`](#{CASE.name}-a-replacement-deletes-the-models-function-call) | "
        f"{CASE.title} | `before`, `three-way` | yes |"
    ) in page
    assert f"| [`{WRONG.name}`](#" in page and "| `before`, `three-way` | NO |" in page
    assert page.index(f"## `{CASE.name}`") < page.index(f"## `{WRONG.name}`")
    assert page.index(f"## `{WRONG.name}`") < page.index("## Adding a report")
    assert "The catalog has no case yet." not in page
