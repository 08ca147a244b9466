"""The site file's published schema: what it lets through, and what each refusal says.

Each input below was read wrongly or crashed before the schema was checked on
load: a string "no" as a true `locked` (a false pass), a list where a name or a
kind belongs (a traceback), non-UTF-8 bytes, deep nesting, unknown fields.
"""

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from model import LocalUpdate, RequestSource, Site, SpeechTurn
from proofs.cli import main
from proofs.engines.site_file import load_sites, site_file_schema

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_FILE = ROOT / "proofs" / "schemas" / "site-file.schema.json"
SNAPSHOT = {"request": "mirror-snapshot", "local_update": "before"}


def _write(tmp_path: Path, content: str | bytes) -> str:
    path = tmp_path / "sites.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return str(path)


def _explore(path: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(["explore", "--sites", path])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_the_schema_is_valid_draft_2020_12_and_is_the_one_loaded() -> None:
    schema = json.loads(SCHEMA_FILE.read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    assert site_file_schema() == schema


def test_the_schema_knows_exactly_the_model_s_kinds_and_fields() -> None:
    record = site_file_schema()["items"]["properties"]
    # the model's request kinds, and `unknown`: a place the audit could not follow, kept
    # in the file with its `note` and skipped on load
    assert record["request"]["enum"] == [source.value for source in RequestSource] + ["unknown"]
    assert record["local_update"]["enum"] == [update.value for update in LocalUpdate]
    assert record["speech"]["enum"] == [turn.value for turn in SpeechTurn]
    # every field of a model site, plus `locked`, which the model keeps in its variants
    assert set(record) == {field.name for field in Site.__attrs_attrs__} | {"locked", "note"}


def test_the_audit_writes_files_the_schema_accepts(tmp_path: Path) -> None:
    sites = tmp_path / "sites.json"
    agent = ROOT / "examples" / "callback_session" / "agent.py"
    flags = "--session-attr _session --mirror-attr conversation --push-method sync "
    flags += "--lock-attr sync_gate --local-attr history"
    argv = ["audit", str(agent), *flags.split(), "--local-owner", "", "--emit-sites", str(sites)]
    assert main(argv) in (0, 1)
    records = json.loads(sites.read_text())
    assert records
    jsonschema.validate(records, site_file_schema())


def test_a_string_no_is_not_read_as_locked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The false pass: "no" was read as true and the file passed with exit 0."""
    records: list[dict[str, Any]] = [
        {"name": "a", **SNAPSHOT, "locked": True},
        {"name": "b", **SNAPSHOT, "locked": False},
    ]
    status, _, _ = _explore(_write(tmp_path, json.dumps(records)), capsys)
    assert status == 1  # the honest file: b is unlocked
    records[1]["locked"] = "no"
    path = _write(tmp_path, json.dumps(records))
    status, out, err = _explore(path, capsys)
    assert (status, out) == (2, "")
    assert err.count("\n") == 1
    assert f'{path}: $[1].locked: expected true or false, got "no"' in err


@pytest.mark.parametrize(
    ("record", "needle"),
    [
        ({"name": ["a"], **SNAPSHOT}, '$[0].name: expected a string, got ["a"]'),
        ({"name": "a", "request": ["mirror-snapshot"], "local_update": "before"}, "$[0].request"),
        ({"name": "a", "request": "mirror-snapshot", "local_update": {}}, "$[0].local_update"),
        ({"name": 7, **SNAPSHOT}, "$[0].name: expected a string, got 7"),
        ({"name": "a", **SNAPSHOT, "locked": 1}, "$[0].locked: expected true or false, got 1"),
        ({"name": "a", **SNAPSHOT, "lockd": True}, '$[0]: unknown field "lockd"; known fields'),
        ({"name": "a", **SNAPSHOT, "summary": 1e308}, "$[0].summary: expected a string"),
        ({"name": "a" * 201, **SNAPSHOT}, "$[0].name: expected at most 200 characters"),
        ({"name": " a", **SNAPSHOT}, "$[0].name: expected a name with no control characters"),
        ({"name": "a\nb", **SNAPSHOT}, "$[0].name: expected a name with no control characters"),
        ({"name": "", **SNAPSHOT}, "$[0].name: expected at least 1 characters"),
        ({"name": "a", "request": "mirror", "local_update": "before"}, "choose from: mirror-"),
        ({"name": "a"}, "$[0]: missing request, local_update"),
        (["a"], "$[0]: expected an object"),
    ],
)
def test_every_refusal_names_the_file_the_path_and_what_was_expected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], record: object, needle: str
) -> None:
    path = _write(tmp_path, json.dumps([record]))
    status, out, err = _explore(path, capsys)
    assert (status, out) == (2, "")
    assert err.count("\n") == 1, err
    assert f"{path}: " in err and needle in err, err


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b'[{"name": "caf\xe9", "request": "mirror-snapshot", "local_update": "before"}]', "UTF-8"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        (json.dumps([{"name": f"s{n}", **SNAPSHOT} for n in range(65)]), "at most 64 records"),
        (json.dumps({"name": "a", **SNAPSHOT}), "$: expected a non-empty JSON list"),
        (" " * 1_000_001, "larger than"),
    ],
)
def test_files_that_are_not_site_files_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | bytes, needle: str
) -> None:
    status, out, err = _explore(_write(tmp_path, content), capsys)
    assert (status, out) == (2, "")
    assert err.count("\n") == 1, err
    assert needle in err, err


def test_a_directory_is_not_a_site_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _explore(str(tmp_path), capsys)
    assert status == 2 and "is a directory" in err and err.count("\n") == 1


def test_a_duplicate_name_is_named_by_its_path(tmp_path: Path) -> None:
    path = _write(tmp_path, json.dumps([{"name": "a", **SNAPSHOT}, {"name": "a", **SNAPSHOT}]))
    with pytest.raises(ValueError, match=r"\$\[1\]\.name: the name 'a' is taken"):
        load_sites(path)
