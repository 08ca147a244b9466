"""What `drivable.undrivable` costs a Hypothesis draw: replayed from the start for
every question (as before `_Runs`) against answered from the run one move shorter.

    python benchmarks/bench_undrivable.py            # medians of 5 runs
    python benchmarks/bench_undrivable.py --runs 3

The questions are a draw's: for every run of `cleanup-during-tool-push` read as two
generations under ack timeouts (livekit's speech turn), after each prefix, one
question per move the model offers there, `(*prefix, move)`. Prints the number of
questions and the median seconds of each way of answering them, with the load
average the figures were taken at.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from attrs import evolve

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model import VARIANTS_BY_NAME, Config, Move, initial_state
from model.scenarios import SCENARIOS
from model.sites import with_speech_turn
from proofs.adapters.livekit import drivable
from proofs.engines.conformance.follow import sequences
from proofs.engines.conformance.lockstep import model_side
from tests.proofs.test_drivable_incremental import _replayed


def _config() -> Config:
    case = {s.name: s for s in SCENARIOS}["cleanup-during-tool-push"]
    environment = evolve(case.environment, timeouts=True)
    return Config(VARIANTS_BY_NAME["lock5"], case, environment, extra_sites=with_speech_turn())


def _questions(config: Config) -> list[tuple[Move, ...]]:
    side = model_side(config)
    asked: list[tuple[Move, ...]] = []
    for run in sequences(config):
        states = drivable.settled(side, initial_state(config))
        for length in range(len(run) + 1):
            prefix = tuple(run[:length])
            offered = {m for state in states for m in side.stimuli(state)}
            asked.extend((*prefix, m) for m in sorted(offered, key=lambda m: m.label()))
            if length < len(run):
                states = {e for s in states for e in drivable.given(side, s, run[length])}
    return asked


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    config = _config()
    questions = _questions(config)
    ways = {"replayed": _replayed, "incremental": drivable.undrivable}
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(args.runs):
        for name, answer in ways.items():
            drivable._Runs._last = None  # each run starts knowing nothing
            start = time.perf_counter()
            for moves in questions:
                answer(config, moves)
            seconds[name].append(time.perf_counter() - start)
    print(f"load average {os.getloadavg()[0]:.2f}; {len(questions)} questions")
    for name, taken in seconds.items():
        print(f"{name:>12}: {statistics.median(taken):.3f} s (median of {args.runs})")


if __name__ == "__main__":
    main()
