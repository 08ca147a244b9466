"""A voice agent on a callback-style realtime session, checked by ackguard's harness.

`session.py` and `agent.py` stand for a team's own code: a provider session
that learns of acks through an `on_event` callback, queues its sends, guards
itself with a hand-rolled FIFO gate and exposes `conversation` / `sync(context)`;
and an agent whose five push sites hold one gate across snapshot, sync and acks
(the `lock5` discipline). `fake_server.py` is the wire bridge to ackguard's shared
stand-in server, `adapter.py` the conformance adapter, `test_conformance.py` the file a
team copies into its own suite. `docs/porting.md` walks through it.
"""
