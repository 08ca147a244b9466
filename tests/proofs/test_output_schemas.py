"""Every command's `--json` output follows its published schema (proofs/schemas/).

Each command runs in-process (`proofs.cli.main`, as the console script does) on
small inputs with a holding and a failing case; conform's mismatches, which the
shipped implementation never shows, come from a mutant through the report
function. Every output is validated, and then broken on purpose: every field
dropped, an undocumented field added at every level, enum values replaced and
the verdict-dependent fields contradicted. Each broken copy must be rejected;
that is what shows the schemas can fail. All of it is one test per command, so
that each command runs once also when pytest-xdist spreads the tests.
"""

from __future__ import annotations

import copy
import functools
import io
import json
import os
import re
import shlex
from collections.abc import Callable, Iterator
from contextlib import redirect_stderr, redirect_stdout
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource

from model import (
    SCENARIOS_BY_NAME,
    VARIANTS_BY_NAME,
    EventKind,
    Invariant,
    MoveKind,
    OpKind,
    Pc,
    Verdict,
)
from model.environment import OPTION_NAMES, Environment
from model.shapes import SHAPES
from model.sites import LocalUpdate, RequestSource
from proofs.adapters.livekit.releases import installed_version
from proofs.cli import main
from proofs.engines.audit import KINDS, LOCAL_UPDATES, SITE_REQUESTS
from proofs.engines.conformance.run import DEFAULT_DEPTH, check_variant
from proofs.engines.smt.bmc import COUNTEREXAMPLE, PROVED, UNKNOWN
from proofs.report.conform import variant_json
from tests.conformance.mutants import MUTANTS

COMMON = "output-common"
COMMANDS = ("verify", "explore", "conform", "audit", "demo", "livekit")
SCHEMA_NAMES = (
    *(f"{command}-output" for command in COMMANDS),
    COMMON,
    "site-file",
    "session-file",
    "case-file",
)

#: Fields a producer writes only sometimes: with `--mermaid`; on a livekit replay;
#: livekit's Hypothesis rows (with --hypothesis N) and a scenario the provider
#: cannot drive.
OPTIONAL = frozenset({"mermaid", "source", "hypothesis", "unsupported"})
#: Objects whose keys are data (invariant or site names), not fields.
MAPS = frozenset({"violations", "unintended_by_site", "model_items", "real_items"})


