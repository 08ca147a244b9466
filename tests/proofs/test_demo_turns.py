"""`ackguard demo --turns` has a ceiling: above it one line and exit 2, before any run."""

from __future__ import annotations

import pytest

from proofs.cli import build_parser, main
from proofs.cli.demo import MAX_TURNS


def test_the_ceiling_itself_is_taken() -> None:
    args = build_parser().parse_args(["demo", "--turns", str(MAX_TURNS)])
    assert args.turns == MAX_TURNS


@pytest.mark.parametrize("turns", [MAX_TURNS + 1, 10**18])
def test_more_turns_are_one_line_and_exit_2(turns: int, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["demo", "--turns", str(turns)])
    assert stop.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert f"--turns: expected at most {MAX_TURNS}" in err and "loopback server" in err


def test_the_help_says_the_ceiling(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    assert f"1 to {MAX_TURNS}" in capsys.readouterr().out
