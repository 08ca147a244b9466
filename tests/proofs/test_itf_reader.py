"""`verify --itf` files, read by the ITF specification and by a reader of others: itf-py.

The specification is Apalache's ADR-015 (revised 2025-11-11): every value is a
Boolean, a string, `{"#bigint": ...}` (JSON numbers are not allowed), a list, a
`#tup`, `#set` or `#map`, a record whose fields do not start with `#`, or a
variant `{"tag": ..., "value": ...}` whose value may be any expression. `_read`
below reads exactly that and refuses anything else, so every file is checked
against the specification.

itf-py 0.5.0 reads a variant's value as a record or a string only, and turns
tags and field names into Python identifiers; so it cannot read Quint's
`Option` values `None` (`{"tag": "None", "value": {"#tup": []}}`: `None` is a
Python keyword, and the value is a tuple) and `Some` of a number (`{"tag":
"Some", "value": {"#bigint": "1"}}`). Where both can read a value, they must
agree; where itf-py cannot, the test pins that it still cannot, so a release
that fixes it shows here (docs/proofs.md, "ITF").
"""

from __future__ import annotations

import json
import keyword
from collections.abc import Iterator
from typing import Any

import pytest

from proofs.cli import main

itf_py = pytest.importorskip("itf_py")

KINDS = {"copy", "call", "wake", "resume", "server_apply", "server_reject", "client_apply",
         "model_creates", "learn", "timeout"}  # fmt: skip


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """Three counterexamples of `lock3`, both invariants, with and without the model's
    own items (the whole of `verify --variant lock3 --itf DIR`, 12 files, reads the
    same and takes six times as long)."""
    directory = tmp_path_factory.mktemp("itf") / "traces"
    # the per-scenario method: the default also searches mixes of these scenarios' sites
    # and finds one more counterexample (a cleanup beside a replacement, docs/proofs.md)
    argv = ["verify", "--method", "bmc", "--variant", "lock3"]
    argv += ["--scenario", "server-item-during-replacement"]
    argv += ["--scenario", "cleanup-during-tool-push", "--environment", "base"]
    argv += ["--environment", "server-items", "--itf", str(directory)]
    # the two invariants z3 encodes here (5 and 6 are the explorer's, with traces too)
    argv += ["--invariant", "no-unintended-delete", "--invariant", "agreement-at-rest"]
    assert main(argv) == 0
    files = sorted(directory.glob("*.itf.json"))
    assert len(files) == 3
    return [json.loads(path.read_text()) for path in files]


def _read(value: Any) -> Any:
    """A value by the specification, as plain Python; anything else raises."""
    if isinstance(value, bool | str):
        return value
    if isinstance(value, list):
        return [_read(v) for v in value]
    assert isinstance(value, dict), f"not an ITF expression: {value!r}"
    if set(value) == {"#bigint"}:
        text = value["#bigint"]
        assert isinstance(text, str) and text.lstrip("-").isdigit(), value
        return int(text)
    if set(value) == {"#tup"}:
        return tuple(_read(v) for v in value["#tup"])
    if set(value) == {"#set"}:
        return frozenset(_hashable(_read(v)) for v in value["#set"])
    if set(value) == {"#map"}:
        return {_hashable(_read(k)): _read(v) for k, v in value["#map"]}
    if set(value) == {"tag", "value"} and isinstance(value["tag"], str):
        return ("variant", value["tag"], _hashable(_read(value["value"])))
    assert not any(key.startswith("#") for key in value), f"a record field with '#': {value}"
    return {key: _read(v) for key, v in value.items()}


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    return value


def _plain(value: Any) -> Any:
    """An itf-py value as `_read` gives it, to compare the two readers."""
    if isinstance(value, bool | str | int):
        return value
    if hasattr(value, "_fields"):  # a record, or a variant with a record value
        fields = {name: _plain(getattr(value, name)) for name in value._fields}
        if getattr(type(value), "_itf_variant", False):
            inner = fields["value"] if list(fields) == ["value"] else fields
            return ("variant", type(value).__name__, _hashable(inner))
        return fields
    if isinstance(value, frozenset):
        return frozenset(_hashable(_plain(v)) for v in value)
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    raise AssertionError(f"itf-py gave {value!r}")


