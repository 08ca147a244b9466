"""Case files (`proofs.engines.case_file`): a case as data, its schema, its errors.

The loader reads `SessionShape`'s fields from the class, so a field another
change adds is accepted with no change to the loader: shown here on a class with
fields the real one does not have. Every wrong file is refused with one line that
names the file, the JSON path and what was expected.
"""

from __future__ import annotations

import copy
import enum
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import jsonschema
import pytest
from attrs import evolve, frozen

from model import (
    SHAPES_BY_NAME,
    VARIANTS_BY_NAME,
    Diff,
    Environment,
    Invariant,
    ItemKind,
    LocalUpdate,
    RequestSource,
    SessionShape,
    Verdict,
)
from proofs.engines.case_file import (
    case_file_schema,
    effective_schema,
    fields_of,
    load_case_file,
    shape_fields,
)
from proofs.errors import CaseFileError

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "case-summarised-function-call.json"


def _example() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(EXAMPLE.read_text())
    return data


def _write(tmp_path: Path, data: Any, name: str = "case.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return str(path)


def test_the_example_loads_as_the_records_it_writes() -> None:
    record = load_case_file(str(EXAMPLE))
    case = record.case
    assert case.name == "example-summarised-function-call"
    assert [site.name for site in record.sites] == ["summarise"]
    assert record.sites[0].request is RequestSource.CALLER_COPY
    assert case.scenario.kind("call1") is ItemKind.FUNCTION_CALL
    assert case.environments == (Environment(), Environment(server_items=True))
    assert case.invariants == (Invariant.NO_UNINTENDED_DELETE, Invariant.AGREEMENT_AT_REST)
    # the configuration before locks the file's own site beside lock5's five
    variant = record.variant(case.before)
    assert variant.locked_sites == VARIANTS_BY_NAME["lock5"].locked_sites | {"summarise"}
    assert record.config(case.before, case.environments[1]).extra_sites == record.sites
    wider = Environment(server_items=True, timeouts=True)
    assert case.before.expects_failure(Invariant.NO_UNINTENDED_DELETE, wider)
    assert not case.before.expects_failure(Invariant.NO_UNINTENDED_DELETE, Environment())
    assert [fix.name for fix in case.fixes] == ["three-way", "three-way-locked"]
    assert case.fixes[0].shape is SHAPES_BY_NAME["three-way"]
    # a shape by catalog name with a field overridden by its value's name
    locked = case.fixes[1].shape
    assert locked == evolve(
        SHAPES_BY_NAME["openai"], name="openai/three-way-locked", diff=Diff.THREE_WAY
    )


def test_every_shape_field_but_the_name_is_read_from_the_class() -> None:
    names = {field.name for field in attrs.fields(SessionShape)} - {"name"}
    assert set(shape_fields()) == names
    properties = effective_schema()["$defs"]["shape-fields"]["properties"]
    assert set(properties) == names


def test_each_value_of_each_enum_field_can_be_set(tmp_path: Path) -> None:
    for field, (schema, _) in shape_fields().items():
        for value in schema.get("enum", []):
            data = _example()
            data["fixes"][0]["fields"] = {field: value}
            fix = load_case_file(_write(tmp_path, data)).case.fixes[0]
            assert getattr(fix.shape, field).value == value
            assert fix.shape.name == "three-way/three-way"


class _Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@frozen
class _Grown:
    """A shape with fields the real one does not have (yet)."""

    name: str
    colour: _Colour = _Colour.RED
    withheld: frozenset[_Colour] = frozenset()
    rebuilds: tuple[_Colour, ...] = ()
    flag: bool = False
    opaque: object = None


def test_a_field_of_a_grown_class_is_accepted_with_no_change_here() -> None:
    specs = fields_of(_Grown)
    assert set(specs) == {"colour", "withheld", "rebuilds", "flag"}  # object: not settable
    assert specs["colour"][0] == {"enum": ["red", "blue"]}
    assert specs["withheld"][1](["blue"]) == frozenset({_Colour.BLUE})
    assert specs["rebuilds"][1](["blue", "red"]) == (_Colour.BLUE, _Colour.RED)
    assert specs["flag"][0] == {"type": "boolean"}
    validator = jsonschema.Draft202012Validator(specs["withheld"][0])
    assert validator.is_valid(["red"]) and not validator.is_valid(["green"])


def test_the_schemas_know_the_model_s_names() -> None:
    published = case_file_schema()
    jsonschema.Draft202012Validator.check_schema(published)
    assert published["$id"] == "urn:ackguard:schema:case-file:1"
    defs = effective_schema()["$defs"]
    assert defs["invariant"]["enum"] == [i.value for i in Invariant]
    assert defs["item-kind"]["enum"] == [k.value for k in ItemKind]
    assert defs["variant"]["enum"] == list(VARIANTS_BY_NAME)
    assert defs["shape"]["enum"] == list(SHAPES_BY_NAME)
    site = defs["site"]["properties"]
    assert site["request"]["enum"] == [r.value for r in RequestSource]
    assert site["local_update"]["enum"] == [u.value for u in LocalUpdate]
    # the published file leaves the model's names to the loader
    assert "enum" not in published["$defs"]["invariant"]
    jsonschema.Draft202012Validator(published).validate(_example())


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        node: Any = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return change


def _drop(path: tuple[Any, ...]) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        node: Any = data
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]

    return change


