"""`ackguard explore --sweep`: every mix of up to N calls per cell, in this process,
on a local process pool, or on a Dask cluster, with one answer."""

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from model import SITES, VARIANTS_BY_NAME, Config, Environment, check
from proofs.cli import main
from proofs.engines.executors import dask_executor
from proofs.engines.sweep import jobs, mixes, scenario, shapes, sweep
from proofs.engines.trace import replay
from proofs.errors import UsageError

ARGS = ["explore", "--sweep", "2", "--variant", "lock5", "--variant", "three-way"]
ARGS += ["--environment", "base", "--json"]


def run(capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, Any]:
    status = main([*ARGS, *extra])
    return status, json.loads(capsys.readouterr().out)


def test_the_sweep_finds_the_spoken_message_site_of_1_8_9_under_lock5(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, cells = run(capsys, "--workers", "1")
    assert status == 1
    lock5, three_way = cells
    assert (lock5["variant"], lock5["mixes"]) == ("lock5", len(list(mixes(shapes(SITES), 2))))
    failing = [cell["mix"] for cell in lock5["failing"]]
    assert failing and all("spoken-message" in mix for mix in failing)
    assert len(lock5["smallest"]["mix"]) == 2
    assert three_way["failing"] == [] and three_way["smallest"] is None


def test_every_failing_mix_is_a_run_of_the_readable_model() -> None:
    variant = VARIANTS_BY_NAME["lock3"]
    cells = sweep(jobs([variant], [Environment()], shapes(SITES), 2))
    assert cells[0].failing
    alphabet = {shape.label: shape for shape in shapes(SITES)}
    for result in cells[0].failing:
        config = Config(variant, scenario([alphabet[label] for label in result.mix]), Environment())
        for invariant, depth, text, moves in result.broken:
            assert len(moves) == depth
            violation = check(replay(config, moves).last, config, invariant)
            assert violation is not None and violation.describe() == text


def test_a_local_process_pool_gives_the_same_answer(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "--workers", "2") == run(capsys, "--workers", "1")


def test_a_dask_cluster_on_loopback_gives_the_same_answer(
    capsys: pytest.CaptureFixture[str],
) -> None:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=2,
        processes=False,
        protocol="tcp://",
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tcp://127.0.0.1:")
        on_dask = run(capsys, "--scheduler", address)
    assert on_dask == run(capsys, "--workers", "1")


def test_an_unreachable_scheduler_is_a_usage_error() -> None:
    pytest.importorskip("distributed")
    with pytest.raises(UsageError, match="cannot reach the Dask scheduler"):  # noqa: SIM117
        with dask_executor("tcp://127.0.0.1:9", timeout=0.5):
            pass


def test_a_terminal_gets_a_progress_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    main(
        ["explore", "--sweep", "1", "--variant", "lock5", "--environment", "base", "--workers", "1"]
    )
    err = capsys.readouterr().err
    assert "\rsweep [" in err and f"{len(shapes(SITES))}/{len(shapes(SITES))} mixes" in err


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--scenario", "overlapping-push"], "drop --scenario"),
        (["--site", "nope"], "unknown site 'nope'"),
        (["--scheduler", "tcp://x:1", "--workers", "2"], "--workers is for local processes"),
    ],
)
def test_bad_sweep_arguments(
    capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    assert main(["explore", "--sweep", "1", *argv]) == 2
    assert needle in capsys.readouterr().err


def test_sweep_flags_need_sweep(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "--workers", "2"]) == 2
    assert "--workers goes with --sweep" in capsys.readouterr().err


def test_a_site_file_sweeps_under_its_own_lock_discipline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snapshot = {"request": "mirror-snapshot", "local_update": "before"}
    locked = [{"name": n, **snapshot, "locked": True} for n in ("a", "b")]
    path = tmp_path / "sites.json"
    path.write_text(json.dumps(locked))
    argv = ["explore", "--sweep", "3", "--sites", str(path), "--environment", "base"]
    assert main([*argv, "--workers", "1", "--json"]) == 0
    (cell,) = json.loads(capsys.readouterr().out)
    assert (cell["mixes"], cell["failing"]) == (9, [])
    path.write_text(json.dumps([locked[0], {"name": "b", **snapshot, "locked": False}]))
    assert main([*argv, "--workers", "1", "--json"]) == 1
    (cell,) = json.loads(capsys.readouterr().out)
    assert cell["smallest"]["mix"] == ["a", "b"]
    assert all("b" in mix["mix"] for mix in cell["failing"])


@pytest.mark.parametrize("workers", ["1", "2"])
def test_ctrl_c_says_how_far_the_sweep_got_and_exits_130(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    from concurrent.futures import as_completed as real

    import proofs.engines.sweep as sweep_module

    def interrupted_after_one(futures: Any) -> Any:
        iterator = real(futures)
        yield next(iterator)
        raise KeyboardInterrupt

    calls = 0
    real_job = sweep_module.run_job

    def job_then_interrupt(job: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls > 1:
            raise KeyboardInterrupt
        return real_job(job)

    monkeypatch.setattr(sweep_module, "as_completed", interrupted_after_one)
    monkeypatch.setattr(sweep_module, "run_job", job_then_interrupt)
    argv = ["explore", "--sweep", "1", "--variant", "lock5", "--environment", "base"]
    assert main([*argv, "--workers", workers, "--json"]) == 130
    captured = capsys.readouterr()
    total = len(shapes(SITES))
    assert captured.out == ""
    assert f"INTERRUPTED: 1 of {total} mixes were checked before Ctrl-C" in captured.err
