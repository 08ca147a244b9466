"""Conformance of the callback-session example to ackguard's model: copy this file.

Replace `acme_adapter` by your adapter's factory, `variant` by the discipline
your code implements, and `SITES` by the catalog sites your code has. pytest
collects one test per mode per scenario:

    pytest examples/callback_session/test_conformance.py
"""

from __future__ import annotations

from examples.callback_session.adapter import SITES, acme_adapter
from proofs.engines.conformance import conformance_test_case

#: Every catalog scenario that calls only our five sites, under its own environment:
#: every stimulus sequence, 20 Hypothesis runs, each model counterexample replayed.
# our Conversation appends every new item at its end (livekit's inserts by creation time)
TestAcmeLock5 = conformance_test_case(
    acme_adapter, variant="lock5", sites=SITES, appends_locally=True
)
