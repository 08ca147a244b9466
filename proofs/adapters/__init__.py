"""The adapters: what drives real code for the engines, found by name.

Each adapter turns the model's stimuli into calls of one implementation and
reports what that implementation holds (`proofs.engines.conformance.Adapter`):
ackguard's own `impl` (`proofs.adapters.impl`), the released livekit-agents
(`proofs.adapters.livekit`, the `livekit` extra), livekit's real duplex adapter
session (`proofs.adapters.duplex`) and Gemini Live session
(`proofs.adapters.gemini`), and the callback-session example. Nothing here is
imported by an engine; `registry` imports an adapter only when it is asked for
by name.
"""

from proofs.adapters.registry import ADAPTERS, AdapterEntry, adapter_factory, adapter_for

__all__ = ["ADAPTERS", "AdapterEntry", "adapter_factory", "adapter_for"]
