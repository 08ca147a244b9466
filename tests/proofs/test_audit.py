"""Tests of ``ackguard audit``, the static lock-discipline audit.

Synthetic sources show that each check catches what it claims (an unlocked
snapshot is reported, a snapshot outside the lock block is reported, ...);
the released livekit-agents wheels pin the exact places of two real releases.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from proofs.cli import audit as audit_command
from proofs.cli.audit import main
from proofs.engines.audit import (
    UNKNOWN_NOTE,
    AuditConfig,
    AuditInputError,
    Place,
    audit_paths,
    audit_source,
    emit_sites,
)

LOCK = "_rt_chat_ctx_lock"
REPO = Path(__file__).resolve().parents[2]
WHEEL_CACHE = REPO / ".cache" / "wheels"
MEMBER = "livekit/agents/voice/agent_activity.py"


def audit(body: str, config: AuditConfig | None = None) -> list[Place]:
    """Audit a class body written at its natural indentation."""
    text = "class Activity:\n" + textwrap.indent(textwrap.dedent(body).lstrip("\n"), "    ")
    return audit_source(text, "agent.py", config)


def only(places: list[Place]) -> Place:
    assert len(places) == 1, places
    return places[0]


def row(p: Place) -> tuple[object, ...]:
    return (p.line, p.function, p.kind, p.lock, p.local_update, p.ok)


# --------------------------------------------------------------------------
# kinds, locks, local updates


USER_TURN = """
async def user_turn(self, text):
    {lock}
        ctx = self._rt_session.chat_ctx.copy()
        msg = ctx.add_message(role="user", content=text)
        await self._rt_session.update_chat_ctx(ctx)
    self._agent._chat_ctx._upsert_item(msg)
