"""Fuzzing every option of every command: any value gives a run or one line and exit 2.

Each command starts from a cheap run (`BASE`) and gets one to three options
more, each with a value that is odd (empty, negative, not finite, too large,
unknown, another option's name) or valid. The options are read from the parser,
so a new option is fuzzed too: `VALUES` lists the options whose valid values
must stay cheap (a demo of a million turns is valid, and long); every other one
gets `ODD` values. No value may give a traceback, exit 3 (the conftest fails a
test that reaches the last-resort handler), or an error of more than one line.

Runs are in-process, in a directory of their own (paths in the values are
relative and never leave it). The budget is fixed: `BUDGET` per command.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proofs.cli import build_parser, main

#: Text a shell can pass: no NUL, no lone surrogates.
SAFE = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
ODD = st.sampled_from(
    ["", " ", "-", "--", "-1", "0", "1", "1e400", "inf", "-inf", "nan", "x", "é", "a+b",
     "base+", "all", "[]", '{"a": 1}', "\t", "99999999999999999999", "--json", "0x10"]
) | st.text(alphabet=SAFE, max_size=8)  # fmt: skip
#: Paths: relative, inside the run's directory (`_sandbox` makes the ones named here).
PATHS = st.sampled_from(
    ["out", "out.json", "missing/x", "missing/x.json", "file.txt", "file.txt/x", "dir.json",
     ".", "", "sites.json", "bad.json", "agent.py", "deep.py", "dir"]
)  # fmt: skip

SMALL_NUMBERS = st.sampled_from(["0", "1", "2", "-3", "1.5", "1e9", "nan", "x", ""])
#: Per command: a cheap run, and the values of options whose valid values could be slow.
BASE: dict[str, list[str]] = {
    "explore": ["--variant", "lock3", "--scenario", "overlapping-push"],
    "verify": ["--variant", "unlocked", "--scenario", "overlapping-push", "--environment",
               "base", "--invariant", "no-unintended-delete", "--jobs", "1"],
    "demo": ["--turns", "1", "--variant", "three-way", "--latency-ms", "1", "--jitter-ms", "0"],
    "conform": ["--variant", "lock3", "--scenario", "overlapping-push", "--depth", "3"],
    "audit": ["agent.py"],
    "livekit": ["--release", "1.8.9", "--scenario", "overlapping-push", "--no-sweep"],
}  # fmt: skip
VALUES: dict[str, dict[str, st.SearchStrategy[str]]] = {
    "explore": {
        "--variant": st.sampled_from(["lock3", "three-way", "nope"]) | ODD,
        "--scenario": st.sampled_from(["overlapping-push", "nope"]) | ODD,
        "--environment": st.sampled_from(["base", "all", "timeouts+rejections", "x+y"]) | ODD,
        "--sites": PATHS,
    },
    "verify": {
        "--variant": st.sampled_from(["unlocked", "nope"]) | ODD,
        "--scenario": st.sampled_from(["overlapping-push", "nope"]) | ODD,
        "--environment": st.sampled_from(["base", "base+", "nope"]) | ODD,
        "--invariant": st.sampled_from(["no-unintended-delete", "agreement-at-rest"]) | ODD,
        "--timeout": st.sampled_from(["0.001", "1e-9", "5", "604800", "604801"]) | ODD,
        "--jobs": st.sampled_from(["1", "2", "0", "100000", "99999999999999999999"]) | ODD,
        "--itf": PATHS,
    },
    "demo": {
        "--variant": st.sampled_from(["three-way", "lock5", "nope"]) | ODD,
        "--turns": SMALL_NUMBERS,
        "--latency-ms": SMALL_NUMBERS | st.sampled_from(["2500", "1e6", "-0"]),
        "--jitter-ms": SMALL_NUMBERS | st.sampled_from(["4999", "inf"]),
        "--seed": SMALL_NUMBERS | ODD,
    },
    "conform": {
        "--variant": st.sampled_from(["lock3", "nope"]) | ODD,
        "--scenario": st.sampled_from(["overlapping-push", "nope"]) | ODD,
        "--environment": st.sampled_from(["base", "timeouts", "nope"]) | ODD,
        "--depth": SMALL_NUMBERS,
        "--hypothesis": SMALL_NUMBERS,
    },
    "audit": {"paths": PATHS, "--emit-sites": PATHS | st.just("-")},
    "livekit": {
        "--release": st.sampled_from(["1.8.9", "0.0.1", "latest"]) | ODD,
        "--scenario": st.sampled_from(["overlapping-push", "nope"]) | ODD,
        "--with": st.sampled_from(["timeouts", "rejections", "stale-copies"]) | ODD,
    },
}
#: Examples per command: fewer where each valid run starts worker processes
#: (verify) or drives a real livekit-agents session.
BUDGET = {"verify": 12, "livekit": 8}


def _settings(command: str) -> settings:
    return settings(
        max_examples=BUDGET.get(command, 40),
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )


AGENT = Path(__file__).resolve().parents[2] / "examples" / "callback_session" / "agent.py"


def _options(command: str) -> dict[str, argparse.Action]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    actions = sub.choices[command]._actions
    found = {}
    for action in actions:
        if isinstance(action, argparse._HelpAction):
            continue
        name = action.option_strings[-1] if action.option_strings else action.dest
        found[name] = action
    return found


def _sandbox(directory: Path) -> None:
    (directory / "file.txt").write_text("")
    (directory / "dir.json").mkdir(exist_ok=True)
    (directory / "dir").mkdir(exist_ok=True)
    (directory / "sites.json").write_text(
        '[{"name": "a", "request": "mirror-snapshot", "local_update": "before", "locked": true}]'
    )
    (directory / "bad.json").write_text('[{"name": "a", "locked": "no"}]')
    (directory / "agent.py").write_text(AGENT.read_text())
    (directory / "deep.py").write_text("x = " + "-" * 100_000 + "1\n")


@st.composite
def _argv(draw: st.DrawFn, command: str) -> list[str]:
    options = _options(command)
    chosen = draw(st.lists(st.sampled_from(sorted(options)), min_size=1, max_size=3))
    argv = [command, *BASE[command]]
    for name in chosen:
        action = options[name]
        takes_value = action.nargs != 0
        value = draw(VALUES[command].get(name, ODD)) if takes_value else None
        if not action.option_strings:  # a positional: replace the base's
            argv = [command, value or "", *argv[2:]]
        elif value is None:
            argv.append(name)
        else:
            argv += [name, value] if draw(st.booleans()) else [f"{name}={value}"]
    return argv


def _check(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's own refusals
        code = exit_.code if isinstance(exit_.code, int) else 2
    _, err = capsys.readouterr()
    assert code in (0, 1, 2), (argv, code, err)
    if code == 2:
        lines = err.strip("\n").splitlines()
        assert lines and "error" in lines[-1], (argv, err)
        assert len(lines) == 1, (argv, err)
        assert "Traceback" not in err


@pytest.mark.parametrize("command", sorted(BASE))
def test_every_option_of_every_command_gives_a_run_or_one_line(
    command: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    if command == "livekit":
        pytest.importorskip("livekit.agents")
    monkeypatch.chdir(tmp_path)
    _sandbox(tmp_path)
    assert set(VALUES[command]) <= set(_options(command)), "a fuzzed option is gone"

    @_settings(command)
    @given(argv=_argv(command))
    def fuzz(argv: list[str]) -> None:
        _check(argv, capsys)

    fuzz()
