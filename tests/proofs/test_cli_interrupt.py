"""Ctrl-C stops a command within 2 s, leaves no process behind, and prints what finished.

A terminal sends SIGINT to the whole foreground process group (here: the command,
its worker processes and multiprocessing's helpers), so the test does the same
to a command started in a group of its own. `verify` sees a terminal on standard
error (a pseudo-terminal), so its progress line says when a piece of its work is
done (a (variant, scenario) group of `--method bmc`, an explorer group of the
default method): the interrupt then comes before the rest.
"""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from attrs import evolve

from model import ENVIRONMENTS, Invariant

STOPS_WITHIN = 2.0


def _alive(group: int) -> list[str]:
    """Processes of `group` that still run (a zombie has ended; init reaps it later)."""
    listed = subprocess.run(
        ["ps", "-o", "pid=,stat=", "-g", str(group)], capture_output=True, text=True, check=False
    ).stdout.split("\n")
    return [line for line in listed if line.strip() and "Z" not in line.split()[1]]


def _interrupt(argv: list[str], ready: str | None, wait: float) -> tuple[int, str, str]:
    """Run `ackguard ARGV`, send SIGINT to its group once `ready` shows on its
    standard error (or after `wait` seconds), and check the two time limits."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "proofs.cli", *argv],
        stdout=subprocess.PIPE,
        stderr=follower,
        start_new_session=True,
        text=True,
    )
    os.close(follower)
    err: list[str] = []
    # read the terminal all along: a full one would block the command's writes
    reader = threading.Thread(target=_drain, args=(leader, err), daemon=True)
    reader.start()
    started = time.monotonic()
    while ready is not None and ready not in "".join(err) and time.monotonic() - started < 60:
        time.sleep(0.02)
    if ready is None:
        time.sleep(wait)
    assert process.poll() is None, "the command ended before the interrupt"
    os.killpg(process.pid, signal.SIGINT)
    sent = time.monotonic()
    out, _ = process.communicate(timeout=30)
    stopped = time.monotonic() - sent
    while _alive(process.pid) and time.monotonic() - sent < STOPS_WITHIN:
        time.sleep(0.05)
    left = _alive(process.pid)
    reader.join(5)
    os.close(leader)
    seen = "".join(err)
    assert stopped <= STOPS_WITHIN, f"stopped {stopped:.1f} s after Ctrl-C"
    assert not left, f"left behind: {left}"
    assert "Traceback" not in seen, seen
    return process.returncode, out, seen


def _drain(leader: int, into: list[str]) -> None:
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # every writer has closed the terminal
            return
        if not chunk:
            return
        into.append(chunk.decode(errors="replace"))


def test_verify_stops_its_workers_and_prints_the_cells_done_marked_incomplete() -> None:
    argv = ["verify", "--variant", "three-way", "--variant", "lock5-hoisted", "--method", "bmc"]
    argv += ["--scenario", "two-replacements-during-user-turn", "--jobs", "2"]
    code, out, _ = _interrupt(argv, ready="verify: 1 of 2", wait=0)
    assert code == 130
    rows = [line.split() for line in out.splitlines()]
    done = [row for row in rows if row and row[0] == "three-way"]
    # every invariant in the environments bmc checks (the columns less the reconnect,
    # which it does not model, so `reconnects` is `base` again): all of three-way
    columns = {evolve(column, reconnects=False) for column in ENVIRONMENTS}
    cells = len(Invariant) * len(columns)
    assert len(done) == cells
    assert not [row for row in rows if row and row[0] == "lock5-hoisted"]
    assert f"INTERRUPTED: {cells} of {2 * cells} cells were checked before Ctrl-C" in out
    assert "not a verdict" in out and "every verdict matched" not in out
    assert f"not finished: lock5-hoisted, {cells} of its cells" in out
    assert "time limit" not in out  # no cell is said to have run out of time


def test_verify_stops_a_first_order_proof_and_keeps_what_the_explorer_settled() -> None:
    """The default method: both explorer groups are done, the first-order proof of
    three-way's cell is running when Ctrl-C comes."""
    # every site but the spoken message: no certificate is committed for that cell
    # (three-way's are for all six sites), so `--fol-seconds` runs inference, which
    # under server-items takes minutes (docs/proofs.md); a certificate's check would
    # end in seconds and could beat the interrupt
    env = "server-items"
    argv = ["verify", "--variant", "unlocked", "--variant", "three-way", "--environment", env]
    argv += ["--session", "openai", "--session", "three-way"]
    for scenario in ("overlapping-push", "replacement-first", "cleanup-during-tool-push"):
        argv += ["--scenario", scenario]
    argv += ["--invariant", "no-unintended-delete", "--jobs", "2", "--fol-seconds", "600"]
    code, out, _ = _interrupt(argv, ready="verify: 2 of 3 jobs", wait=0)
    assert code == 130
    rows = [line.split() for line in out.splitlines()]
    assert [row[:5] for row in rows if row and row[0] == "unlocked"] == [
        ["unlocked", "openai", "no-unintended-delete", env, "counterexample"]
    ]
    assert not [row for row in rows if row and row[0] == "three-way"]
    assert "INTERRUPTED: 1 of 2 cells were checked before Ctrl-C" in out
    assert "not finished: three-way, 1 of its cells" in out
    assert "time limit" not in out and "every number" not in out


def test_explore_prints_what_it_explored_marked_incomplete(tmp_path: Path) -> None:
    sites = [
        {"name": f"s{n}", "request": "mirror-snapshot", "local_update": "before"} for n in range(64)
    ]
    path = tmp_path / "sites.json"
    path.write_text(json.dumps(sites))
    code, out, _ = _interrupt(["explore", "--sites", str(path)], ready=None, wait=2.5)
    assert code == 130
    last = out.strip().splitlines()[-1]
    assert last.startswith("INTERRUPTED: ") and " of 2080 (variant, scenario, environment)" in last
    assert "keeps both invariants" not in out


@pytest.mark.parametrize(
    "argv",
    [["demo", "--turns", "1000"], ["conform", "--environment", "all", "--hypothesis", "5000"]],
)
def test_other_commands_stop_and_say_so(argv: list[str]) -> None:
    """These commands print nothing as they start, so the interrupt waits for the time
    loading the commands takes on this machine now (`--help`, measured first: under
    load it took over 2.5 s, and the interrupt came while loading), and 1.5 s more."""
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "proofs.cli", argv[0], "--help"], check=True,
                   capture_output=True)  # fmt: skip
    loading = time.monotonic() - started
    code, _, err = _interrupt(argv, ready=None, wait=loading + 1.5)
    assert code == 130
    assert f"ackguard {argv[0]}: interrupted" in err


def test_ctrl_c_early_is_one_line_too() -> None:
    """Ctrl-C 0.3 s after the start: the command is loading (z3) or has just begun;
    either way no traceback, status 130, and the one line or the incomplete table."""
    code, out, err = _interrupt(["explore", "--environment", "all"], ready=None, wait=0.3)
    assert code == 130
    assert "Traceback" not in err
    assert err.strip().endswith("interrupted") or "INTERRUPTED" in out, (out, err)


def test_ctrl_c_while_the_commands_module_loads_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command's own module is imported when `main` builds the parser
    (`proofs.cli.main.COMMANDS`); a Ctrl-C inside that import is caught there."""
    import importlib

    from proofs.cli import main

    def interrupted(name: str) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib, "import_module", interrupted)
    assert main(["explore", "--environment", "all"]) == 130
    assert capsys.readouterr().err == "ackguard explore: interrupted\n"
