"""Conformance: the implementation driven in lockstep with the model.

A team porting the fix writes an `Adapter` (see `adapter.py`) for its own code
and reuses the rest: `Lockstep` (one run, stimulus by stimulus), `exhaust`
(every stimulus sequence up to a depth), `Lockstep.replay_moves` (a model
counterexample), `conformance_machine` (Hypothesis, with bursts and schedules),
`check_variant` (what `ackguard conform` reports), and `conformance_test_case`
(all three modes as a unittest TestCase for a team's own pytest suite).
`docs/conformance.md` is the guide; `docs/porting.md` walks a team through it.
"""

from proofs.conformance.abstraction import abstract
from proofs.conformance.adapter import (
    Adapter,
    AdapterFactory,
    EventView,
    LockView,
    Observation,
    OpView,
    TaskView,
)
from proofs.conformance.exhaustive import Exhaustion, exhaust
from proofs.conformance.impl_adapter import ImplAdapter, impl_adapter
from proofs.conformance.lockstep import FoundViolation, Lockstep, Mismatch, NotEnabled
from proofs.conformance.loop import ControlledLoop, Replay, Schedule, new_loop
from proofs.conformance.machine import conformance_machine, machine_settings
from proofs.conformance.run import CellReport, VariantReport, check_cell, check_variant
from proofs.conformance.steps import Step, format_steps, parse_steps
from proofs.conformance.testing import conformance_test_case

__all__ = [
    "Adapter",
    "AdapterFactory",
    "CellReport",
    "ControlledLoop",
    "EventView",
    "Exhaustion",
    "FoundViolation",
    "ImplAdapter",
    "LockView",
    "Lockstep",
    "Mismatch",
    "NotEnabled",
    "Observation",
    "OpView",
    "Replay",
    "Schedule",
    "Step",
    "TaskView",
    "VariantReport",
    "abstract",
    "check_cell",
    "check_variant",
    "conformance_machine",
    "conformance_test_case",
    "exhaust",
    "format_steps",
    "impl_adapter",
    "machine_settings",
    "new_loop",
    "parse_steps",
]
