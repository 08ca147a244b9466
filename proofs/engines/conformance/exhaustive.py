"""Exhaustive lockstep: every stimulus sequence the model allows, up to a depth.

Depth-first over the model's stimuli from each matched state. An asyncio run
cannot be forked, so a sibling branch replays its prefix on a fresh run; the
last child continues the run in hand. A sequence ends at the depth bound, where
the model allows nothing more, or at a mismatch (every longer sequence through
it would repeat it). Deterministic: the same config gives the same sequences
in the same order, so CI can rely on it.
"""

from __future__ import annotations

import time

from attrs import frozen

from model import Config, Invariant
from proofs.engines.conformance.adapter import AdapterFactory
from proofs.engines.conformance.lockstep import FoundViolation, Lockstep, Mismatch
from proofs.engines.conformance.steps import Step
from proofs.errors import NotEnabled


@frozen
class Failure:
    """A mismatch, with the steps that lead to it."""

    steps: tuple[Step, ...]
    detail: str


@frozen
class Exhaustion:
    """What an exhaustive lockstep run over one config found, and what it cost."""

    config: Config
    depth: int
    #: Maximal stimulus sequences explored.
    sequences: int
    #: Stimuli given to the implementation, replays included.
    stimuli: int
    #: Model moves those stood for (stimuli plus the internal moves in between).
    model_moves: int
    mismatches: tuple[Failure, ...]
    #: The shortest sequence breaking each invariant, in the implementation.
    violations: dict[Invariant, FoundViolation]
    #: Whether some sequence was cut by the depth bound.
    truncated: bool
    seconds: float


def exhaust(
    config: Config,
    depth: int,
    factory: AdapterFactory,
    *,
    max_mismatches: int = 5,
) -> Exhaustion:
    """Run every stimulus sequence of length up to `depth` in lockstep."""
    started = time.perf_counter()
    explorer = _Explorer(config, depth, factory, max_mismatches)
    try:
        run = Lockstep(config, factory)
    except Mismatch as error:
        explorer.mismatches.append(Failure((), error.detail))
        explorer.sequences = 1
    else:
        explorer.explore((), run)
    return Exhaustion(
        config,
        depth,
        explorer.sequences,
        explorer.stimuli,
        explorer.model_moves,
        tuple(explorer.mismatches),
        explorer.violations,
        explorer.truncated,
        time.perf_counter() - started,
    )


class _Explorer:
    def __init__(
        self, config: Config, depth: int, factory: AdapterFactory, max_mismatches: int
    ) -> None:
        self.config = config
        self.depth = depth
        self.factory = factory
        self.max_mismatches = max_mismatches
        self.sequences = 0
        self.stimuli = 0
        self.model_moves = 0
        self.truncated = False
        self.mismatches: list[Failure] = []
        self.violations: dict[Invariant, FoundViolation] = {}

    def explore(self, prefix: tuple[Step, ...], run: Lockstep) -> None:
        self._note(run)
        moves = run.enabled()
        if not moves or len(prefix) >= self.depth:
            self.truncated = self.truncated or bool(moves)
            self.sequences += 1
            run.close()
            return
        for position, move in enumerate(moves):
            if len(self.mismatches) >= self.max_mismatches:
                break
            step = Step((move,))
            child = run if position == len(moves) - 1 else self._fresh(prefix)
            if child is None:
                continue
            try:
                self.stimuli += 1
                self.model_moves += child.apply(step)
            except (Mismatch, NotEnabled) as error:
                detail = error.detail if isinstance(error, Mismatch) else str(error)
                self.mismatches.append(Failure((*prefix, step), detail))
                self.sequences += 1
                child.close()
                continue
            self.explore((*prefix, step), child)
        else:
            return
        run.close()

    def _fresh(self, prefix: tuple[Step, ...]) -> Lockstep | None:
        """Replay `prefix` on a new run (it matched before; a mismatch now is nondeterminism)."""
        try:
            run = Lockstep(self.config, self.factory)
            for step in prefix:
                self.stimuli += 1
                self.model_moves += run.apply(step)
        except (Mismatch, NotEnabled) as error:
            self.mismatches.append(
                Failure(prefix, f"the implementation is not deterministic on replay: {error}")
            )
            return None
        return run

    def _note(self, run: Lockstep) -> None:
        for invariant, found in run.violations.items():
            best = self.violations.get(invariant)
            if best is None or len(found.steps) < len(best.steps):
                self.violations[invariant] = found
