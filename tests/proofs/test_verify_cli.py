"""`ackguard verify`: exit codes, the table, JSON, timelines, Mermaid and ITF."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from model import Invariant
from proofs.cli import main

#: cheap cells: the seed's overlapping push (one invariant), a replacement that
#: deletes the model's own item (both invariants fail), and one that holds
OVERLAP = [
    "--variant", "unlocked", "--scenario", "overlapping-push", "--environment", "base",
    "--invariant", "no-unintended-delete",
]  # fmt: skip
FAILS = [
    "--variant", "unlocked", "--scenario", "server-item-during-replacement",
    "--environment", "server-items", "--session", "openai",
]  # fmt: skip
HOLDS = ["--variant", "lock3", "--scenario", "server-item-during-replacement", "--environment",
         "base", "--session", "openai"]  # fmt: skip


def _verify(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["verify", "--jobs", "1", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_matching_verdicts_exit_0_with_a_table_a_scope_and_a_last_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # agreement at rest: no first-order proof is asked for, so the run is quick
    code, out, _ = _verify(
        capsys, *FAILS, "--environment", "base", "--invariant", "agreement-at-rest"
    )
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[0].split()[:6] == [
        "variant",
        "session",
        "invariant",
        "environment",
        "verdict",
        "scope",
    ]
    assert "counterexample at depth 7" in out and "server-item-during-replacement" in out
    assert "1 call: replacement" in out
    assert "proved" in out and "the catalog's scenario: 1 calls at most" in out
    assert "does not prove agreement-at-rest" in out  # why that proof is bounded
    assert lines[-1].startswith("every verdict matched the catalog's expectation")


def test_the_per_scenario_z3_engines_are_behind_method_bmc(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _verify(capsys, *FAILS, "--environment", "base", "--method", "bmc")
    assert code == 0
    assert "counterexample at depth 3" in out and "server-item-during-replacement" in out
    assert "proved" in out and "k-induction" in out and "items<=2 tasks<=1 pool<=1" in out


@pytest.mark.parametrize("method", ["bmc", "default"])
def test_an_unknown_is_a_mismatch_and_exits_1(
    capsys: pytest.CaptureFixture[str], method: str
) -> None:
    # default: the explorer's job cannot finish in a millisecond either
    code, out, _ = _verify(capsys, *HOLDS, "--timeout", "0.001", "--method", method)
    assert code == 1
    assert "unknown" in out and "MISMATCH" in out
    assert "DID NOT MATCH" in out.strip().splitlines()[-1]


def test_a_proof_out_of_time_keeps_the_bounded_proof_and_never_says_every_size(
    capsys: pytest.CaptureFixture[str],
) -> None:
    three_way = ["--variant", "three-way", "--scenario", "overlapping-push", "--environment",
                 "base", "--invariant", "no-unintended-delete", "--json"]  # fmt: skip
    code, out, _ = _verify(capsys, *three_way, "--fol-seconds", "0.01")
    (cell,) = json.loads(out)
    assert code == 0 and cell["verdict"] == "proved" and cell["matched"]
    assert cell["method"] == "explore" and cell["bound"] != "every size"
    assert cell["scope"].startswith("the catalog's scenario")
    assert "every number" not in cell["scope"]
    # the proof stops itself at 3 s (an unknown), or its worker is stopped after it
    assert cell["reason"].startswith("the first-order engine")
    assert "time" in cell["reason"], cell["reason"]


@pytest.mark.parametrize(
    "args",
    [
        ["--variant", "nope"],
        ["--scenario", "nope"],
        ["--invariant", "nope"],
        ["--environment", "bogus"],
        ["--timeout", "-1"],
        ["--timeout", "soon"],
        ["--method", "magic"],
        ["--jobs", "0"],
        ["--session", "nope"],
        ["--variant", "three-way", "--session", "duplex"],
        ["--fol-seconds", "-1"],
        ["--fol-seconds", "nan"],
        ["--method", "bmc", "--session", "duplex"],
    ],
)
def test_bad_arguments_exit_2_with_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    try:
        code = main(["verify", *args])
    except SystemExit as exit_info:  # argparse's own checks
        code = int(str(exit_info.code))
    assert code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_unknown_names_exit_2_through_choices(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "--variant", "nope"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "unknown variant 'nope'" in err and "lock3" in err


def test_json_cells_have_the_documented_shape(capsys: pytest.CaptureFixture[str]) -> None:
    both = ["--invariant", "no-unintended-delete", "--invariant", "agreement-at-rest"]
    code, out, _ = _verify(capsys, *FAILS, *both, "--json")
    assert code == 0
    cells = json.loads(out)
    assert len(cells) == 2
    assert {cell["session"] for cell in cells} == {"openai"}
    for cell in cells:
        for key in (
            "variant",
            "session",
            "invariant",
            "environment",
            "scenario",
            "verdict",
            "expected",
            "depth",
            "method",
            "scope",
            "assumptions",
            "bound",
            "seconds",
            "trace",
            "calls",
            "impl_replay",
        ):
            assert key in cell
        assert cell["verdict"] == "counterexample" == cell["expected"]
        assert cell["scenario"] == "server-item-during-replacement"
        assert cell["method"] == "explore" and cell["bound"] == "calls=1 items=2"
        assert cell["scope"] == "1 call: replacement" and cell["assumptions"] == []
        assert cell["calls"] == ["replacement"] and cell["impl_replay"] == "reproduced"
        assert len(cell["trace"]) == cell["depth"]
        step = cell["trace"][0]
        assert {"step", "move", "task", "site", "item", "text", "state"} <= set(step)


def test_trace_prints_a_numbered_timeline_a_reviewer_can_read(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _verify(capsys, *OVERLAP, "--trace")
    assert code == 0
    assert "acknowledged, not meant to be removed" in out
    assert "  6. " in out and "user-turn" in out and "tool-outputs" in out
    # each trace's heading names the invariant once
    headings = [line for line in out.splitlines() if line.startswith("unlocked / ")]
    assert headings
    for line in headings:
        assert sum(line.count(f"{inv.value}:") for inv in Invariant) == 1, line


def test_mermaid_draws_one_lifeline_per_task_the_session_and_the_server(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _verify(capsys, *OVERLAP, "--mermaid")
    assert code == 0
    diagram = out[out.index("sequenceDiagram") :]
    assert "participant T0 as T0 tool-outputs" in diagram
    assert "participant T1 as T1 user-turn" in diagram
    assert "participant S as session" in diagram and "participant V as server" in diagram
    assert "S->>V: delete" in diagram
    assert "VIOLATED" in diagram


def test_itf_writes_one_trace_per_counterexample(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = _verify(capsys, *FAILS, "--itf", str(tmp_path / "traces"))
    assert code == 0 and "wrote 2 ITF trace(s)" in err
    files = sorted((tmp_path / "traces").glob("*.itf.json"))
    assert len(files) == 2
    document = json.loads(files[0].read_text())
    assert document["#meta"]["format"] == "ITF"
    assert "action" in document["vars"] and "server" in document["vars"]
    states = document["states"]
    assert states[0]["#meta"] == {"index": 0}
    assert states[0]["action"] == "init"
    assert states[1]["action"].split()[0] in ("call", "copy", "model-creates")
    # Quint's convention: the action's name in actionTaken, what it picked in nondetPicks
    assert states[1]["mbt::actionTaken"] == states[1]["action"].split()[0].replace("-", "_")
    assert set(states[1]["mbt::nondetPicks"]) == {"task", "item"}
    for state in states:
        assert set(document["vars"]) <= set(state)
    assert states[-1]["tasks"][0]["pc"]
    assert states[0]["created"] == {"#bigint": "0"}


def test_itf_into_one_file_needs_exactly_one_counterexample(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "one.itf.json"
    code, _, _ = _verify(
        capsys, *FAILS, "--invariant", "no-unintended-delete", "--itf", str(target)
    )
    assert code == 0 and json.loads(target.read_text())["states"]
    assert main(["verify", "--jobs", "1", *FAILS, "--itf", str(tmp_path / "two.json")]) == 2
    assert "2 counterexamples" in capsys.readouterr().err


def test_help_has_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["verify", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "ackguard verify --variant lock3" in out and "exit status" in out


def test_a_variant_that_is_the_same_model_is_checked_once_and_says_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # lock5 locks two sites more than lock3, neither called by overlapping-push
    same = ["--variant", "lock3", "--variant", "lock5", "--scenario", "overlapping-push",
            "--environment", "base", "--invariant", "no-unintended-delete"]  # fmt: skip
    code, out, _ = _verify(capsys, *same, "--method", "bmc")
    assert code == 0
    assert "  overlapping-push: lock5 = lock3" in out.splitlines()
    code, out, _ = _verify(capsys, *same, "--json", "--method", "bmc")
    shared = {c["variant"]: c["scenarios"][0]["same_model_as"] for c in json.loads(out)}
    assert shared == {"lock3": None, "lock5": "lock3"}


def test_a_terminal_sees_progress_and_a_pipe_does_not(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    two = ["--variant", "lock3", "--session", "openai", "--scenario", "overlapping-push",
           "--scenario", "spoken-during-tool-push", "--environment", "base"]  # fmt: skip
    default = [*two[:-2], "--environment", "base", "--environment", "timeouts",
               "--invariant", "agreement-at-rest"]  # fmt: skip
    _, _, err = _verify(capsys, *default)
    assert err == ""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    _, out, err = _verify(capsys, *two, "--method", "bmc")
    assert "verify: 1 of 2 (variant, scenario) checked\r" in err
    assert err.endswith("\r") and "verify" not in out
    # the default method counts its jobs: one explorer group per environment here
    _, out, err = _verify(capsys, *default)
    assert "verify: 1 of 2 jobs done (explorer groups, proofs)\r" in err
    assert err.endswith("\r") and "verify" not in out
