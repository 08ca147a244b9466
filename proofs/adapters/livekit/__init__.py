"""Dynamic conformance of released livekit-agents against the model.

The installed livekit-agents release runs for real (a real `AgentSession`, a real
`AgentActivity`, its own diff function and its own mirror type); only the
realtime model is a stand-in (`standin`), with the OpenAI realtime session's push
semantics and every ack under the harness's control. `adapter.LivekitAdapter`
implements the conformance harness's `Adapter` protocol on top of it, and
`replay` runs the model's counterexamples against it and reports, per scenario,
whether an item was lost and whether that is what the model predicts for the
variant the release corresponds to.

Nothing here imports livekit at module level except the modules that need it,
so `proofs.adapters.livekit.releases` can tell whether (and which) release is installed
without importing it.
"""
