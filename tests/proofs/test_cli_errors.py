"""Each input that crashed, misled or wasted work before: one line, the right exit status.

2 is bad input or a file that cannot be read or written, 1 only a verdict, 3 an
error of ackguard's own (the last-resort handler). Paths that will be written
are checked before any work starts: the work is replaced by a stub that fails
if it is ever reached.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

from model import VARIANTS_BY_NAME, Invariant
from proofs.cli import audit as audit_cli
from proofs.cli import explore as explore_cli
from proofs.cli import main
from proofs.cli import verify as verify_cli
from proofs.errors import EncodingMismatch, UsageError

main_module = importlib.import_module("proofs.cli.main")

#: The cells of one (variant, scenario, environment) for lock3: every invariant under
#: every session shape lock3 goes with (explore's default when --session is not given).
LOCK3_CELLS = len(Invariant) * len(VARIANTS_BY_NAME["lock3"].shapes)
ROOT = Path(__file__).resolve().parents[2]
#: one cheap (variant, scenario) with one counterexample under `base`
ONE = ["--session", "openai", "--variant", "unlocked", "--scenario", "overlapping-push",
       "--environment", "base", "--invariant", "no-unintended-delete", "--jobs", "1"]  # fmt: skip


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:  # argparse's own errors
        code = exit_.code if isinstance(exit_.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


def _one_line(err: str) -> None:
    assert err.count("\n") == 1, err
    assert "Traceback" not in err


class Reached(BaseException):
    """Past every handler of `main`, as no error of a command is."""


def _never(*args: Any, **kwargs: Any) -> Any:
    raise Reached("the work started before the bad path was found")


@pytest.mark.parametrize("limit", ["inf", "-inf", "nan", "1e400", "0", "-1", "604801", "x"])
def test_a_time_limit_must_be_a_finite_positive_number(
    capsys: pytest.CaptureFixture[str], limit: str
) -> None:
    code, out, err = _run(capsys, "verify", *ONE, f"--timeout={limit}")
    assert (code, out) == (2, "")
    _one_line(err)
    assert "--timeout" in err and "seconds" in err


@pytest.mark.parametrize(
    ("latency", "jitter", "needle"),
    [("100000", "5", "connect timeout"), ("2500", "5", "ack timeout"), ("0", "4999", "ack")],
)
def test_a_demo_latency_past_its_timeouts_is_refused(
    capsys: pytest.CaptureFixture[str], latency: str, jitter: str, needle: str
) -> None:
    argv = ["demo", "--turns", "1", "--variant", "lock5"]
    code, out, err = _run(capsys, *argv, "--latency-ms", latency, "--jitter-ms", jitter)
    assert (code, out) == (2, "")
    _one_line(err)
    assert needle in err


@pytest.mark.parametrize(
    ("target", "needle"),
    [
        ("/proc/traces.json", "cannot write in /proc"),
        ("/proc/traces", "cannot write in /proc"),
        ("{tmp}/missing/deeper/traces", "missing/deeper does not exist"),
        ("{tmp}/missing/one.json", "missing does not exist"),
        ("{tmp}/file.txt/traces", "file.txt is not a directory"),
        ("{tmp}/file.txt", "not a directory"),
        ("{tmp}", None),  # a directory is fine, but ONE.json below is one
        ("{tmp}/dir.json", "is a directory"),
    ],
)
def test_an_itf_path_that_cannot_be_written_is_found_before_any_solving(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    target: str,
    needle: str | None,
) -> None:
    (tmp_path / "file.txt").write_text("")
    (tmp_path / "dir.json").mkdir()
    monkeypatch.setattr(verify_cli, "run", _never)
    path = target.format(tmp=tmp_path)
    if needle is None:
        with pytest.raises(Reached):
            main(["verify", *ONE, "--itf", path])
        return
    code, out, err = _run(capsys, "verify", *ONE, "--itf", path)
    assert (code, out) == (2, "")
    _one_line(err)
    assert needle in err
    assert not (tmp_path / "missing").exists()


def test_a_missing_itf_directory_is_made_only_under_one_that_exists_and_said_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "traces"
    code, _, err = _run(capsys, "verify", *ONE, "--itf", str(target))
    assert code == 0
    assert f"wrote 1 ITF trace(s) to {target} (a new directory)" in err
    assert len(list(target.iterdir())) == 1


def test_an_itf_file_for_many_traces_keeps_the_table(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # every invariant: unlocked breaks 1 and 2 there, so two counterexamples
    two = [*ONE[:-4], "--jobs", "1"]
    code, out, err = _run(capsys, "verify", *two, "--itf", str(tmp_path / "one.json"))
    assert code == 2
    assert "every verdict matched" in out  # the results were printed before the refusal
    _one_line(err)
    assert "2 counterexamples; name a directory" in err


def test_emit_sites_that_cannot_be_written_is_found_before_the_audit(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(audit_cli, "audit_paths", _never)
    source = str(ROOT / "examples" / "callback_session" / "agent.py")
    for target in ("/proc/sites.json", str(tmp_path / "no" / "sites.json"), str(tmp_path)):
        code, out, err = _run(capsys, "audit", source, "--emit-sites", target)
        assert (code, out) == (2, ""), target
        _one_line(err)
        assert "--emit-sites" in err


@pytest.mark.parametrize(
    "source",
    [
        "x = " + "-" * 100_000 + "1",  # the parser runs out of stack
        "x = " + " + ".join(["a"] * 100_000),
        # parses, but the audit's own walk runs past the recursion limit
        "class A:\n  async def f(self):\n    x = self._rt_session.chat_ctx" + " + a" * 5000,
    ],
)
def test_an_audit_of_source_nested_too_deeply_exits_2_not_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, source: str
) -> None:
    """Exit 1 means "breaks the lock discipline" to a pre-commit hook: never for bad input."""
    path = tmp_path / "deep.py"
    path.write_text(source + "\n")
    code, out, err = _run(capsys, "audit", str(path))
    assert (code, out) == (2, "")
    _one_line(err)
    assert "nested too deeply to audit" in err


def test_an_audit_of_dev_null_finds_nothing_instead_of_no_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _run(capsys, "audit", "/dev/null")
    assert code == 0
    assert "0 places" in out and "no such file" not in err


def test_explore_honours_each_repeated_environment(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["explore", "--variant", "lock3", "--scenario", "overlapping-push", "--json"]
    code, out, _ = _run(capsys, *argv, "--environment", "base", "--environment", "timeouts",
                        "--environment", "base")  # fmt: skip
    assert code == 0
    rows = json.loads(out)
    assert sorted({row["environment"] for row in rows}) == ["base", "timeouts"]
    assert len(rows) == 2 * LOCK3_CELLS  # the repeated base once
    assert {row["session"] for row in rows} == set(VARIANTS_BY_NAME["lock3"].shapes)


def test_verify_checks_a_repeated_name_once(capsys: pytest.CaptureFixture[str]) -> None:
    twice = [*ONE, "--variant", "unlocked", "--environment", "base", "--invariant",
             "no-unintended-delete", "--scenario", "overlapping-push", "--json"]  # fmt: skip
    code, out, _ = _run(capsys, "verify", *twice)
    assert code == 0
    cells = json.loads(out)
    assert len(cells) == 1 and len(cells[0]["scenarios"]) == 1


def test_the_last_resort_turns_an_unexpected_error_into_one_line_and_exit_3(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    log = tmp_path / "crash.log"
    monkeypatch.setenv(main_module.CRASH_LOG, str(log))  # this test means to reach it

    def crash(args: Any) -> int:
        raise RuntimeError("something\nnobody expected")

    monkeypatch.setattr(verify_cli, "run_command", crash)
    code, out, err = _run(capsys, "verify")
    assert (code, out) == (3, "")
    _one_line(err)
    assert "internal error: RuntimeError: something nobody expected" in err
    assert "please file a report" in err
    assert log.read_text().count("\n") == 1


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (UsageError("bad name"), 2),
        (EncodingMismatch("z3 and the model disagree"), 3),
        (RecursionError("deep"), 3),
        (KeyError("k"), 3),
    ],
)
def test_only_errors_of_bad_input_exit_2(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    error: Exception,
    status: int,
) -> None:
    monkeypatch.setenv(main_module.CRASH_LOG, str(tmp_path / "crash.log"))

    def fail(args: Any) -> int:
        raise error

    monkeypatch.setattr(explore_cli, "run", fail)
    code, _, err = _run(capsys, "explore")
    assert code == status
    _one_line(err)


def test_conform_and_explore_check_a_repeated_name_once(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--variant", "lock3", "--variant", "lock3", "--scenario", "overlapping-push"]
    code, out, _ = _run(capsys, "conform", *argv, "--depth", "3", "--json")
    assert code == 0 and len(json.loads(out)) == 1
    spellings = ["--environment", "timeouts+rejections", "--environment", "rejections+timeouts"]
    code, out, _ = _run(capsys, "explore", *argv, *spellings, "--json")
    assert code == 0 and len(json.loads(out)) == LOCK3_CELLS  # one environment


@pytest.mark.parametrize("command", ["verify", "explore", "conform"])
def test_a_session_no_variant_goes_with_is_refused_by_name(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """`openai-reconnect` is a shape record (the release's reconnect) that no variant
    goes with: `--session` listed it and then refused it with "the others go with the
    rest". Now the help leaves it out and the refusal says what it is for."""
    code, out, err = _run(capsys, command, "--session", "openai-reconnect")
    assert (code, out) == (2, "")
    _one_line(err)
    assert "'openai-reconnect' goes with no variant" in err and "three-way" in err
