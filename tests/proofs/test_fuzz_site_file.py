"""Fuzzing the site file: every file the schema allows loads and explores; every file
it refuses is one line and exit 2, never a traceback or a verdict.

Valid files come from the schema itself (`schema_strategy`, as
`hypothesis-jsonschema` would, which fails with this Hypothesis); invalid ones
are valid files with one mutation (a value swapped for another JSON value, a
field added or removed, a record wrapped), kept only where the schema says the
result is invalid. The budget is fixed (`FUZZ`), so the test command runs them
all in a bounded time. Session files (the provider side's) are fuzzed the same
way: one change to a valid one either loads or is one line.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from proofs.cli import main
from proofs.engines.audit_session_file import load_session_file, session_file_schema
from proofs.engines.site_file import load_sites, pair_scenarios, site_file_schema
from proofs.errors import SiteFileError
from tests.proofs.schema_strategy import from_schema

SCHEMA = site_file_schema()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
#: The generator knows no `if`/`then`: it draws records without the conditional rule
#: (an `unknown` request needs a `note`) and `_noted` adds the note where it is needed.
_ITEMS = {k: v for k, v in SCHEMA["items"].items() if k not in ("if", "then")}
_GENERATED = {**SCHEMA, "items": _ITEMS}
#: Small files: a pair of sites is the unit the explorer checks, four make ten pairs.
SMALL = {**_GENERATED, "maxItems": 4}


def _noted(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"note": "not followed", **r} if r["request"] == "unknown" else r for r in records]


def _known(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records the loader turns into sites (the rest are skipped with their note)."""
    return [r for r in records if r["request"] != "unknown"]


FUZZ = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)


def _explore(records: Any, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "sites.json"
        path.write_text(json.dumps(records))
        code = main(["explore", "--sites", str(path)])
    out, err = capsys.readouterr()
    return code, out, err


@FUZZ
@given(records=from_schema(SMALL).map(_noted))
def test_every_file_the_schema_allows_loads_and_explores(
    records: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert VALIDATOR.is_valid(records)
    names = [record["name"] for record in records]
    code, out, err = _explore(records, capsys)
    if len(set(names)) < len(names):  # the one rule the schema cannot say
        assert code == 2 and "is taken" in err and err.count("\n") == 1
        return
    if not _known(records):  # nothing left to check once the unknown places are skipped
        assert code == 2 and "only places of unknown kind" in err and err.count("\n") == 1
        return
    assert code in (0, 1), err
    last = out.strip().splitlines()[-1]
    if code == 0:
        assert last.startswith("every pair of sites in "), last
    else:
        assert "cells have counterexamples: the lock discipline in" in last, last


@FUZZ
@given(records=from_schema(_GENERATED).map(_noted))
def test_every_file_the_schema_allows_loads(records: list[dict[str, Any]]) -> None:
    assert VALIDATOR.is_valid(records)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "sites.json"
        path.write_text(json.dumps(records))
        names = [record["name"] for record in records]
        if len(set(names)) < len(names):
            with pytest.raises(SiteFileError, match="is taken"):
                load_sites(str(path))
            return
        known = _known(records)
        if not known:
            with pytest.raises(SiteFileError, match="only places of unknown kind"):
                load_sites(str(path))
            return
        spec = load_sites(str(path))
    assert [site.name for site in spec.sites] == [r["name"] for r in known]
    assert [name for name, _ in spec.skipped] == [
        r["name"] for r in records if r["request"] == "unknown"
    ]
    assert spec.locked == {r["name"] for r in known if r.get("locked", False)}
    n = len(known)
    assert len(pair_scenarios(spec)) == n * (n + 1) // 2


def _mutate(records: list[dict[str, Any]], data: st.DataObject) -> Any:
    """One change to a valid file: most make it invalid, and only those are kept."""
    kind = data.draw(st.sampled_from(["value", "add", "remove", "wrap", "top"]))
    index = data.draw(st.integers(0, len(records) - 1))
    record = dict(records[index])
    if kind == "top":
        return data.draw(JSON)
    if kind == "wrap":
        return {"sites": records}
    if kind == "add":
        record[data.draw(st.text(min_size=1, max_size=8))] = data.draw(JSON)
    elif kind == "remove":
        del record[data.draw(st.sampled_from(sorted(record)))]
    else:
        field = data.draw(st.sampled_from(sorted(SCHEMA["items"]["properties"])))
        record[field] = data.draw(JSON | st.sampled_from(["no", "false", "0", "", "yes"]))
    return [*records[:index], record, *records[index + 1 :]]


@FUZZ
@given(records=from_schema(SMALL).map(_noted), data=st.data())
def test_every_file_the_schema_refuses_is_one_line_and_exit_2(
    records: list[dict[str, Any]], data: st.DataObject, capsys: pytest.CaptureFixture[str]
) -> None:
    mutated = _mutate(records, data)
    assume(not VALIDATOR.is_valid(mutated))
    code, out, err = _explore(mutated, capsys)
    assert (code, out) == (2, ""), err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("ackguard explore: error: ") and "sites.json" in err
    assert "$" in err or "no site records" in err  # a JSON path, or the empty list


@FUZZ
@given(data=st.binary(max_size=64) | st.text(max_size=64).map(str.encode))
def test_any_bytes_either_load_or_are_one_line_and_exit_2(
    data: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "sites.json"
        path.write_bytes(data)
        code = main(["explore", "--sites", str(path)])
    out, err = capsys.readouterr()
    assert code in (0, 1, 2)
    if code == 2:
        assert out == "" and err.count("\n") == 1, err


# --------------------------------------------------------------------------
# session files: what the schema allows loads, anything else is one line


def _session_file() -> dict[str, Any]:
    from proofs.engines.audit import audit_session_paths
    from proofs.engines.audit_session_file import session_file_data

    root = Path(__file__).resolve().parents[2]
    (shape,) = audit_session_paths([root / "impl" / "session.py"])
    return session_file_data(shape)


SESSION = _session_file()
SESSION_VALIDATOR = jsonschema.Draft202012Validator(session_file_schema())


@FUZZ
@given(data=st.data())
def test_a_changed_session_file_loads_or_is_one_line(data: st.DataObject) -> None:
    record = json.loads(json.dumps(SESSION))
    part = data.draw(st.sampled_from(["session", "evidence", "push", None]))
    target = record if part is None else record[part]
    how = data.draw(st.sampled_from(["value", "add", "remove"]))
    if how == "add":
        target[data.draw(st.text(min_size=1, max_size=8))] = data.draw(JSON)
    else:
        key = data.draw(st.sampled_from(sorted(target)))
        if how == "remove":
            del target[key]
        else:
            target[key] = data.draw(JSON | st.sampled_from(["on-send", "none", "", "awaited"]))
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "session.json"
        path.write_text(json.dumps(record))
        if SESSION_VALIDATOR.is_valid(record):
            loaded = load_session_file(str(path))
            assert loaded.session == record["session"]
            return
        with pytest.raises(SiteFileError) as caught:
            load_session_file(str(path))
    text = str(caught.value)
    assert "\n" not in text and text.startswith(f"{path}: $") and "session-file.schema" in text
