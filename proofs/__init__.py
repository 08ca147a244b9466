"""ackguard's checks, in rooms by role: `engines` (the explorer, z3, Hypothesis,
conformance, the audit), `adapters` (what drives real code for them), `report`
(what people and machines read), `cli` (the `ackguard` command line), and
`errors` (every error raised on purpose, under one root).

Nothing is re-exported here: each room is a package with its own face, and
importing `proofs` alone must not pay for z3, Hypothesis or livekit.
"""

__all__: list[str] = []
