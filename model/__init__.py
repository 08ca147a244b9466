"""ackguard's model: a pure state machine of a local chat context, the provider
session's mirror of the server conversation, and the acks in flight between them.

It knows nothing of asyncio, z3 or the implementation; everything here is data
and pure functions of it.
"""

from model.environment import (
    ENVIRONMENTS,
    ENVIRONMENTS_BY_NAME,
    OPTION_NAMES,
    OPTIONS,
    OPTIONS_BY_NAME,
    Environment,
    OptionSpec,
    parse_environment,
)
from model.invariants import Violation, agreement_at_rest, check, no_unintended_delete
from model.move_table import INTERNAL_MOVES, MOVES, STIMULI, Actor, Channel, MoveKind, MoveSpec
from model.moves import Config, Move, initial_state, step, successors
from model.scenarios import SCENARIOS, SCENARIOS_BY_NAME, Call, Scenario
from model.sites import SITES, SITES_BY_NAME, LocalUpdate, RequestSource, Site
from model.state import (
    Event,
    EventKind,
    Lock,
    Op,
    OpKind,
    Pc,
    State,
    Task,
    expected_view,
    tombstones,
)
from model.variants import (
    VARIANTS,
    VARIANTS_BY_NAME,
    Invariant,
    KnownFailure,
    SessionKind,
    Variant,
    Verdict,
)

__all__ = [
    "ENVIRONMENTS",
    "ENVIRONMENTS_BY_NAME",
    "INTERNAL_MOVES",
    "MOVES",
    "OPTIONS",
    "OPTIONS_BY_NAME",
    "OPTION_NAMES",
    "SCENARIOS",
    "SCENARIOS_BY_NAME",
    "SITES",
    "SITES_BY_NAME",
    "STIMULI",
    "VARIANTS",
    "VARIANTS_BY_NAME",
    "Actor",
    "Call",
    "Channel",
    "Config",
    "Environment",
    "Event",
    "EventKind",
    "Invariant",
    "KnownFailure",
    "LocalUpdate",
    "Lock",
    "Move",
    "MoveKind",
    "MoveSpec",
    "Op",
    "OpKind",
    "OptionSpec",
    "Pc",
    "RequestSource",
    "Scenario",
    "SessionKind",
    "Site",
    "State",
    "Task",
    "Variant",
    "Verdict",
    "Violation",
    "agreement_at_rest",
    "check",
    "expected_view",
    "initial_state",
    "no_unintended_delete",
    "parse_environment",
    "step",
    "successors",
    "tombstones",
]
