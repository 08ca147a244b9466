"""ackguard's checks: the explicit-state explorer, z3, Hypothesis, conformance,
the audit, and the `ackguard` command line."""
