"""The scenarios and traces of the local context's order, shared by the model's tests
(`tests/model/test_local_order.py`) and their replays against livekit 1.8.9
(`tests/livekit/test_local_order.py`): one copy, so the two compare the same runs."""

from __future__ import annotations

from model.scenarios import Call, Scenario

#: The explorer's three-call mix (as `ackguard explore --sweep 3` names it).
ARTEFACT = Scenario(
    name="user-turn + tool-outputs + replacement",
    summary="a user turn, a tool output queued behind it, then a replacement",
    calls=(
        Call("user-turn", adds=("user-turn-0",)),
        Call("tool-outputs", adds=("tool-outputs-1",)),
        Call("replacement", adds=("replacement-2",)),
    ),
    server=("msg0", "asst1"),
)

#: One call more: a tool output created while the user turn waits for the lock.
REAL = Scenario(
    name="tool-outputs + user-turn + tool-outputs + replacement",
    summary="a tool output created while the user turn waits for the activity lock",
    calls=(
        Call("tool-outputs", adds=("out0",)),
        Call("user-turn", adds=("hello",)),
        Call("tool-outputs", adds=("out2",)),
        Call("replacement"),
    ),
)

INTERRUPTED = Scenario(
    name="user-turn + interrupted-tool-outputs + replacement",
    summary="a user turn, an interrupted generation's tool output, then a replacement",
    calls=(
        Call("user-turn", adds=("hello",)),
        Call("interrupted-tool-outputs", adds=("out1",)),
        Call("replacement", adds=("note2",)),
    ),
    server=("msg0", "asst1"),
)

#: The explorer's shortest loss: the tool output created before the user message.
EARLY_TRACE = (
    "before-call T1",
    "call T0",
    "server-apply T0 user-turn-0",
    "client-apply T0 user-turn-0",
    "resume T0",
    "call T1",
    "server-apply T1 tool-outputs-1",
    "client-apply T1 tool-outputs-1",
    "resume T1",
    "call T2",
)
#: The append order's depth-10 loss: the tool returns at its call.
OLD_TRACE = (
    "call T0",
    "call T1",
    "server-apply T0 user-turn-0",
    "client-apply T0 user-turn-0",
    "resume T0",
    "wake T1",
    "server-apply T1 tool-outputs-1",
    "client-apply T1 tool-outputs-1",
    "resume T1",
    "call T2",
)
#: The loss at the model's step grain with a third call (each tool returns at its call).
REAL_TRACE = (
    "call T0",
    "call T1",
    "call T2",
    "server-apply T0 out0",
    "client-apply T0 out0",
    "resume T0",
    "wake T1",
    "server-apply T1 hello",
    "client-apply T1 hello",
    "resume T1",
    "wake T2",
    "server-apply T2 out2",
    "client-apply T2 out2",
    "resume T2",
    "call T3",
)
#: An interrupted generation's output, its tool returned before the user turn.
INTERRUPTED_TRACE = (
    "before-call T1",
    "call T0",
    "call T1",
    "server-apply T0 hello",
    "client-apply T0 hello",
    "resume T0",
    "wake T1",
    "server-apply T1 out1",
    "client-apply T1 out1",
    "resume T1",
    "call T2",
)