def _schema(name: str) -> dict[str, Any]:
    """A schema as shipped: read from the installed package's data."""
    text = resources.files("proofs.schemas").joinpath(f"{name}.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@functools.cache
def _registry() -> Registry[Any]:
    """Every schema under its `$id`, so that `$ref`s between the files resolve."""
    resources_ = [(s["$id"], Resource.from_contents(s)) for s in map(_schema, SCHEMA_NAMES)]
    return Registry().with_resources(resources_)


@functools.cache
def _validator(ref: str) -> jsonschema.protocols.Validator:
    """A validator of `ref`: a schema's `$id`, or a `$defs` pointer inside one."""
    return jsonschema.Draft202012Validator({"$ref": ref}, registry=_registry())


def _id(command: str) -> str:
    return f"urn:ackguard:schema:{command}-output:1"


def _errors(command: str, document: Any) -> list[str]:
    return [error.message for error in _validator(_id(command)).iter_errors(document)]


# -- the outputs ----------------------------------------------------------------

AUDITED = """\
class Activity:
    async def locked(self):
        async with self._rt_chat_ctx_lock:
            ctx = self._rt_session.chat_ctx.copy()
            ctx.add_message(role="user", content="hi")
            await self._rt_session.update_chat_ctx(ctx)

    async def unlocked(self):
        ctx = self._rt_session.chat_ctx.copy()
        await self._rt_session.update_chat_ctx(ctx)

    def count(self):
        return len(self._rt_session.chat_ctx.items)
"""

SITES = [
    {"name": "tool", "request": "mirror-snapshot", "local_update": "before", "locked": True},
    {"name": "turn", "request": "mirror-snapshot", "local_update": "after"},
]

_ONE_CELL = "--scenario overlapping-push --environment base --invariant no-unintended-delete"

#: command -> label -> (arguments after the command, the exit status they must give).
RUNS: dict[str, dict[str, tuple[str, int]]] = {
    "verify": {
        "a counterexample and a proof, with Mermaid": (
            f"--variant unlocked --variant lock3 {_ONE_CELL} --mermaid",
            0,
        ),
        "an unknown (time limit)": (f"--variant lock3 {_ONE_CELL} --timeout 0.001", 1),
    },
    "explore": {
        "catalog, holding and failing": (
            "--variant unlocked --variant lock3 --scenario overlapping-push",
            0,
        ),
        "a site file": ("--sites {sites}", 1),
        "a sweep": (
            "--sweep 2 --variant lock5 --variant three-way --environment base --workers 1",
            1,
        ),
    },
    "conform": {
        "holding and failing": (
            "--variant unlocked --variant lock3 --scenario overlapping-push",
            0,
        ),
    },
    "audit": {"a kept and a broken place": ("{audited}", 1)},
    "demo": {"unlocked and three-way": ("--variant unlocked --variant three-way --turns 1", 0)},
    "livekit": {
        # over the plugin: the row whose `learn` once diverged; every interleaving steps
        "a holding scenario, swept": (
            "--release 1.8.9 --scenario server-item-during-replacement --provider plugin "
            "--pairs no",
            0,
        ),
        "a failing scenario, replays only, with an option": (
            "--release 1.8.9 --scenario spoken-during-tool-push --no-sweep --with rejections",
            0,
        ),
        "the real plugin, with Hypothesis": (
            "--release 1.8.9 --scenario overlapping-push --no-sweep --provider plugin "
            "--pairs no --hypothesis 1",
            0,
        ),
    },
}

#: The label of conform's report with mismatches, made through the report function.
MISMATCHES = "mismatches of a mutant and of Hypothesis"
#: The label of `livekit --provider plugin --replay`'s output, made in this process by
#: the release runner that the command starts in a subprocess (and prints as is).
REPLAY = "one replay over the real plugin"


def livekit_replay() -> Any:
    """`ackguard livekit --provider plugin --release 1.8.9 --scenario overlapping-push
    --replay STEPS --json`, through the runner that prints it."""
    from proofs.cli import livekit_release

    out = io.StringIO()
    argv = [
        "--scenario",
        "overlapping-push",
        "--provider",
        "plugin",
        "--replay",
        "call T0; call T1",
    ]
    with redirect_stdout(out):
        assert livekit_release.main(argv) == 0
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The files some runs read: an audited source and a site file."""
    folder = tmp_path_factory.mktemp("schemas")
    audited = folder / "activity.py"
    audited.write_text(AUDITED, encoding="utf-8")
    sites = folder / "sites.json"
    sites.write_text(json.dumps(SITES), encoding="utf-8")
    return {"audited": str(audited), "sites": str(sites)}


def _livekit_or_skip() -> None:
    if installed_version() is None:
        reason = "livekit-agents is not installed: pip install -e '.[test,livekit]'"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)


def run_json(argv: list[str]) -> tuple[int, Any]:
    """`ackguard ARGV` in this process: its exit status and its standard output as JSON."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    assert code in (0, 1, 130), err.getvalue()
    return code, json.loads(out.getvalue())


def conform_mismatches() -> list[dict[str, Any]]:
    """Conform's report with both kinds of mismatch: a mutant session's (mirror set at
    send) and one from Hypothesis, through the report function the command prints."""
    mutant = MUTANTS[0]
    assert mutant.name == "mirror-at-send"
    report = check_variant(
        VARIANTS_BY_NAME["lock5"],
        [SCENARIOS_BY_NAME["overlapping-push"]],
        None,
        DEFAULT_DEPTH,
        factory=mutant.factory(),
    )
    return [variant_json(report, {"lock5": ["a mismatch\nstate = machine()"]})]


def outputs(command: str, inputs: dict[str, str]) -> dict[str, Any]:
    """The JSON of each run of `command` in `RUNS` (each checked for its exit status)."""
    if command == "livekit":
        _livekit_or_skip()
    documents = {}
    for label, (text, status) in RUNS[command].items():
        argv = shlex.split(text.format(**inputs))
        code, documents[label] = run_json([command, *argv, "--json"])
        assert code == status, (label, code)
    if command == "conform":
        documents[MISMATCHES] = conform_mismatches()
    if command == "livekit":
        documents[REPLAY] = livekit_replay()
    return documents


def _shows_verify(documents: dict[str, Any]) -> None:
    cells = [cell for document in documents.values() for cell in document]
    assert {cell["verdict"] for cell in cells} == {PROVED, COUNTEREXAMPLE, UNKNOWN}
    assert any("mermaid" in cell for cell in cells) and any(cell["trace"] for cell in cells)
    # the first-order engine's answer (here: no certificate for these sites)
    assert any(cell["first_order"] for cell in cells)


def _shows_explore(documents: dict[str, Any]) -> None:
    rows = documents["catalog, holding and failing"] + documents["a site file"]
    assert {row["verdict"] for row in rows} == {v.value for v in Verdict}
    assert {cell["smallest"] is None for cell in documents["a sweep"]} == {True, False}


def _shows_conform(documents: dict[str, Any]) -> None:
    reports = documents["holding and failing"]
    assert {bool(report["violations"]) for report in reports} == {True, False}
    mismatches = documents[MISMATCHES][0]["mismatches"]
    assert {mismatch["scenario"] is None for mismatch in mismatches} == {True, False}


def _shows_audit(documents: dict[str, Any]) -> None:
    places = documents["a kept and a broken place"]
    assert {place["ok"] for place in places} == {True, False}
    assert "mirror-read" in {place["kind"] for place in places}


def _shows_demo(documents: dict[str, Any]) -> None:
    unlocked, three_way = documents["unlocked and three-way"]
    assert unlocked["lost"] > 0 and unlocked["unintended_by_site"] and three_way["lost"] == 0


def _shows_livekit(documents: dict[str, Any]) -> None:
    held, failed, plugin = (
        documents[label]["releases"][0]
        for label in (
            "a holding scenario, swept",
            "a failing scenario, replays only, with an option",
            "the real plugin, with Hypothesis",
        )
    )
    held, failed = held["scenarios"][0], failed["scenarios"][0]
    assert held["sweep"] and held["replays"]
    assert all(outcome["divergence"] is None for outcome in held["sweep"])
    assert held["stepped_with_model"] == held["sequences"]
    assert failed["real_broken"] and any(replay["violations"] for replay in failed["replays"])
    assert plugin["provider"] == "plugin" and plugin["hypothesis"][0]["agrees"]
    assert documents[REPLAY]["stimuli"][:2] == ["call T0", "call T1"]


#: Per command, what its outputs must show for the test to cover each variant of
#: their shape (holding and failing cells, traces, unknowns, mismatches, ...).
SHOWS: dict[str, Callable[[dict[str, Any]], None]] = {
    "verify": _shows_verify,
    "explore": _shows_explore,
    "conform": _shows_conform,
    "audit": _shows_audit,
    "demo": _shows_demo,
    "livekit": _shows_livekit,
}


def _objects(node: Any, pointer: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every object in a document with its path; list indices read as `*`."""
    if isinstance(node, dict):
        yield pointer, node
        for key, value in node.items():
            yield from _objects(value, (*pointer, key))
    elif isinstance(node, list):
        for value in node:
            yield from _objects(value, (*pointer, "*"))


def _broken(document: Any, seen: set[tuple[str, ...]]) -> Iterator[str]:
    """Per object shape not in `seen` (its first occurrence): `document` with each
    field dropped in turn, then with an undocumented field added. The document is
    changed in place while the caller looks at it, and restored after."""
    for pointer, node in list(_objects(document)):
        if pointer in seen:
            continue
        seen.add(pointer)
        where = "/".join(pointer) or "(top)"
        original = dict(node)
        node["undocumented"] = True
        yield f"{where}: an extra field"
        del node["undocumented"]
        if pointer and pointer[-1] in MAPS:
            continue
        for key in original:
            if key in OPTIONAL:
                continue
            del node[key]
            yield f"{where}: without {key}"
            node.clear()
            node.update(original)


def _accepted_when_broken(command: str, documents: list[Any]) -> tuple[list[str], int]:
    """The broken copies (`_broken`) the schema accepts, and how many were tried."""
    validator = _validator(_id(command))
    seen: set[tuple[str, ...]] = set()
    accepted, tried = [], 0
    for document in map(copy.deepcopy, documents):
        # a list's items one at a time: each broken copy is then validated alone
        for part in [[item] for item in document] if isinstance(document, list) else [document]:
            for what in _broken(part, seen):
                tried += 1
                if validator.is_valid(part):
                    accepted.append(what)
    return accepted, tried


def _set(path: tuple[Any, ...], value: Any) -> Callable[[Any], None]:
    def change(document: Any) -> None:
        node = document
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return change


def _first(predicate: Callable[[dict[str, Any]], bool]) -> Callable[[Any], int]:
    return lambda document: next(i for i, row in enumerate(document) if predicate(row))


#: (command, the run's label, what is wrong, the change).
WRONG: list[tuple[str, str, str, Callable[[Any], None]]] = [
    ("verify", "an unknown (time limit)", "verdict", _set((0, "verdict"), "disproved")),
    ("verify", "an unknown (time limit)", "expected", _set((0, "expected"), "unknown")),
    ("verify", "an unknown (time limit)", "invariant", _set((0, "invariant"), "no-loss")),
    ("verify", "an unknown (time limit)", "environment", _set((0, "environment"), "timeout")),
    ("verify", "an unknown (time limit)", "an unknown without reason", _set((0, "reason"), None)),
    ("verify", "a counterexample and a proof, with Mermaid", "step move",
     _set((0, "trace", 0, "move"), "jump")),
    ("verify", "a counterexample and a proof, with Mermaid", "task pc",
     _set((0, "trace", 0, "state", "tasks", 0, "pc"), "running")),
    ("verify", "a counterexample and a proof, with Mermaid", "op kind",
     _set((0, "trace", 0, "state", "to_server", 0, "kind"), "update")),
    ("verify", "a counterexample and a proof, with Mermaid", "a counterexample without trace",
     _set((0, "trace"), None)),
    ("verify", "a counterexample and a proof, with Mermaid", "a proof with a trace",
     _set((1, "trace"), [])),
    ("verify", "a counterexample and a proof, with Mermaid", "a first-order status",
     _set((0, "first_order", "status"), "maybe")),
    ("verify", "a counterexample and a proof, with Mermaid", "a first-order column",
     _set((0, "first_order", "checked_on"), "everywhere")),
    ("explore", "catalog, holding and failing", "verdict", _set((0, "verdict"), "proved")),
    ("explore", "catalog, holding and failing", "session", _set((0, "session"), "gpt")),
    ("explore", "catalog, holding and failing", "confirmed", _set((0, "confirmed"), "maybe")),
    ("explore", "catalog, holding and failing", "an option that does not apply",
     _set((0, "not_applying"), ["latency does not apply: no clock"])),
    ("explore", "catalog, holding and failing", "a counterexample by construction",
     lambda rows: rows[_first(lambda r: r["verdict"] == "counterexample")(rows)].update(
         by_construction="the session sends no deletes")),
    ("conform", "holding and failing", "session", _set((0, "sessions"), ["gpt"])),
    ("explore", "catalog, holding and failing", "a holding row with a depth",
     lambda rows: rows[_first(lambda r: r["verdict"] == "holds")(rows)].update(depth=3)),
    ("explore", "a sweep", "broken invariant",
     _set((0, "failing", 0, "broken", 0, "invariant"), "no-loss")),
    ("explore", "a sweep", "a move label", _set((0, "failing", 0, "broken", 0, "moves", 0), "go")),
    ("explore", "a sweep", "a failing cell without its smallest mix", _set((0, "smallest"), None)),
    ("conform", "holding and failing", "violation invariant",
     _set((0, "violations", 0, "invariant"), "lost")),
    ("conform", "holding and failing", "violation expected",
     _set((0, "violations", 0, "expected"), "proved")),
    ("conform", MISMATCHES, "a mismatch step",
     _set((0, "mismatches", 0, "sequence", 0), "call T0 + ")),
    ("audit", "a kept and a broken place", "kind", _set((0, "kind"), "snapshot")),
    ("audit", "a kept and a broken place", "local update", _set((0, "local_update"), "later")),
    ("audit", "a kept and a broken place", "a broken place without reason",
     lambda places: places[_first(lambda p: not p["ok"])(places)].update(reason=None)),
    ("demo", "unlocked and three-way", "environment", _set((0, "environment"), "none")),
    ("demo", "unlocked and three-way", "a count", _set((0, "lost"), -1)),
    ("livekit", "a holding scenario, swept", "call drive",
     _set(("releases", 0, "scenarios", 0, "calls", 0, "drive"), "private")),
    ("livekit", "a holding scenario, swept", "a swept outcome with a source",
     _set(("releases", 0, "scenarios", 0, "sweep", 0, "source"), "lock5 agreement-at-rest")),
    ("livekit", "a failing scenario, replays only, with an option", "option",
     _set(("releases", 0, "options", 0), "latency")),
    ("livekit", "the real plugin, with Hypothesis", "provider",
     _set(("releases", 0, "provider"), "cloud")),
    ("livekit", "the real plugin, with Hypothesis", "an agreeing row with a replay",
     _set(("releases", 0, "hypothesis", 0, "replay"), "call_T0")),
    ("livekit", "the real plugin, with Hypothesis", "expectation",
     _set(("releases", 0, "scenarios", 0, "expectation"), "catalog")),
    ("livekit", "the real plugin, with Hypothesis", "a model item's invariant",
     _set(("releases", 0, "scenarios", 0, "model_items"), {"lost": "out1"})),
    ("livekit", REPLAY, "a replay's invariant",
     _set(("broken",), ["lost"])),
    ("livekit", "a failing scenario, replays only, with an option", "a violation's invariant",
     lambda report: report["releases"][0]["scenarios"][0]["real_broken"].append("x")),
]  # fmt: skip


@pytest.mark.parametrize("command", COMMANDS)
def test_each_output_follows_its_schema_and_a_broken_one_does_not(
    command: str, inputs: dict[str, str]
) -> None:
    """One test per command, so that its runs are made once (under pytest-xdist too).

    Its outputs validate; then every field a producer writes is required
    (`OPTIONAL` aside), no object takes a field its schema does not describe, at
    every level of every output, and each value of `WRONG` is refused.
    """
    documents = outputs(command, inputs)
    invalid = {label: _errors(command, doc) for label, doc in documents.items()}
    assert {label: errors for label, errors in invalid.items() if errors} == {}
    SHOWS[command](documents)
    accepted, tried = _accepted_when_broken(command, list(documents.values()))
    assert accepted == [] and tried >= len(documents)
    passed = []
    for _, label, what, change in (wrong for wrong in WRONG if wrong[0] == command):
        broken = copy.deepcopy(documents[label])
        change(broken)
        assert broken != documents[label], what
        if not _errors(command, broken):
            passed.append(what)
    assert passed == []
    if command == "livekit":
        _livekit_site_path()


def test_every_command_has_wrong_values_to_refuse() -> None:
    assert {command for command, *_ in WRONG} == set(COMMANDS)


def test_an_interrupted_explore_prints_rows_that_follow_the_schema(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C after the first configuration: the rows so far, exit 130."""
    import proofs.cli.explore as command
    from proofs.engines.explore import explore as real

    calls: list[int] = []

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        if calls:
            raise KeyboardInterrupt
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(command, "explore", interrupted)
    code, rows = run_json(["explore", "--variant", "lock3", "--variant", "unlocked", "--json"])
    assert code == 130 and len(rows) == len(Invariant)  # lock3's first configuration
    assert _errors("explore", rows) == []


def _livekit_site_path() -> None:
    """Site paths appear only in a run of every scenario: one is checked alone."""
    from proofs.adapters.livekit.check import PATHS, check_path
    from proofs.adapters.livekit.releases import RELEASES_BY_VERSION

    installed = installed_version()
    assert installed is not None
    path = check_path(RELEASES_BY_VERSION[installed], PATHS[0])
    validator = _validator(f"{_id('livekit')}#/$defs/path")
    assert list(validator.iter_errors(path)) == []
    path["reached"] = "yes"
    assert not validator.is_valid(path)


# -- the schemas themselves -------------------------------------------------------


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_each_schema_is_valid_draft_2020_12(name: str) -> None:
    schema = _schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"urn:ackguard:schema:{name}:1"


def _subschemas(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from _subschemas(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _subschemas(value, f"{path}/{index}")


@pytest.mark.parametrize("name", [*(f"{c}-output" for c in COMMANDS), COMMON])
def test_every_field_has_a_title_and_a_description_and_objects_are_closed(name: str) -> None:
    schema = _schema(name)
    assert schema["title"] and schema["description"]
    untitled, open_ = [], []
    for path, node in _subschemas(schema):
        # an object's declaration, not a condition on its fields (if/then/else)
        if "properties" not in node or re.search(r"/(if|then|else)(/|$)", path):
            continue
        fields = node["properties"]
        if node.get("additionalProperties") is not False:
            open_.append(path)
        if set(fields) - set(node.get("required", ())) - OPTIONAL:
            open_.append(f"{path}: a field neither required nor optional")
        untitled += [
            f"{path}/{key}"
            for key, field in fields.items()
            if not (field.get("title") and field.get("description"))
        ]
    assert untitled == [] and open_ == []


def _enum(name: str, *path: str) -> list[str]:
    node: Any = _schema(name)
    for key in path:
        node = node[key]
    values: list[str] = node["enum"]
    return values


def test_the_enums_are_the_model_s_values() -> None:
    """A new invariant, move, program counter or option shows here, not in a consumer."""
    common = ("$defs",)
    assert _enum(COMMON, *common, "invariant") == [i.value for i in Invariant]
    assert _enum(COMMON, *common, "model-verdict") == [v.value for v in Verdict]
    assert _enum(COMMON, *common, "move-kind") == [k.value for k in MoveKind]
    assert _enum(COMMON, *common, "option") == list(OPTION_NAMES)
    assert _enum(COMMON, *common, "session") == [shape.name for shape in SHAPES]
    assert _enum(COMMON, *common, "task-state", "properties", "pc") == [p.value for p in Pc]
    assert _enum(COMMON, *common, "op", "properties", "kind") == [k.value for k in OpKind]
    assert _enum(COMMON, *common, "event", "properties", "kind") == [k.value for k in EventKind]
    assert _enum("verify-output", "$defs", "verdict") == [PROVED, COUNTEREXAMPLE, UNKNOWN]
    place = ("$defs", "place", "properties")
    assert _enum("audit-output", *place, "kind") == list(KINDS)
    assert _enum("audit-output", *place, "local_update") == list(LOCAL_UPDATES)
    assert list(LOCAL_UPDATES) == [u.value for u in LocalUpdate]
    coverage = ("$defs", "coverage", "properties", "kind")
    assert _enum("livekit-output", *coverage) == list(SITE_REQUESTS)
    assert list(SITE_REQUESTS) == [r.value for r in RequestSource]


def test_the_environment_and_move_patterns_take_exactly_the_model_s_names() -> None:
    common = _schema(COMMON)["$defs"]
    environment = jsonschema.Draft202012Validator(common["environment"])
    every = [Environment.of(names) for names in _subsets(OPTION_NAMES)]
    assert all(environment.is_valid(env.name) for env in every)
    assert not any(environment.is_valid(text) for text in ("", "Base", "timeouts+", "latency"))
    inert = jsonschema.Draft202012Validator(common["not-applying"])
    assert inert.is_valid([f"{name} does not apply: why" for name in OPTION_NAMES])
    assert not any(inert.is_valid([text]) for text in ("latency does not apply: x", "timeouts"))
    label = jsonschema.Draft202012Validator(common["move-label"])
    assert all(label.is_valid(f"{kind.value} T0 out1") for kind in MoveKind)
    assert not any(
        label.is_valid(text) for text in ("jump T0", "call T0 out1 more", "call  T0", "")
    )


def _subsets(names: tuple[str, ...]) -> Iterator[list[str]]:
    for mask in range(1 << len(names)):
        yield [name for bit, name in enumerate(names) if mask >> bit & 1]


def test_the_schemas_are_package_data() -> None:
    """Shipped beside the site file's schema, so an installed ackguard has them."""
    shipped = {p.name for p in resources.files("proofs.schemas").iterdir()}
    assert {f"{name}.schema.json" for name in SCHEMA_NAMES} <= shipped
    here = Path(__file__).resolve().parents[2] / "proofs" / "schemas"
    assert {p.name for p in here.glob("*.schema.json")} == {
        f"{name}.schema.json" for name in SCHEMA_NAMES
    }


def test_a_variant_with_no_push_has_null_latencies_that_validate() -> None:
    """No push, no latency: strict JSON (no NaN) that the demo's schema accepts."""
    from proofs.adapters.impl.demo import Tally
    from proofs.report.demo import table_lines

    tally = Tally("unlocked")
    text = json.dumps([tally.as_json()], allow_nan=False)  # NaN would raise here
    assert json.loads(text)[0]["push_ms"] == {"p50": None, "p90": None, "p99": None}
    assert _errors("demo", json.loads(text)) == []
    assert any(line.rstrip().endswith("-") for line in table_lines([tally]))