#: (what is wrong, the change, what the one line must say).
WRONG: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("no title", _drop(("title",)), "$: missing title"),
    ("an unknown field", _set(("colour",), "red"), '$: unknown field "colour"'),
    ("a list for the scenario", _set(("scenario",), []), "$.scenario: expected an object"),
    ("an unknown variant", _set(("before", "variant"), "lock9"),
     '$.before.variant: expected a known value, got "lock9"; choose from: unlocked'),
    ("an unknown shape", _set(("fixes", 0, "shape"), "gpt"),
     '$.fixes[0].shape: expected a known value, got "gpt"'),
    ("an unknown shape field", _set(("fixes", 0, "fields"), {"colour": "red"}),
     '$.fixes[0].fields: unknown field "colour"; known fields: summary, mirror_update'),
    ("a shape field's unknown value", _set(("fixes", 0, "fields"), {"acks": "maybe"}),
     '$.fixes[0].fields.acks: expected a known value, got "maybe"; choose from: awaited'),
    ("an unknown invariant", _set(("invariants", 0), "no-loss"),
     '$.invariants[0]: expected a known value, got "no-loss"'),
    ("an unknown item kind", _set(("scenario", "kinds", "call1"), "tool"),
     '$.scenario.kinds.call1: expected a known value, got "tool"; choose from: message'),
    ("an unknown site", _set(("scenario", "calls", 0, "site"), "summarize"),
     '$.scenario.calls[0].site: expected a known site, got "summarize"; choose from: user-turn'),
    ("an unknown environment", _set(("environments", 1), "server_items"),
     "$.environments[1]: unknown environment 'server_items'"),
    ("a column twice", _set(("environments", 1), "base"), "$.environments[1]: 'base' is a column"),
    ("an item created twice", _set(("scenario", "server_pool"), ["msg0"]),
     "$.scenario: scenario example-summarised-function-call: an item id is created twice"),
    ("a kind for an unknown item", _set(("scenario", "kinds"), {"call9": "function-call"}),
     "$.scenario: scenario example-summarised-function-call: a kind for an unknown item"),
    ("a catalog site's name", _set(("sites", 0, "name"), "replacement"),
     "$.sites[0].name: 'replacement' is a catalog site"),
    ("a lock on no site of the file", _set(("before", "locks"), ["replacement"]),
     '$.before.locks[0]: expected a site of $.sites, got "replacement"'),
    ("an expectation of an invariant not judged",
     _set(("before", "fails", 0, "invariant"), "nothing-twice"),
     "$.before.fails[0].invariant: nothing-twice is not among the case's invariants"),
    ("an expectation no column checks", _set(("before", "fails", 0, "environment"), "timeouts"),
     "$.before.fails[0].environment: no environment column covers timeouts"),
    ("a fix named before", _set(("fixes", 0, "name"), "before"),
     "$.fixes[0].name: the name 'before' is taken"),
    ("a before with another name", _set(("before", "name"), "pr-1"),
     '$.before.name: expected "before", got "pr-1"'),
    ("a string for a boolean-free list", _set(("reports",), "https://x"),
     "$.reports: expected a JSON array"),
]  # fmt: skip