"""


def test_locked_snapshot_site_is_ok() -> None:
    place = only(audit(USER_TURN.format(lock=f"async with self.{LOCK}:")))
    assert row(place) == (6, "Activity.user_turn", "mirror-snapshot", LOCK, "after", True)
    assert place.reason is None


def test_unlocked_snapshot_site_is_reported() -> None:
    place = only(audit(USER_TURN.format(lock="if True:")))
    assert row(place) == (6, "Activity.user_turn", "mirror-snapshot", None, "after", False)
    assert place.reason is not None and LOCK in place.reason


def test_snapshot_taken_before_the_lock_is_reported() -> None:
    place = only(
        audit(
            f"""
            async def tool_outputs(self, outs):
                ctx = self._rt_session.chat_ctx.copy()
                ctx.items.extend(outs)
                async with self.{LOCK}:
                    await self._rt_session.update_chat_ctx(ctx)
            """
        )
    )
    assert (place.kind, place.lock, place.ok) == ("mirror-snapshot", None, False)
    assert place.reason == "the snapshot (line 3) is taken outside the lock block"


def test_snapshot_and_push_in_two_lock_blocks_are_reported() -> None:
    place = only(
        audit(
            f"""
            async def split(self):
                async with self.{LOCK}:
                    ctx = self._rt_session.chat_ctx.copy()
                async with self.{LOCK}:
                    await self._rt_session.update_chat_ctx(ctx)
            """
        )
    )
    assert (place.kind, place.lock, place.ok) == ("mirror-snapshot", None, False)


def test_another_lock_does_not_count() -> None:
    place = only(
        audit(
            """
            async def other(self):
                async with self._other_lock:
                    ctx = self._rt_session.chat_ctx.copy()
                    await self._rt_session.update_chat_ctx(ctx)
            """
        )
    )
    assert not place.ok


def test_lock_found_through_nested_with_try_and_several_items() -> None:
    place = only(
        audit(
            f"""
            async def nested(self, outs):
                for _ in range(2):
                    try:
                        if outs:
                            with tracer.span():
                                async with self._other_lock, self.{LOCK} as held:
                                    try:
                                        ctx = self._rt_session.chat_ctx.copy()
                                        ctx.items.extend(outs)
                                        await self._rt_session.update_chat_ctx(ctx)
                                    finally:
                                        pass
                    except Exception:
                        pass
            """
        )
    )
    assert row(place) == (11, "Activity.nested", "mirror-snapshot", LOCK, "none", True)


def test_lock_of_outer_function_does_not_cover_a_nested_function() -> None:
    places = audit(
        f"""
        async def outer(self):
            async with self.{LOCK}:
                async def inner():
                    ctx = self._rt_session.chat_ctx.copy()
                    await self._rt_session.update_chat_ctx(ctx)
                await inner()
        """
    )
    place = only(places)
    assert (place.function, place.ok) == ("Activity.outer.inner", False)


def test_live_local_context_push_with_update_before() -> None:
    place = only(
        audit(
            f"""
            async def cleanup(self, msg):
                self._agent._chat_ctx._upsert_item(msg)
                async with self.{LOCK}:
                    await self._rt_session.update_chat_ctx(self._agent._chat_ctx)
            """
        )
    )
    assert row(place) == (5, "Activity.cleanup", "local-context", LOCK, "before", True)


def test_live_local_context_through_an_alias_unlocked() -> None:
    place = only(
        audit(
            """
            async def cleanup(self):
                local = self._agent._chat_ctx
                await self._rt_session.update_chat_ctx(local)
            """
        )
    )
    assert (place.kind, place.local_update, place.ok) == ("local-context", "none", False)


def test_caller_copy_that_replaces_the_local_context() -> None:
    source = """
        async def update_chat_ctx(self, chat_ctx):
            chat_ctx = chat_ctx.copy()
            self._agent._chat_ctx = chat_ctx
            {lock}
                await self._rt_session.update_chat_ctx(chat_ctx)
        """
    locked = only(audit(source.format(lock=f"async with self.{LOCK}:")))
    assert row(locked) == (6, "Activity.update_chat_ctx", "caller-copy", LOCK, "replace", True)
    unlocked = only(audit(source.format(lock="if self._rt_session is not None:")))
    assert (unlocked.kind, unlocked.local_update, unlocked.ok) == ("caller-copy", "replace", False)


def test_parameter_pushed_as_is_is_a_caller_copy() -> None:
    place = only(
        audit(
            """
            async def forward(self, *, ctx):
                await self._rt_session.update_chat_ctx(chat_ctx=ctx)
            """
        )
    )
    assert (place.kind, place.local_update) == ("caller-copy", "none")


def test_request_of_unknown_origin() -> None:
    place = only(
        audit(
            f"""
            async def fresh(self):
                async with self.{LOCK}:
                    await self._rt_session.update_chat_ctx(ChatContext.empty())
            """
        )
    )
    assert (place.kind, place.ok) == ("unknown", True)
    bare = only(audit("async def fresh(self):\n    await self._rt_session.update_chat_ctx(x())\n"))
    assert (bare.kind, bare.ok) == ("unknown", False)


def test_inline_snapshot_and_session_alias() -> None:
    places = audit(
        f"""
        async def inline(self):
            async with self.{LOCK}:
                await self._rt_session.update_chat_ctx(self._rt_session.chat_ctx.copy())

        async def alias(self):
            sess = self._rt_session
            snap = sess.chat_ctx.copy()
            await sess.update_chat_ctx(snap)
        """
    )
    assert [(p.function, p.kind, p.ok) for p in places] == [
        ("Activity.inline", "mirror-snapshot", True),
        ("Activity.alias", "mirror-snapshot", False),
    ]


METHOD_MIRROR = AuditConfig(
    session_attr="_session",
    mirror_attr="snapshot",
    push_method="sync",
    lock_attr="gate",
    local_attr="history",
    local_owner_attr=None,
)


def test_a_mirror_reached_through_a_method_call() -> None:
    # a session whose mirror is a method: `--mirror-attr snapshot` names it
    places = audit(
        """
        async def direct(self):
            async with self.gate:
                ctx = self._session.snapshot()
                await self._session.sync(ctx)

        async def chained(self):
            async with self.gate:
                ctx = self._session.snapshot().copy()
                await self._session.sync(ctx)

        async def aliased(self):
            session = self._session
            async with self.gate:
                await session.sync(await session.snapshot())

        async def outside(self):
            ctx = self._session.snapshot()
            async with self.gate:
                await self._session.sync(ctx)

        def peek(self):
            return len(self._session.snapshot())
        """,
        METHOD_MIRROR,
    )
    assert [(p.function, p.kind, p.lock, p.ok) for p in places] == [
        ("Activity.direct", "mirror-snapshot", "gate", True),
        ("Activity.chained", "mirror-snapshot", "gate", True),
        ("Activity.aliased", "mirror-snapshot", "gate", True),
        ("Activity.outside", "mirror-snapshot", None, False),
        ("Activity.peek", "mirror-read", None, True),
    ]
    assert places[3].reason == "the snapshot (line 18) is taken outside the lock block"


def test_a_snapshot_taken_by_a_helper_method_counts_where_it_is_called() -> None:
    places = audit(
        f"""
        def _snapshot(self):
            return self._rt_session.chat_ctx.copy()

        async def _fresh(self):
            return self._rt_session.chat_ctx.copy()

        def _count(self):
            return len(self._rt_session.chat_ctx.items)

        async def locked(self, msg):
            async with self.{LOCK}:
                ctx = self._snapshot()
                ctx.insert(msg)
                await self._rt_session.update_chat_ctx(ctx)

        async def taken_before_the_lock(self, msg):
            ctx = await self._fresh()
            ctx.insert(msg)
            async with self.{LOCK}:
                await self._rt_session.update_chat_ctx(ctx)

        async def not_a_snapshot(self):
            async with self.{LOCK}:
                await self._rt_session.update_chat_ctx(self._count())
        """
    )
    assert [(p.function, p.kind, p.lock, p.ok) for p in places] == [
        ("Activity._snapshot", "mirror-read", None, True),
        ("Activity._fresh", "mirror-read", None, True),
        ("Activity._count", "mirror-read", None, True),
        ("Activity.locked", "mirror-snapshot", LOCK, True),
        ("Activity.taken_before_the_lock", "mirror-snapshot", None, False),
        ("Activity.not_a_snapshot", "unknown", LOCK, True),
    ]
    assert places[4].reason == "the snapshot (line 18) is taken outside the lock block"


def test_mirror_reads_that_push_nothing_are_listed() -> None:
    places = audit(
        f"""
        def count(self):
            return len(self._rt_session.chat_ctx.items)

        async def peek(self):
            async with self.{LOCK}:
                return self._rt_session.chat_ctx.copy()
        """
    )
    assert [row(p) for p in places] == [
        (3, "Activity.count", "mirror-read", None, "none", True),
        (7, "Activity.peek", "mirror-read", LOCK, "none", True),
    ]


def test_local_update_follows_the_items_of_each_push() -> None:
    # one function, one variable name, two snapshots, and local changes placed so
    # that "nearest local change" would answer "before" for both pushes: each push
    # must be matched to the local change of *its own* items
    places = audit(
        """
        async def two(self, a, b):
            self._agent._chat_ctx.insert(b)
            ctx = self._rt_session.chat_ctx.copy()
            ctx.insert(a)
            await self._rt_session.update_chat_ctx(ctx)
            ctx = self._rt_session.chat_ctx.copy()
            ctx.insert(b)
            await self._rt_session.update_chat_ctx(ctx)
            self._agent._chat_ctx.insert(a)
        """
    )
    assert [(p.line, p.local_update) for p in places] == [(6, "after"), (9, "before")]


def test_local_update_followed_through_a_list_of_outputs() -> None:
    place = only(
        audit(
            """
            async def tools(self, note, results):
                self._agent._chat_ctx.insert(note)
                outs = []
                for r in results:
                    outs.append(r.output)
                ctx = self._rt_session.chat_ctx.copy()
                ctx.items.extend(outs)
                await self._rt_session.update_chat_ctx(ctx)
                for r in results:
                    self._agent._chat_ctx._upsert_item(r.output)
            """
        )
    )
    assert place.local_update == "after"


def test_local_update_without_related_items_falls_back_to_order() -> None:
    places = audit(
        """
        async def before(self, a, z):
            self._agent._chat_ctx.items.append(z)
            await self._rt_session.update_chat_ctx(self._rt_session.chat_ctx.copy())

        async def after(self, z):
            await self._rt_session.update_chat_ctx(self._agent._chat_ctx)
            del self._agent._chat_ctx.items[0]
        """
    )
    assert [p.local_update for p in places] == ["before", "after"]


def test_module_level_functions_and_no_places() -> None:
    text = textwrap.dedent(
        """
        import not_installed_anywhere  # never imported by the audit
        raise SystemExit("running this would stop the tests")

        async def push(activity):
            await activity._rt_session.update_chat_ctx(activity._rt_session.chat_ctx.copy())
        """
    )
    place = only(audit_source(text, "m.py", AuditConfig()))
    assert (place.function, place.kind, place.ok) == ("push", "mirror-snapshot", False)
    assert audit_source("x = 1\n", "m.py", AuditConfig()) == []


# --------------------------------------------------------------------------
# configuration


RENAMED = """
async def sync_turn(self, text):
    async with self._push_lock:
        ctx = self._session.history.copy()
        ctx.add(text)
        await self._session.sync(ctx)

