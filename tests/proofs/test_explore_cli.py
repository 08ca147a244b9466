import json

import pytest

from model import Invariant
from proofs.cli import main


def test_explore_whole_catalog_matches(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore"]) == 0
    assert "every verdict matched" in capsys.readouterr().out.splitlines()[-1]


def test_explore_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["explore", "--variant", "unlocked", "--scenario", "overlapping-push", "--json"]) == 0
    )
    rows = json.loads(capsys.readouterr().out)
    assert {row["invariant"] for row in rows} == {invariant.value for invariant in Invariant}
    # without --session, every shape the variant goes with
    assert {row["session"] for row in rows} == {"openai", "duplex", "duplex-await", "gemini"}
    row = rows[0]
    for key in ("variant", "session", "scenario", "verdict", "expected", "states", "depth"):
        assert key in row
    assert row["verdict"] == "counterexample" and row["depth"] == 6
    assert row["trace"][-1]["site"] == "user-turn"
    assert "delete out1" in row["trace"][-1]["text"]


def test_explore_trace_is_readable(capsys: pytest.CaptureFixture[str]) -> None:
    main(["explore", "--variant", "unlocked", "--scenario", "overlapping-push", "--trace"])
    out = capsys.readouterr().out
    assert "T1 user-turn: gets the lock; sends delete out1 (acknowledged" in out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["explore", "--variant", "nope"], "choose from: unlocked, lock3"),
        (["explore", "--scenario", "nope"], "choose from: overlapping-push"),
        (["explore", "--environment", "nope"], "stale-copies"),
        (["explore", "--session", "nope"], "choose from: openai, duplex"),
        (["explore", "--variant", "three-way", "--session", "gemini"], "no chosen variant"),
    ],
)
def test_bad_input_is_one_line_and_status_2(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1


def test_argparse_errors_are_one_line_too(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["explore", "--bogus"])
    assert exit_info.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_an_option_no_scenario_reads_is_noted(capsys: pytest.CaptureFixture[str]) -> None:
    # overlapping-push has no server pool and no caller-copy site: both options idle
    argv = ["explore", "--variant", "lock5", "--scenario", "overlapping-push"]
    assert main([*argv, "--environment", "base"]) == 0
    base = capsys.readouterr()
    assert base.err == ""
    assert main([*argv, "--environment", "server-items+stale-copies+timeouts"]) == 0
    both = capsys.readouterr()
    notes = both.err.splitlines()
    assert [note.split(":")[2].strip() for note in notes] == [
        "stale-copies adds no move here",
        "server-items adds no move here",
    ]
    states = [line.split()[-1] for line in base.out.splitlines()[1:3]]
    assert states != [line.split()[-1] for line in both.out.splitlines()[1:3]]  # timeouts adds
    # a scenario that reads an option gets no note about it; the catalog's shapes give
    # stale-anchors no move at all, and say why
    main(["explore", "--scenario", "server-item-during-replacement", "--environment", "all"])
    notes = capsys.readouterr().err.splitlines()
    assert [note.split(":")[2].strip() for note in notes] == ["stale-anchors adds no move here"]
    assert "puts an item announced after a deleted one at the mirror's tail" in notes[0]


def test_session_narrows_explore_and_says_what_holds_by_construction(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["explore", "--variant", "lock5", "--scenario", "cleanup-during-tool-push"]
    assert main([*argv, "--session", "duplex", "--environment", "reconnects"]) == 0
    out = capsys.readouterr().out
    assert "holds (by construction: the session sends no deletes)" in out
    assert "mirror-true-at-rest   counterexample at depth 1 (confirmed)" in out
    assert "note: duplex: reconnects does not apply" in out
    assert " openai " not in out
