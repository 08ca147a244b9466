"""ackguard's asyncio implementation: a chat context, two provider sessions (the
locked mirror-diff one and the three-way one), a controllable fake server, and an
agent activity whose push sites follow a policy chosen by variant name
(`impl.policy.policy(name)`; the function is not re-exported here, where its
name would hide the module `impl.policy`).

It reads the model's data (the site and variant records of `model.sites` and
`model.variants`, so a variant is written once) but none of its semantics (the
moves, the invariants, the diff), and nothing of `proofs`; the conformance
harness in `proofs.engines.conformance` checks it against the model.
"""

from impl.activity import AgentActivity
from impl.chat_context import (
    ChatContext,
    ChatItem,
    ChatMessage,
    FunctionCall,
    FunctionCallOutput,
    diff,
)
from impl.fake_server import FakeServer, VirtualClock
from impl.policy import DEFAULT_POLICY, POLICIES, Policy
from impl.session import RealtimeError, RealtimeSession
from impl.three_way import ThreeWaySession

__all__ = [
    "DEFAULT_POLICY",
    "POLICIES",
    "AgentActivity",
    "ChatContext",
    "ChatItem",
    "ChatMessage",
    "FakeServer",
    "FunctionCall",
    "FunctionCallOutput",
    "Policy",
    "RealtimeError",
    "RealtimeSession",
    "ThreeWaySession",
    "VirtualClock",
    "diff",
]