async def replace(self, ctx):
    self._ctx = ctx
    await self._session.sync(ctx)
"""

RENAMED_CONFIG = AuditConfig(
    session_attr="_session",
    mirror_attr="history",
    push_method="sync",
    lock_attr="_push_lock",
    local_attr="_ctx",
    local_owner_attr=None,
)


def test_config_renaming() -> None:
    assert audit(RENAMED) == []
    places = audit(RENAMED, RENAMED_CONFIG)
    assert [(p.function, p.kind, p.lock, p.local_update, p.ok) for p in places] == [
        ("Activity.sync_turn", "mirror-snapshot", "_push_lock", "none", True),
        ("Activity.replace", "caller-copy", None, "replace", False),
    ]


def test_config_rejects_non_identifiers() -> None:
    with pytest.raises(ValueError, match="session_attr"):
        AuditConfig(session_attr="self._rt_session")


def test_cli_renaming_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "agent.py"
    path.write_text("class Activity:\n" + textwrap.indent(RENAMED, "    "))
    flags = ["--session-attr", "_session", "--mirror-attr", "history", "--push-method", "sync"]
    flags += ["--lock-attr", "_push_lock", "--local-attr", "_ctx", "--local-owner", ""]
    assert main(["audit", str(path), "--json", *flags]) == 1
    places = json.loads(capsys.readouterr().out)
    assert [(p["kind"], p["ok"]) for p in places] == [
        ("mirror-snapshot", True),
        ("caller-copy", False),
    ]


# --------------------------------------------------------------------------
# inputs and the command line


def test_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(AuditInputError, match=r"^broken\.py:3: syntax error"):
        audit_source("x = 1\n\ndef f(:\n", "broken.py", AuditConfig())
    path = tmp_path / "broken.py"
    path.write_text("x = 1\n\ndef f(:\n")
    with pytest.raises(AuditInputError, match=r"broken\.py:3:"):
        audit_paths([path], AuditConfig())


def test_cli_exit_2_on_syntax_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "broken.py"
    path.write_text("x = 1\n\ndef f(:\n")
    assert main(["audit", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}:3: syntax error" in err
    assert "Traceback" not in err


def test_cli_exit_2_on_a_bad_name_says_what_to_give(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "x.py", "--local-owner", "self._agent"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ackguard audit: error: --local-owner must be a Python identifier")
    assert "give the attribute's name alone" in err and err.count("\n") == 1


def test_cli_exit_2_on_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(tmp_path / "nope.py")]) == 2
    assert "nope.py: no such file or directory" in capsys.readouterr().err


def test_cli_exit_codes_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.py"
    good.write_text(
        "class A:\n" + textwrap.indent(USER_TURN.format(lock=f"async with self.{LOCK}:"), "    ")
    )
    bad = tmp_path / "bad.py"
    bad.write_text("class A:\n" + textwrap.indent(USER_TURN.format(lock="if True:"), "    "))
    assert main(["audit", str(good)]) == 0
    table = capsys.readouterr().out
    assert f"{good}:7" in table and "A.user_turn" in table and "mirror-snapshot" in table
    assert main(["audit", str(good), str(bad), "--json"]) == 1
    places = json.loads(capsys.readouterr().out)
    assert places[1] == {
        "file": str(bad),
        "line": 7,
        "function": "A.user_turn",
        "kind": "mirror-snapshot",
        "lock": None,
        "local_update": "after",
        "ok": False,
        "reason": f"the snapshot and the push are not inside `async with self.{LOCK}`",
    }


def test_cli_notes_when_it_finds_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # exit 0 all the same: the pre-commit hook runs on files that push nothing
    path = tmp_path / "agent.py"
    path.write_text("class Activity:\n" + textwrap.indent(RENAMED, "    "))
    assert main(["audit", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out == "0 places (0 pushes, 0 mirror reads), 0 breaking the lock discipline\n"
    assert err.count("\n") == 1 and f"no push place in {path}" in err
    assert "`<x>._rt_session.update_chat_ctx(...)`" in err and "--session-attr" in err
    flags = ["--session-attr", "_session", "--mirror-attr", "history", "--push-method", "sync"]
    main(["audit", str(path), *flags])
    assert capsys.readouterr().err == ""


def test_cli_help_has_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["audit", "--help"])
    assert exit_info.value.code == 0
    assert "ackguard audit livekit_agents-1.8.9-py3-none-any.whl" in capsys.readouterr().out


def test_directories_recurse_and_archives_are_read_in_place(tmp_path: Path) -> None:
    source = "class A:\n" + textwrap.indent(USER_TURN.format(lock="if True:"), "    ")
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "sub" / "agent.py").write_text(source)
    (tmp_path / "pkg" / ".hidden").mkdir()
    (tmp_path / "pkg" / ".hidden" / "agent.py").write_text(source)
    places = audit_paths([tmp_path / "pkg"], AuditConfig())
    assert [p.file for p in places] == [str(tmp_path / "pkg" / "sub" / "agent.py")]
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("pkg/agent.py", source)
        archive.writestr("pkg/data.txt", "not python")
    (place,) = audit_paths([wheel], AuditConfig())
    assert (place.file, place.line, place.ok) == (f"{wheel}!pkg/agent.py", 7, False)


def test_emit_sites(tmp_path: Path) -> None:
    places = audit(
        f"""
        async def turn(self, text):
            async with self.{LOCK}:
                ctx = self._rt_session.chat_ctx.copy()
                msg = ctx.add_message(role="user", content=text)
                await self._rt_session.update_chat_ctx(ctx)
            self._agent._chat_ctx._upsert_item(msg)

        async def cleanup(self):
            await self._rt_session.update_chat_ctx(self._agent._chat_ctx)

        async def unknown(self):
            await self._rt_session.update_chat_ctx(make())

        def read(self):
            return self._rt_session.chat_ctx
        """
    )
    records = json.loads(emit_sites(places))
    assert records == [
        {
            "name": "Activity.turn:6",
            "summary": "mirror-snapshot push in Activity.turn",
            "request": "mirror-snapshot",
            "local_update": "after",
            "speech": "none",
            "after_hidden_call": False,
            "locked": True,
            "source": "agent.py:6",
        },
        {
            "name": "Activity.cleanup:10",
            "summary": "local-context push in Activity.cleanup",
            "request": "local-context",
            "local_update": "none",
            "speech": "none",
            "after_hidden_call": False,
            "locked": False,
            "source": "agent.py:10",
        },
        {
            # kept with a note (main dropped it): the loader reports it as skipped
            "name": "Activity.unknown:13",
            "summary": "unknown push in Activity.unknown",
            "request": "unknown",
            "local_update": "none",
            "speech": "none",
            "after_hidden_call": False,
            "locked": False,
            "source": "agent.py:13",
            "note": UNKNOWN_NOTE,
        },
    ]
    out = tmp_path / "sites.json"
    source = tmp_path / "agent.py"
    source.write_text("class Activity:\n" + textwrap.indent(USER_TURN.format(lock="if 1:"), "    "))
    assert main(["audit", str(source), "--emit-sites", str(out)]) == 1
    assert json.loads(out.read_text())[0]["request"] == "mirror-snapshot"


def test_emitted_values_are_the_model_enums() -> None:
    sites = pytest.importorskip("model.sites")
    requests = {r.value for r in sites.RequestSource}
    updates = {u.value for u in sites.LocalUpdate}
    assert {"mirror-snapshot", "local-context", "caller-copy"} == requests
    assert {"before", "after", "replace", "none"} == updates
    fields = {a.name for a in sites.Site.__attrs_attrs__}
    record = json.loads(emit_sites(audit(USER_TURN.format(lock="if 1:"))))[0]
    assert fields <= set(record)


# --------------------------------------------------------------------------
# the released wheels


def _download(version: str) -> Path:
    """The wheel of ``livekit-agents==version``, downloaded once into the cache."""
    found = sorted(WHEEL_CACHE.glob(f"livekit_agents-{version}-*.whl"))
    if found:
        return found[0]
    WHEEL_CACHE.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet"]
    command += ["--disable-pip-version-check", f"livekit-agents=={version}", "-d", str(WHEEL_CACHE)]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
        problem = result.stderr.strip().splitlines()[-1:] if result.returncode else None
    except (OSError, subprocess.TimeoutExpired) as exc:
        problem = [str(exc)]
    found = sorted(WHEEL_CACHE.glob(f"livekit_agents-{version}-*.whl"))
    if problem is not None or not found:
        reason = f"cannot download livekit-agents=={version}: {' '.join(problem or ['no wheel'])}"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return found[0]


@pytest.fixture(scope="session")
def wheel_1_8_8() -> Path:
    return _download("1.8.8")


@pytest.fixture(scope="session")
def wheel_1_8_9() -> Path:
    return _download("1.8.9")


def _activity_places(wheel: Path) -> list[tuple[object, ...]]:
    with zipfile.ZipFile(wheel) as archive:
        text = archive.read(MEMBER).decode("utf-8")
    return [row(p) for p in audit_source(text, MEMBER, AuditConfig())]


@pytest.mark.parametrize("ci", ["", "1"])
def test_download_failure_skips_locally_and_fails_in_ci(
    ci: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_network(*args: object, **kwargs: object) -> object:
        raise OSError("network is unreachable")

    monkeypatch.setattr(sys.modules[__name__], "WHEEL_CACHE", tmp_path)
    monkeypatch.setattr(subprocess, "run", no_network)
    if ci:
        monkeypatch.setenv("CI", ci)
    else:
        monkeypatch.delenv("CI", raising=False)
    outcome = pytest.fail.Exception if ci else pytest.skip.Exception
    with pytest.raises(outcome, match=r"cannot download livekit-agents==1\.8\.8"):
        _download("1.8.8")


GEN = "AgentActivity._realtime_generation_task_impl"

EXPECTED_1_8_8 = [
    (797, "AgentActivity.update_chat_ctx", "caller-copy", None, "replace", False),
    (1118, "AgentActivity._detach_reusable_resources", "mirror-read", None, "none", True),
    (4160, "AgentActivity._realtime_reply_task", "mirror-snapshot", None, "after", False),
    (4691, GEN, "local-context", None, "before", False),
    (4740, GEN, "mirror-snapshot", None, "before", False),
    (4853, GEN, "mirror-snapshot", None, "before", False),
]

EXPECTED_1_8_9 = [
    (812, "AgentActivity.update_chat_ctx", "caller-copy", LOCK, "replace", True),
    (1133, "AgentActivity._detach_reusable_resources", "mirror-read", None, "none", True),
    (3459, "AgentActivity._tts_task_impl", "mirror-snapshot", None, "before", False),
    (4232, "AgentActivity._realtime_reply_task", "mirror-snapshot", LOCK, "after", True),
    (4758, GEN, "local-context", LOCK, "before", True),
    (4808, GEN, "mirror-snapshot", LOCK, "before", True),
    (4922, GEN, "mirror-snapshot", LOCK, "before", True),
]


def test_livekit_agents_1_8_8_has_no_lock_anywhere(wheel_1_8_8: Path) -> None:
    assert _activity_places(wheel_1_8_8) == EXPECTED_1_8_8


def test_livekit_agents_1_8_9_locks_five_sites_and_misses_the_spoken_message(
    wheel_1_8_9: Path,
) -> None:
    places = _activity_places(wheel_1_8_9)
    assert places == EXPECTED_1_8_9
    (missed,) = [p for p in places if p[2] != "mirror-read" and not p[5]]
    assert missed[1] == "AgentActivity._tts_task_impl"


#: Whole-wheel audits by (paths, config): each wheel takes seconds, and the command's
#: test below reads the same audit as the test of its places (its own checks are
#: about what the command prints from it).
_WHEEL_AUDITS: dict[tuple[tuple[str, ...], AuditConfig | None], list[Place]] = {}


def _audited(paths: Sequence[str | Path], config: AuditConfig | None = None) -> list[Place]:
    key = (tuple(str(path) for path in paths), config)
    if key not in _WHEEL_AUDITS:
        _WHEEL_AUDITS[key] = audit_paths(paths, config)
    return _WHEEL_AUDITS[key]


@pytest.mark.parametrize(
    ("wheel_fixture", "expected"),
    [("wheel_1_8_8", EXPECTED_1_8_8), ("wheel_1_8_9", EXPECTED_1_8_9)],
)
def test_whole_wheel_has_places_only_in_agent_activity(
    wheel_fixture: str, expected: list[tuple[object, ...]], request: pytest.FixtureRequest
) -> None:
    wheel: Path = request.getfixturevalue(wheel_fixture)
    places = _audited([wheel], AuditConfig())
    assert {p.file for p in places} == {f"{wheel}!{MEMBER}"}
    assert [row(p) for p in places] == expected


def test_cli_on_the_wheels(
    wheel_1_8_8: Path,
    wheel_1_8_9: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(audit_command, "audit_paths", _audited)
    assert main(["audit", str(wheel_1_8_9), "--emit-sites", "-"]) == 1
    sites = json.loads(capsys.readouterr().out)
    assert [(s["request"], s["local_update"], s["locked"]) for s in sites] == [
        ("caller-copy", "replace", True),
        ("mirror-snapshot", "before", False),
        ("mirror-snapshot", "after", True),
        ("local-context", "before", True),
        ("mirror-snapshot", "before", True),
        ("mirror-snapshot", "before", True),
    ]
    assert main(["audit", str(wheel_1_8_8), "--json"]) == 1
    assert sum(not p["ok"] for p in json.loads(capsys.readouterr().out)) == 5
