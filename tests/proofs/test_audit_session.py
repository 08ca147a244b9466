"""The provider-side audit on the three real session files and ackguard's own.

Each real file yields the shape of reference/providers.md (and its reconnect,
read in the code); a mutated copy of each (lock removed, a delete sent, the
await removed, the kept-back branch removed, ...) yields the changed field, so
every rule is shown to fail where the code differs. Each real file is parsed
once per module.
"""

from __future__ import annotations

import ast
import importlib.util
import json
from pathlib import Path

import pytest

from model import SHAPES_BY_NAME
from proofs.cli.audit import main
from proofs.engines.audit import AuditConfig, audit_paths, audit_session_paths, emit_sites
from proofs.engines.audit_session import find_sessions
from proofs.engines.audit_session_file import load_session_file
from proofs.engines.audit_session_shape import InferredShape, infer_shape
from proofs.errors import SessionFileError, SiteFileError


def _package_dir(name: str) -> Path:
    """Where an installed package is, found without importing it (the audit never does)."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        pytest.skip(f"{name} is not installed (the livekit extra)", allow_module_level=True)
    return Path(spec.origin).parent


REPO = Path(__file__).resolve().parents[2]
AGENTS = _package_dir("livekit.agents")
google = _package_dir("livekit.plugins.google")
OPENAI = AGENTS / "llm" / "_realtime" / "openai.py"
DUPLEX = AGENTS / "llm" / "duplex_adapter.py"
GEMINI = google / "realtime" / "realtime_api.py"
IMPL = REPO / "impl" / "session.py"
THREE_WAY = REPO / "impl" / "three_way.py"

FIELDS = (
    "mirror_update",
    "sends",
    "session_lock",
    "acks",
    "model_items",
    "while_disconnected",
    "on_reconnect",
)

EXPECTED = {
    # providers.md's rows in the model's step terms (Gemini writes its mirror after the
    # send call with no await between: the send's own step, at-send); on_reconnect read
    # in the code (openai.py:985-1052, realtime_api.py:997-1038: both send the mirror on
    # reconnect; the duplex class does not)
    "openai": (
        "on-events", "creates-and-deletes", "across-acks", "awaited", "as-events", "none",
        "rebuild-from-mirror",
    ),
    "duplex": (
        "on-return", "creates-only", "none", "not-awaited", "by-session", "none", "none",
    ),
    "gemini": (
        "at-send", "creates-only", "around-check", "not-awaited", "by-session", "kept-back",
        "rebuild-from-mirror",
    ),
    "impl": (
        "on-events", "creates-and-deletes", "across-acks", "awaited", "as-events", "none", "none",
    ),
    # the push writes only its record of ops in flight (`_outstanding`, the expected
    # view's other half); the mirror changes in the base's event handler
    "three-way": (
        "on-events", "creates-and-deletes", "none", "awaited", "as-events", "none", "none",
    ),
}  # fmt: skip


def shapes_of(*sources: tuple[str, str]) -> dict[str, InferredShape]:
    parsed = [(label, ast.parse(text)) for label, text in sources]
    return {s.cls: s for s in map(infer_shape, find_sessions(parsed))}


def fields(shape: InferredShape) -> tuple[str, ...]:
    return tuple(shape.session.get(f, "undecided") for f in FIELDS)


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    return {
        "openai": OPENAI.read_text(),
        "duplex": DUPLEX.read_text(),
        "gemini": GEMINI.read_text(),
        "impl": IMPL.read_text(),
        "three-way": THREE_WAY.read_text(),
    }


@pytest.fixture(scope="module")
def real(texts: dict[str, str]) -> dict[str, InferredShape]:
    return {
        "openai": shapes_of(("openai.py", texts["openai"]))["RealtimeSession"],
        "duplex": shapes_of(("duplex_adapter.py", texts["duplex"]))["_DuplexRealtimeSession"],
        "gemini": shapes_of(("realtime_api.py", texts["gemini"]))["RealtimeSession"],
        **{
            name: shape
            for cls, shape in shapes_of(
                ("impl/session.py", texts["impl"]), ("impl/three_way.py", texts["three-way"])
            ).items()
            for name in [{"RealtimeSession": "impl", "ThreeWaySession": "three-way"}[cls]]
        },
    }


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_session_yields_its_shape(name: str, real: dict[str, InferredShape]) -> None:
    shape = real[name]
    assert fields(shape) == EXPECTED[name], shape.evidence
    assert shape.complete
    assert set(shape.evidence) == set(FIELDS)


def test_evidence_names_the_lines_of_providers_md(real: dict[str, InferredShape]) -> None:
    assert real["openai"].facts.primary.view == ("_remote_chat_ctx",)
    assert "openai.py:1504" in real["openai"].evidence["session_lock"]
    assert "openai.py:1534" in real["openai"].evidence["acks"]
    duplex = real["duplex"]
    assert duplex.evidence["mirror_update"].startswith("duplex_adapter.py:596 set after the send")
    assert "595 await self._duplex._append_items" in duplex.evidence["mirror_update"]
    gemini = real["gemini"]
    assert gemini.evidence["session_lock"].startswith("realtime_api.py:706")
    assert gemini.evidence["while_disconnected"].startswith("realtime_api.py:708")
    assert "no await between the diff and this write" in gemini.evidence["mirror_update"]
    assert real["three-way"].facts.primary.view == ("_mirror", "_outstanding")
    three_way = real["three-way"].evidence["mirror_update"]
    assert "never writes self._mirror" in three_way and "SessionBase._on_event" in three_way
    assert "writes only self._outstanding, beside it" in three_way


def test_the_push_facts_name_the_awaits_between_the_diff_and_the_mirror_write(
    real: dict[str, InferredShape],
) -> None:
    from proofs.engines.audit_session_file import push_facts

    duplex = push_facts(real["duplex"])
    assert duplex["awaits_between_diff_and_write"] == [
        "duplex_adapter.py:595 await self._duplex._append_items(new_items)"
    ]
    assert duplex["mirror_reads"][0] == "duplex_adapter.py:579 self._chat_ctx"
    openai = push_facts(real["openai"])
    assert openai["mirror_writes"] == [] and openai["deletes"]
    assert openai["locks"] == ["openai.py:1504 self._update_chat_ctx_lock"]


def test_three_way_alone_misreads_a_hook_of_its_unseen_base(texts: dict[str, str]) -> None:
    # a limit, shown: `_register` is called by the base's send (impl/session.py); with that
    # file left out, its insert into `_outstanding` looks like the session's own writer
    shape = shapes_of(("impl/three_way.py", texts["three-way"]))["ThreeWaySession"]
    assert shape.facts.unseen_bases == ("SessionBase",)
    assert shape.session["model_items"] == "by-session"
    assert "ThreeWaySession._register" in shape.evidence["model_items"]


# --------------------------------------------------------------------------
# mutants: each rule fails where the code differs


def mutate(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


MUTANTS = [
    # (file, old, new, field, value)
    (
        "openai",
        "        async with self._update_chat_ctx_lock:\n            chat_ctx = chat_ctx.copy(\n",
        "        if True:\n            chat_ctx = chat_ctx.copy(\n",
        "session_lock",
        "none",
    ),
    (
        "openai",
        "                results = await asyncio.wait_for(\n"
        "                    asyncio.gather(*futs, return_exceptions=True), timeout=5.0\n"
        "                )",
        "                results = await asyncio.gather(*futs, return_exceptions=True)",
        "acks",
        "not-awaited",
    ),
    (
        "duplex",
        "            await self._duplex._append_items(new_items)\n",
        "            await self._duplex._append_items(new_items)\n"
        "        for item_id in diff.to_remove:\n"
        "            await self._duplex._delete_item(item_id)\n",
        "sends",
        "creates-and-deletes",
    ),
    (
        "duplex",
        "            await self._duplex._append_items(new_items)\n"
        "        self._chat_ctx = chat_ctx\n",
        "            self._chat_ctx = chat_ctx\n"
        "            await self._duplex._append_items(new_items)\n",
        "mirror_update",
        "at-send",
    ),
    (
        "duplex",
        "    def _on_function_call(self, call: FunctionCall) -> None:\n"
        "        self._chat_ctx.insert(call)\n",
        "    def _on_function_call(self, call: FunctionCall) -> None:\n        pass\n",
        "model_items",
        "by-session",  # four other handlers still insert: the field stays, the count drops
    ),
    (
        "gemini",
        "            if not self._active_session:\n"
        "                self._pending_chat_ctx = chat_ctx\n"
        "                return\n",
        "            pass\n",
        "while_disconnected",
        "none",
    ),
    (
        "gemini",
        "        async with self._session_lock:\n            if not self._active_session:\n"
        "                self._pending_chat_ctx = chat_ctx\n                return\n\n"
        "        self._sync_chat_ctx(chat_ctx)\n",
        "        async with self._session_lock:\n            if not self._active_session:\n"
        "                self._pending_chat_ctx = chat_ctx\n                return\n"
        "            self._sync_chat_ctx(chat_ctx)\n",
        "session_lock",
        "across-acks",
    ),
    (
        "gemini",
        "                            if turns:\n"
        "                                await session.send_client_content(\n"
        "                                    turns=turns,  # type: ignore\n"
        "                                    turn_complete=False,\n"
        "                                )\n",
        "",
        "on_reconnect",
        "none",
    ),
    (
        "openai",
        'item create future for `{event.item.id}` was already settled")\n'
        "            else:\n                fut.set_result(None)\n",
        'item create future for `{event.item.id}` was already settled")\n'
        "            else:\n                pass\n",
        "model_items",
        "by-session",  # the insert no longer answers the push's waiter: the session's own
    ),
    (
        "openai",
        "                    if reconnecting:\n                        await _reconnect()\n",
        "",
        "on_reconnect",
        "none",
    ),
    (
        # the at-send the audit read before it told the mirror from the record of
        # ops in flight: a push that does set its mirror as it sends is read so
        "three-way",
        "        self._outstanding.append(Outstanding(op, future))\n",
        "        self._outstanding.append(Outstanding(op, future))\n"
        "        self._mirror = self._mirror\n",
        "mirror_update",
        "at-send",
    ),
    (
        "impl",
        "                await self._await_acks(futures)\n",
        "                await self._await_acks(futures)\n"
        "                self._mirror = chat_ctx\n",
        "mirror_update",
        "on-return",
    ),
]
LABELS = {
    "openai": "openai.py",
    "duplex": "duplex_adapter.py",
    "gemini": "realtime_api.py",
    "impl": "impl/session.py",
    "three-way": "impl/three_way.py",
}
CLASSES = {
    "openai": "RealtimeSession",
    "duplex": "_DuplexRealtimeSession",
    "gemini": "RealtimeSession",
    "impl": "RealtimeSession",
    "three-way": "ThreeWaySession",
}


@pytest.mark.parametrize(
    ("file", "old", "new", "name", "value"),
    MUTANTS,
    ids=[f"{m[0]}-{m[3]}-{m[4]}" for m in MUTANTS],
)
def test_a_mutant_yields_the_changed_field(
    file: str,
    old: str,
    new: str,
    name: str,
    value: str,
    texts: dict[str, str],
    real: dict[str, InferredShape],
) -> None:
    # the three-way session's base is impl's, read with it (as `real` reads it)
    beside = (("impl/session.py", texts["impl"]),) if file == "three-way" else ()
    shape = shapes_of(*beside, (LABELS[file], mutate(texts[file], old, new)))[CLASSES[file]]
    assert shape.session.get(name) == value, shape.evidence[name]
    changed = {f for f in FIELDS if shape.session.get(f) != real[file].session.get(f)}
    if file == "duplex" and name == "model_items":
        assert changed == set() and "3 more" in shape.evidence[name]
    else:
        assert changed == {name}, {f: shape.evidence[f] for f in changed}


def test_a_lock_released_before_the_ack_wait_is_undecided(texts: dict[str, str]) -> None:
    text = mutate(
        texts["impl"],
        "        async with self.lock:\n            futures = self._diff_and_send(chat_ctx)\n",
        "        async with self.lock:\n            futures = self._diff_and_send(chat_ctx)\n"
        "        if True:\n",
    )
    shape = shapes_of(("impl/session.py", text))["RealtimeSession"]
    assert "session_lock" in shape.undecided
    assert "held over the diff" in shape.undecided["session_lock"]


# --------------------------------------------------------------------------
# the agent's lock rule is the agent's; the CLI writes the session file


def test_a_provider_file_is_not_reported_for_lacking_the_agents_lock() -> None:
    # main's audit reported `_DuplexRealtimeSession.update_chat_ctx:595` as not inside
    # `async with self._rt_chat_ctx_lock` (kind unknown, ok False): a false alarm
    config = AuditConfig(session_attr="_duplex", push_method="_append_items")
    assert audit_paths([DUPLEX], config) == []
    assert [s.cls for s in audit_session_paths([DUPLEX])] == ["_DuplexRealtimeSession"]


def test_an_agent_push_beside_a_session_class_is_still_judged(tmp_path: Path) -> None:
    source = tmp_path / "both.py"
    source.write_text(
        "class Activity:\n"
        "    async def push(self):\n"
        "        await self._rt_session.update_chat_ctx(self._rt_session.chat_ctx.copy())\n"
        "class Session:\n"
        "    async def update_chat_ctx(self, ctx):\n"
        "        d = compute_diff(self._mirror, ctx)\n"
        "        self._rt_session.send(d)\n"
    )
    places = audit_paths([source])
    assert [(p.function, p.ok) for p in places] == [("Activity.push", False)]


def test_emit_sites_writes_the_session_file_and_it_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "gemini.json"
    assert main(["audit", str(GEMINI), "--emit-sites", str(out)]) == 0
    assert "session realtime_api.RealtimeSession" in capsys.readouterr().out
    loaded = load_session_file(str(out))
    assert tuple(loaded.session[f] for f in FIELDS) == EXPECTED["gemini"]
    assert loaded.name == "realtime_api.RealtimeSession"
    assert set(loaded.evidence) == set(FIELDS)
    push = json.loads(out.read_text())["push"]
    assert push["mirror"] == ["self._chat_ctx"] and push["awaits_between_diff_and_write"] == []
    assert push["mirror_writes"] == [f"{GEMINI}:783 self._chat_ctx"]
    assert push["deletes"] == []
    assert main(["audit", str(IMPL), str(THREE_WAY), "--emit-sites", "-"]) == 2
    assert "--session-class" in capsys.readouterr().err
    assert main(["audit", str(IMPL), str(THREE_WAY), "--session-class", "ThreeWaySession",
                 "--emit-sites", "-"]) == 0  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    # field by field, the catalog's record of ackguard's three-way session
    record = SHAPES_BY_NAME["three-way"]
    assert {f: data["session"][f] for f in FIELDS} == {f: getattr(record, f).value for f in FIELDS}
    assert data["push"]["mirror_writes"] == []


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["session"].update(sends="append-only"),
         '$.session.sends: expected a known value, got "append-only"; choose from: '
         "creates-and-deletes, creates-only"),
        (lambda d: d["session"].pop("acks"), "$.session: missing acks"),
        (lambda d: d.update(extra=1), '$: unknown field "extra"'),
        (lambda d: d["evidence"].update(acks=3), "$.evidence.acks: expected a string, got 3"),
    ],
)  # fmt: skip
def test_a_bad_session_file_is_one_line_naming_file_path_and_expectation(
    edit: object, message: str, tmp_path: Path, real: dict[str, InferredShape]
) -> None:
    from proofs.engines.audit_session_file import session_file_data

    data = session_file_data(real["duplex"])
    edit(data)  # type: ignore[operator]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))
    with pytest.raises(SessionFileError) as caught:
        load_session_file(str(path))
    text = str(caught.value)
    assert "\n" not in text and text.startswith(f"{path}: ") and message in text


def test_unknown_places_are_kept_with_a_note_and_skipped_on_load(tmp_path: Path) -> None:
    from proofs.engines.site_file import load_sites

    source = tmp_path / "agent.py"
    source.write_text(
        "class Activity:\n"
        "    async def a(self):\n"
        "        await self._rt_session.update_chat_ctx(self._agent._chat_ctx)\n"
        "    async def b(self):\n"
        "        await self._rt_session.update_chat_ctx(make())\n"
    )
    records = json.loads(emit_sites(audit_paths([source])))
    assert [r["request"] for r in records] == ["local-context", "unknown"]
    assert "could not follow" in records[1]["note"]
    path = tmp_path / "sites.json"
    path.write_text(json.dumps(records))
    spec = load_sites(str(path))
    assert [s.name for s in spec.sites] == ["Activity.a:3"]
    assert [name for name, _ in spec.skipped] == ["Activity.b:5"]
    assert spec.skipped_lines()[0].startswith(f"{path}: skipped Activity.b:5")
    del records[1]["note"]
    path.write_text(json.dumps(records))
    with pytest.raises(SiteFileError, match=r"\$\[1\]: missing note"):
        load_sites(str(path))
    path.write_text(json.dumps([dict(records[1], note="n")]))
    with pytest.raises(SiteFileError, match="only places of unknown kind"):
        load_sites(str(path))


def test_a_porting_teams_session_needs_its_names_and_then_yields_its_shape() -> None:
    # examples/callback_session: its diff is `plan`, its lock `self.gate` (a Gate), its
    # deletes a message dict: without the names the audit finds no session at all
    example = REPO / "examples" / "callback_session" / "session.py"
    assert audit_session_paths([example]) == []
    (shape,) = audit_session_paths([example], diff_names=["plan"], lock_attrs=["gate"])
    assert fields(shape) == (
        "on-events", "creates-and-deletes", "across-acks", "awaited", "as-events", "none", "none",
    )  # fmt: skip
    assert "self.gate" in shape.evidence["session_lock"]


@pytest.mark.parametrize("argv", [["--diff-function=--"], ["--session-lock", "a b"]])
def test_a_bad_provider_side_name_is_one_line_and_exit_2(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    # `--diff-function=--` once reached the audit as an empty list: an internal error, exit 3
    assert main(["audit", str(IMPL), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "takes a Python name" in err


@pytest.mark.parametrize(
    ("name", "record"), [("openai", "openai"), ("duplex", "duplex-await"), ("gemini", "gemini")]
)
def test_each_real_session_yields_its_catalog_record(
    name: str, record: str, real: dict[str, InferredShape]
) -> None:
    """The audit infers the catalog's record of each real session, field by field (the
    duplex class's append is awaited, so the code gives `duplex-await`: whether the
    append yields is not in the adapter's code)."""
    from model import SHAPES_BY_NAME

    shape = SHAPES_BY_NAME[record]
    assert real[name].session == {
        field: getattr(shape, field).value for field in real[name].session
    }
