import json
from pathlib import Path

import pytest

from model import Invariant, RequestSource
from proofs.cli import main
from proofs.engines.site_file import SiteFileError, load_sites, pair_scenarios

SNAPSHOT_SITE = {"request": "mirror-snapshot", "local_update": "before"}


def write(tmp_path: Path, records: object) -> str:
    path = tmp_path / "sites.json"
    path.write_text(json.dumps(records))
    return str(path)


def test_loads_records_and_the_lock_discipline(tmp_path: Path) -> None:
    spec = load_sites(
        write(
            tmp_path,
            [{"name": "a", **SNAPSHOT_SITE, "locked": True}, {"name": "b", **SNAPSHOT_SITE}],
        )
    )
    assert [site.name for site in spec.sites] == ["a", "b"]
    assert spec.locked == {"a"}
    assert spec.variant().locked_sites == {"a"}
    assert len(pair_scenarios(spec)) == 3  # aa, ab, bb


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("not json", "not JSON"),
        ("[]", r"no site records .*ackguard audit PATH --emit-sites"),
        ("{}", "non-empty JSON list"),
        (json.dumps([{"name": "a"}]), "missing request, local_update"),
        (json.dumps([{"name": "a", "request": "x", "local_update": "before"}]), "choose from"),
        (json.dumps([{"name": "a", **SNAPSHOT_SITE}, {"name": "a", **SNAPSHOT_SITE}]), "taken"),
    ],
)
def test_bad_files_say_what_to_fix(tmp_path: Path, content: str, needle: str) -> None:
    path = tmp_path / "sites.json"
    path.write_text(content)
    with pytest.raises(SiteFileError, match=needle):
        load_sites(str(path))


def test_a_missing_file_says_how_to_make_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "sites.json")
    assert main(["explore", "--sites", missing]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"{missing}: no such file; ackguard audit PATH --emit-sites {missing} writes" in err


def test_a_cleanup_pair_gets_a_never_played_item(tmp_path: Path) -> None:
    spec = load_sites(
        write(
            tmp_path,
            [
                {"name": "clean", "request": "local-context", "local_update": "before"},
                {"name": "tool", **SNAPSHOT_SITE},
            ],
        )
    )
    pair = next(s for s in pair_scenarios(spec) if len({c.site for c in s.calls}) == 2)
    assert pair.server == ("msg0", "asst1")
    assert spec.sites[0].request is RequestSource.LOCAL_CONTEXT


def test_one_unlocked_snapshot_site_breaks_the_discipline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    locked = [{"name": n, **SNAPSHOT_SITE, "locked": True} for n in ("a", "b")]
    assert main(["explore", "--sites", write(tmp_path, locked)]) == 0
    assert "keeps every invariant" in capsys.readouterr().out
    # every invariant, under the site file's own variant's shape only
    assert main(["explore", "--sites", write(tmp_path, locked), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {row["invariant"] for row in rows} == {invariant.value for invariant in Invariant}
    assert {row["session"] for row in rows} == {"openai"}
    one_unlocked = [locked[0], {"name": "b", **SNAPSHOT_SITE, "locked": False}]
    assert main(["explore", "--sites", write(tmp_path, one_unlocked)]) == 1
    assert "does not keep the invariants" in capsys.readouterr().out


AUDITED_SOURCE = """
class AgentActivity:
    async def push_tools(self, outs):
        self._agent._chat_ctx.insert(outs)
        async with self._rt_chat_ctx_lock:
            ctx = self._rt_session.chat_ctx.copy()
            ctx.items.extend(outs)
            await self._rt_session.update_chat_ctx(ctx)

    async def push_spoken(self, msg):
        self._agent._chat_ctx.insert(msg)
        ctx = self._rt_session.chat_ctx.copy()
        ctx.insert(msg)
        await self._rt_session.update_chat_ctx(ctx)
"""


def test_audit_then_explore_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "agent_activity.py"
    source.write_text(AUDITED_SOURCE)
    sites = tmp_path / "sites.json"
    assert main(["audit", str(source), "--emit-sites", str(sites)]) == 1
    capsys.readouterr()
    assert main(["explore", "--sites", str(sites)]) == 1
    out = capsys.readouterr().out
    assert "push_spoken" in out and "counterexample at depth 6" in out


def test_sites_with_a_catalog_filter_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, [{"name": "a", **SNAPSHOT_SITE}])
    assert main(["explore", "--sites", path, "--variant", "lock5"]) == 2
    assert main(["explore", "--sites", str(tmp_path / "missing.json")]) == 2
    assert "missing.json: no such file" in capsys.readouterr().err


@pytest.mark.parametrize("sweep", [[], ["--sweep", "1", "--workers", "1"]], ids=["table", "sweep"])
def test_explore_notes_each_place_of_unknown_kind_it_skips(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sweep: list[str]
) -> None:
    """A run that holds must not hide a push it never looked at."""
    unknown = {"name": "c", "request": "unknown", "local_update": "before", "note": "look at it"}
    records = [{"name": "a", **SNAPSHOT_SITE, "locked": True}, unknown]
    argv = ["explore", *sweep, "--environment", "base", "--sites"]
    path = write(tmp_path, records)
    assert main([*argv, path]) == 0
    note = f"ackguard explore: note: {path}: skipped c (unknown request kind): look at it"
    assert note in capsys.readouterr().err.splitlines()
    assert main([*argv, write(tmp_path, records[:1])]) == 0
    assert "skipped" not in capsys.readouterr().err
