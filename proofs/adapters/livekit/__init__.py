"""Dynamic conformance of released livekit-agents against the model.

The installed livekit-agents release runs for real (a real `AgentSession`, a real
`AgentActivity`, its own diff function and its own mirror type). The realtime
model is a stand-in (`standin`), with the OpenAI realtime session's push
semantics and every ack under the harness's control, or (`plugin`, `ackguard
livekit --provider plugin`) the release's own OpenAI plugin over the gated
websocket of `impl.gated_server`, on a selector loop with virtual time
(`socket_loop`). `adapter.LivekitAdapter`
implements the conformance harness's `Adapter` protocol on top of it, and
`replay` runs the model's counterexamples against it and reports, per scenario,
whether an item was lost and whether that is what the model predicts for the
variant the release corresponds to.

Nothing here imports livekit at module level except the modules that need it,
so `proofs.adapters.livekit.releases` can tell whether (and which) release is installed
without importing it; the names below are imported on first use for the same reason.
"""

import typing as _typing

import proofs.lazy as _lazy

if _typing.TYPE_CHECKING:
    from proofs.adapters.livekit.adapter import LivekitAdapter, livekit_adapter
    from proofs.adapters.livekit.check import check_release
    from proofs.adapters.livekit.releases import (
        RELEASES,
        RELEASES_BY_VERSION,
        installed_version,
    )

_WHERE = {
    "LivekitAdapter": "proofs.adapters.livekit.adapter",
    "livekit_adapter": "proofs.adapters.livekit.adapter",
    "check_release": "proofs.adapters.livekit.check",
    "RELEASES": "proofs.adapters.livekit.releases",
    "RELEASES_BY_VERSION": "proofs.adapters.livekit.releases",
    "installed_version": "proofs.adapters.livekit.releases",
}

__all__ = [
    "RELEASES",
    "RELEASES_BY_VERSION",
    "LivekitAdapter",
    "check_release",
    "installed_version",
    "livekit_adapter",
]

__getattr__, __dir__ = _lazy.face(__name__, _WHERE, __all__, globals())