def _unreadable(value: Any) -> bool:
    """Whether a value holds a variant itf-py 0.5.0 cannot read: one whose tag is
    not a Python identifier or is a keyword (`None`), or whose value is a number,
    tuple, set or map (`Some` of a task number, `None`'s empty tuple)."""
    if isinstance(value, list):
        return any(_unreadable(v) for v in value)
    if not isinstance(value, dict):
        return False
    if set(value) == {"tag", "value"}:
        tag, inner = value["tag"], value["value"]
        if not tag.isidentifier() or keyword.iskeyword(tag):
            return True
        if isinstance(inner, dict) and any(key.startswith("#") for key in inner):
            return True
    return any(_unreadable(v) for v in value.values())


def _values(traces: list[dict[str, Any]]) -> Iterator[tuple[str, Any]]:
    for trace in traces:
        for state in trace["states"]:
            for name in trace["vars"]:
                yield name, state[name]


def test_every_file_follows_the_specification(traces: list[dict[str, Any]]) -> None:
    for trace in traces:
        assert set(trace) <= {"#meta", "params", "vars", "states", "loop"}
        assert trace["#meta"]["violation"] and trace["#meta"]["invariant"]
        for index, state in enumerate(trace["states"]):
            assert state["#meta"] == {"index": index}
            assert set(state) == {"#meta", *trace["vars"]}  # every variable, nothing else
            for name in trace["vars"]:
                _read(state[name])


def test_itf_py_reads_every_value_both_can_read_as_the_specification_does(
    traces: list[dict[str, Any]],
) -> None:
    read = 0
    for name, value in _values(traces):
        if not _unreadable(value):
            assert _plain(itf_py.value_from_json(value)) == _read(value), name
            read += 1
    assert read > 300  # most values: the sets, lists, records and Some variants


def test_itf_py_still_cannot_read_those_variants(traces: list[dict[str, Any]]) -> None:
    """Pinned: once itf-py reads these, docs/proofs.md's note on it is to go."""
    unreadable = [value for _, value in _values(traces) if _unreadable(value)]
    assert unreadable
    for value in unreadable:
        with pytest.raises(ValueError, match=r"keyword|valid identifiers"):
            itf_py.value_from_json(value)


def test_the_action_taken_is_the_action_s_name_and_the_picks_its_arguments(
    traces: list[dict[str, Any]],
) -> None:
    for trace in traces:
        first, *rest = trace["states"]
        assert first["mbt::actionTaken"] == "init"
        for state in rest:
            kind, *arguments = state["action"].split()
            assert state["mbt::actionTaken"] == kind.replace("-", "_") in KINDS
            picks = _read(state["mbt::nondetPicks"])
            assert set(picks) == {"task", "item"}
            shown = [
                f"T{picks['task'][2]}" if picks["task"][1] == "Some" else None,
                picks["item"][2] if picks["item"][1] == "Some" else None,
            ]
            assert [part for part in shown if part is not None] == arguments


def test_every_field_of_the_state_and_its_tasks_is_in_the_trace() -> None:
    """The ITF state is every field of `model.State` and `model.Task` (the drop
    window's `connected`, a kept-back request, the creation order `born`, the ghosts
    `sent` and `rebuilt`, and a task's `ops`, `dropped` and `stalled` were missing):
    a field added to the model fails here until the trace carries it."""
    import attrs

    from model import SCENARIOS_BY_NAME, VARIANTS_BY_NAME, Config, initial_state
    from model.state import State, Task
    from proofs.report.formats import ITF_VARS, itf_state

    scenario = SCENARIOS_BY_NAME["overlapping-push"]
    state = initial_state(Config(VARIANTS_BY_NAME["lock5"], scenario, scenario.environment))
    shown = itf_state(state)
    assert set(shown) == {f.name for f in attrs.fields(State)}
    assert set(ITF_VARS) == {"action", "mbt::actionTaken", "mbt::nondetPicks", *shown}
    assert set(shown["tasks"][0]) == {f.name for f in attrs.fields(Task)}
    assert shown["connected"] == "connected" and shown["kept"]["tag"] == "None"
    for name in ("kept", "born", "sent", "rebuilt"):
        _read(shown[name])
