"""Conformance: the implementation driven in lockstep with the model.

A team porting the fix writes the framework half of an adapter (`Framework`,
see `adapter.py`) for its own code; the environment half is the shared stand-in
server (`StandIn`, `standin.py`), and `compose` joins the two into the `Adapter`
the engines drive. The rest is reused: `Lockstep` (one run, stimulus by
stimulus), `exhaust` (every stimulus sequence up to a depth),
`Lockstep.replay_moves` (a model counterexample), `conformance_machine`
(Hypothesis, with bursts and schedules), `check_variant` (what `ackguard
conform` reports), `conformance_test_case` (all three modes as a unittest
TestCase for a team's own pytest suite) and `Follow` (released code followed
along the model, as the livekit check does). `docs/conformance.md` is the
guide; `docs/porting.md` walks a team through it.
"""

from proofs.engines.conformance.abstraction import abstract
from proofs.engines.conformance.adapter import (
    Adapter,
    AdapterFactory,
    EventView,
    Framework,
    FrameworkFactory,
    FrameworkView,
    LockView,
    Observation,
    OpView,
    Reconnecting,
    ServerView,
    TaskView,
)
from proofs.engines.conformance.composition import Composed, SiteTasks, compose
from proofs.engines.conformance.exhaustive import Exhaustion, exhaust
from proofs.engines.conformance.follow import Follow
from proofs.engines.conformance.lockstep import FoundViolation, Lockstep, Mismatch
from proofs.engines.conformance.loop import ControlledLoop, Replay, Schedule, new_loop
from proofs.engines.conformance.machine import conformance_machine, machine_settings
from proofs.engines.conformance.probes import HolderLock, site_frame
from proofs.engines.conformance.run import CellReport, VariantReport, check_cell, check_variant
from proofs.engines.conformance.standin import AckClock, StandIn, WireEvent, WireOp
from proofs.engines.conformance.steps import Step, format_steps, parse_steps
from proofs.engines.conformance.testing import conformance_test_case
from proofs.errors import NotEnabled

__all__ = [
    "AckClock",
    "Adapter",
    "AdapterFactory",
    "CellReport",
    "Composed",
    "ControlledLoop",
    "EventView",
    "Exhaustion",
    "Follow",
    "FoundViolation",
    "Framework",
    "FrameworkFactory",
    "FrameworkView",
    "HolderLock",
    "LockView",
    "Lockstep",
    "Mismatch",
    "NotEnabled",
    "Observation",
    "OpView",
    "Reconnecting",
    "Replay",
    "Schedule",
    "ServerView",
    "SiteTasks",
    "StandIn",
    "Step",
    "TaskView",
    "VariantReport",
    "WireEvent",
    "WireOp",
    "abstract",
    "check_cell",
    "check_variant",
    "compose",
    "conformance_machine",
    "conformance_test_case",
    "exhaust",
    "format_steps",
    "machine_settings",
    "new_loop",
    "parse_steps",
    "site_frame",
]
