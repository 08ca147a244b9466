"""The `ackguard` command as a whole: every subcommand's help shows runnable examples."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from proofs.cli import build_parser, main
from proofs.cli import livekit as livekit_cli


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


NAMES = sorted(_subcommands())


def test_every_command_is_here() -> None:
    assert NAMES == ["audit", "conform", "demo", "explore", "livekit", "verify"]


@pytest.mark.parametrize("name", NAMES)
def test_help_shows_each_example_on_a_line_of_its_own(
    name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a narrow terminal: a filled example would be broken into two lines
    monkeypatch.setenv("COLUMNS", "50")
    with pytest.raises(SystemExit) as exit_info:
        main([name, "--help"])
    assert exit_info.value.code == 0
    shown = capsys.readouterr().out.splitlines()
    assert "examples:" in shown, name
    epilog = _subcommands()[name].epilog or ""
    examples = [line for line in epilog.splitlines() if line.startswith("  ")]
    assert any(line.startswith(f"  ackguard {name}") for line in examples), name
    for line in examples:
        assert line in shown, f"ackguard {name} --help breaks {line!r}"


def test_prose_is_still_wrapped(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "50")
    with pytest.raises(SystemExit):
        main(["conform", "--help"])
    out = capsys.readouterr().out
    described = out[out.index("Drive the implementation") : out.index("options:")]
    assert max(len(line) for line in described.splitlines()) <= 50


def test_the_top_level_help_has_examples(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "  ackguard verify --variant lock5 --scenario overlapping-push\n" in (
        capsys.readouterr().out
    )


def test_livekit_without_the_extra_says_what_to_install(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(livekit_cli, "installed_version", lambda: None)
    assert main(["livekit", "--release", "1.8.9", "--no-sweep"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install -e '.[livekit]'" in err


def test_a_reader_that_stops_early_gets_no_traceback() -> None:
    # `ackguard explore --trace | head -1`, with a reader gone before the first write
    # (one scenario: the first write comes after its exploration, as after the whole
    # catalog's, which took seconds more and is `test_explore_cli.py`'s to check)
    one = ["--variant", "unlocked", "--scenario", "overlapping-push"]
    process = subprocess.Popen(
        [sys.executable, "-m", "proofs.cli", "explore", *one, "--trace"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    process.stdout.close()
    _, err = process.communicate(timeout=120)
    assert process.returncode == 141
    assert b"Traceback" not in err and b"Exception ignored" not in err


def test_a_command_imports_only_its_own_engines() -> None:
    """`ackguard verify` waits for no other command's imports (Hypothesis comes with
    `conform`'s engine, websockets with `demo`'s): each costs the README's main command
    a fraction of a second per process."""
    probe = (
        "import sys; from proofs.cli.main import build_parser; build_parser(only='verify'); "
        "print(sorted(m for m in ('hypothesis', 'websockets', 'proofs.cli.conform', "
        "'proofs.cli.demo', 'proofs.cli.audit') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True
    ).stdout
    assert out.strip() == "[]"
    # the whole parser still has every command (help, a misspelt command)
    assert set(_subcommands()) == {"audit", "conform", "demo", "explore", "livekit", "verify"}
