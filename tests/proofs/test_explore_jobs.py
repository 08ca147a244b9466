"""Kept workers (`jobs.kept_worker`): the explorer's groups share worker processes, a
kept worker keeps the limits a fresh one has (a deadline, an error named), and what
it remembers of earlier groups' explorations is exact."""

from __future__ import annotations

import os
import time

import pytest

import proofs.engines.settle as settle
from model import SCENARIOS_BY_NAME, VARIANTS_BY_NAME, Config, Environment, Invariant
from proofs.engines.explore import Exploration, explore
from proofs.engines.jobs import Jobs, _Job, kept_worker
from proofs.engines.settle import explore_group, fol_proof
from proofs.errors import InternalError


@kept_worker
def _kept_pid(wait: float) -> int:
    time.sleep(wait)
    return os.getpid()


def _fresh_pid() -> int:
    return os.getpid()


@kept_worker
def _kept_fail() -> None:
    raise ValueError("a kept job that breaks")


def _pids(pool: Jobs) -> dict[object, int]:
    return {f.key: f.value for f in pool.results()}


def test_kept_jobs_share_one_worker_and_others_get_their_own() -> None:
    pool = Jobs(1)
    for key in ("a", "b", "c"):
        pool.submit(key, _kept_pid, (0.0,), timeout=30.0)
    pool.submit("fresh", _fresh_pid, (), timeout=30.0)
    pids = _pids(pool)
    assert pids["a"] == pids["b"] == pids["c"] != os.getpid()
    assert pids["fresh"] not in (pids["a"], os.getpid())
    # the kept worker is ended once the queue is done
    assert not pool.idle and not pool.running


def test_a_kept_job_past_its_deadline_is_ended_and_the_next_gets_a_new_worker() -> None:
    pool = Jobs(1)
    pool.submit("slow", _kept_pid, (30.0,), timeout=0.5)
    pool.submit("next", _kept_pid, (0.0,), timeout=30.0)
    started = time.monotonic()
    done = {f.key: f for f in pool.results()}
    assert time.monotonic() - started < 10
    assert done["slow"].timed_out and done["slow"].value is None
    assert not done["next"].timed_out and done["next"].value != os.getpid()


def test_a_kept_job_that_raises_is_an_internal_error_naming_it() -> None:
    pool = Jobs(1)
    pool.submit("broken", _kept_fail, (), timeout=30.0)
    with pytest.raises(InternalError, match=r"(?s)broken.*a kept job that breaks"):
        list(pool.results())
    assert not pool.idle and not pool.running


def test_the_explorer_groups_run_in_kept_workers_and_proofs_do_not() -> None:
    assert _Job("group", explore_group, (), 1.0).kept
    assert not _Job("proof", fol_proof, (), 1.0).kept


# -- the explorations a kept worker remembers (`settle._explore`) -----------------------


def _answer(exploration: Exploration) -> object:
    """What a group reads of an exploration, its seconds aside."""
    return (exploration.config, exploration.states, exploration.findings)


def _remembered_agrees(configs: list[Config]) -> bool:
    """Whether each config's remembered answer, asked in turn, is its fresh exploration."""
    settle._EXPLORED.clear()
    try:
        return all(
            _answer(settle._explore(c, INVARIANTS)) == _answer(explore(c, INVARIANTS))
            for c in configs
        )
    finally:
        settle._EXPLORED.clear()


INVARIANTS = tuple(Invariant)
#: lock3 and lock5 are one model on overlapping-push (neither site that only lock5
#: locks is called), unlocked is not; `stale-anchors` is read by no scenario here.
SAME_MODEL = [
    Config(VARIANTS_BY_NAME[v], SCENARIOS_BY_NAME["overlapping-push"], Environment(**env))
    for v in ("lock3", "lock5", "unlocked")
    for env in ({}, {"stale_anchors": True})
]


def test_a_remembered_exploration_is_the_fresh_one_for_the_same_model() -> None:
    settle._EXPLORED.clear()
    first = settle._explore(SAME_MODEL[0], INVARIANTS)
    again = settle._explore(SAME_MODEL[1], INVARIANTS)  # lock3 under stale-anchors
    assert len(settle._EXPLORED) == 1 and again.config is SAME_MODEL[1]
    assert again.findings == first.findings
    assert _remembered_agrees(SAME_MODEL)


def test_the_comparison_catches_a_memo_keyed_too_coarsely(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the mutant keys by the scenario alone: unlocked is then given lock3's answer
    monkeypatch.setattr(settle, "_behaviour", lambda config, invariants: config.scenario)
    assert not _remembered_agrees(SAME_MODEL)