@pytest.mark.parametrize("what,change,says", WRONG, ids=[w[0] for w in WRONG])
def test_a_wrong_file_is_one_line_naming_file_path_and_expected_value(
    tmp_path: Path, what: str, change: Callable[[dict[str, Any]], None], says: str
) -> None:
    data = copy.deepcopy(_example())
    change(data)
    path = _write(tmp_path, data)
    with pytest.raises(CaseFileError) as raised:
        load_case_file(path)
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: "), message
    assert says in message, message


@pytest.mark.parametrize(
    "text,says",
    [
        (None, "no such file"),
        ("{", "not JSON"),
        ("[]", "$: expected a case file object, got []"),
    ],
)
def test_an_unreadable_file_is_one_line_too(tmp_path: Path, text: str | None, says: str) -> None:
    path = str(tmp_path / "case.json") if text is None else _write(tmp_path, text)
    with pytest.raises(CaseFileError, match="^" + path.replace(".", r"\.")) as raised:
        load_case_file(path)
    assert says in str(raised.value)
    with pytest.raises(CaseFileError, match="is a directory"):
        load_case_file(str(tmp_path))


def test_a_file_without_sites_is_judged_by_the_casebook_s_own_judge(tmp_path: Path) -> None:
    """The catalog's replacement instead of the file's summariser: no extra record,
    so the cells are `proofs.engines.casebook.judge`'s; the verdicts are the same."""
    data = _example()
    del data["sites"]
    for fix in (data["before"], *data["fixes"]):
        fix.pop("locks", None)
    data["scenario"]["calls"] = [{"site": "replacement"}]
    record = load_case_file(_write(tmp_path, data))
    assert record.sites == () and record.variants == ()
    cells = record.judge()
    own = load_case_file(str(EXAMPLE)).judge()
    assert [(c.fix, c.invariant, c.environment, c.verdict) for c in cells] == [
        (c.fix, c.invariant, c.environment, c.verdict) for c in own
    ]
    assert {c.verdict for c in cells} == set(Verdict)


# -- any change to the example either loads or is one line ---------------------------

#: What replaces a value: each wrong type, and values of the right type that the
#: model refuses.
_REPLACEMENTS: tuple[Any, ...] = (None, 3, "x", "msg0", [], {"x": "x"})


def _nodes(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into `node` (keys, and the first index of each list: the others
    are records of the same shape)."""
    if isinstance(node, dict):
        items: Any = node.items()
    elif isinstance(node, list):
        items = enumerate(node[:1])
    else:
        return []
    paths: list[tuple[Any, ...]] = []
    for key, value in items:
        paths += [(*path, key), *_nodes(value, (*path, key))]
    return paths


def _changed(document: Any) -> list[tuple[str, Any]]:
    """The example with each value, in turn, dropped or replaced by each of
    `_REPLACEMENTS`."""
    out = []
    for where in _nodes(document):
        for replacement in ("drop", *_REPLACEMENTS):
            copied = copy.deepcopy(document)
            parent = copied
            for key in where[:-1]:
                parent = parent[key]
            if replacement == "drop":
                parent.pop(where[-1])
            else:
                parent[where[-1]] = replacement
            out.append((f"{where}: {replacement!r}", copied))
    return out


def test_each_changed_value_loads_or_is_one_line(tmp_path: Path) -> None:
    """Every single change to the example: no error but `CaseFileError`, and that one
    line names the file and a JSON path."""
    refused = 0
    cases = _changed(_example())
    for what, document in cases:
        path = _write(tmp_path, document)
        try:
            load_case_file(path)
        except CaseFileError as error:
            message = str(error)
            assert "\n" not in message and message.startswith(f"{path}: $"), (what, message)
            refused += 1
    assert len(cases) > 300 and refused > len(cases) // 2


@frozen
class _Hidden:
    """A field whose hint names a type only a type checker sees."""

    name: str
    later: Unseen = None  # type: ignore[name-defined]  # noqa: F821
    colour: _Colour = _Colour.RED


def test_a_hint_that_does_not_resolve_costs_that_field_alone() -> None:
    assert set(fields_of(_Hidden)) == {"colour"}
