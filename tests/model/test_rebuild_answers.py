"""A rebuild's answers name no push (`model.state.REBUILD` is not a task index).

The smallest configuration where it matters: a three-way session that keeps a
request back while disconnected and empties its mirror on a rebuild. A tool push
sends its output and the connection drops; a cleanup called while disconnected
keeps the live local context back, output included; the connect rebuilds from
it, so the rebuild's added event for the output reaches the session while the
tool push still waits for its own (lost, sent again) create. Read as
`tasks[REBUILD]`, that event made the last task its waiter: the tool push was
marked as waiting on a settled op (invariant 6) when it ran last, and the task
tuple was rebuilt with every task twice, which the explorer fell over on.
"""

from __future__ import annotations

import attrs
import pytest

from model import (
    SCENARIOS_BY_NAME,
    SHAPES_BY_NAME,
    SITES,
    VARIANTS_BY_NAME,
    Config,
    Environment,
    Invariant,
    Move,
    MoveKind,
    OpKind,
    Pc,
    SessionShape,
    State,
    Verdict,
    initial_state,
    step,
)
from model.shapes import (
    DropWindow,
    LocalTail,
    OnReconnect,
    ReconnectMirror,
    RemoteItemAdded,
    SessionLock,
    WhileDisconnected,
)
from model.sites import with_hidden_calls
from model.state import REBUILD
from proofs.engines.explore_readable import explore_readable
from proofs.engines.sweep import scenario, shapes

RECONNECTS = Environment(reconnects=True)


def _kept_emptied(shape: SessionShape, **changes: object) -> SessionShape:
    """`shape` keeping a request back while disconnected and rebuilding emptied."""
    return attrs.evolve(
        shape,
        on_reconnect=OnReconnect.REBUILD_FROM_MIRROR,
        reconnect_mirror=ReconnectMirror.EMPTIED,
        while_disconnected=WhileDisconnected.KEPT_BACK,
        **changes,
    )


THREE_WAY = _kept_emptied(SHAPES_BY_NAME["three-way"])
#: the released session with no session lock, so that the cleanup pushes while the
#: tool push waits, as in the three-way session
MIRROR_DIFF = _kept_emptied(
    SHAPES_BY_NAME["openai-reconnect"], drop_window=DropWindow.NONE, session_lock=SessionLock.NONE
)
SHAPED = {shape.site: shape for shape in shapes(SITES)}


def _config(first: str, second: str, variant: str = "three-way") -> Config:
    shape = THREE_WAY if variant == "three-way" else MIRROR_DIFF
    calls = scenario([SHAPED[first], SHAPED[second]])
    return Config(VARIANTS_BY_NAME[variant], calls, RECONNECTS, shape=shape)


def _run(config: Config, labels: list[str]) -> State:
    state = initial_state(config)
    for label in labels:
        kind, *rest = label.split()
        task = int(rest[0][1:]) if rest and rest[0].startswith("T") else None
        item = rest[-1] if rest and not rest[-1].startswith("T") else None
        state = step(state, config, Move(MoveKind(kind), task, item))
    return state


def _to_the_rebuild_answer(config: Config, tool: int, cleanup: int) -> tuple[State, str]:
    output = config.call(tool).adds[0]
    labels = [f"call T{tool}", "disconnect", f"call T{cleanup}", "connect"]
    state = _run(config, labels)
    assert state.tasks[cleanup].pc is Pc.DONE and state.tasks[tool].pc is Pc.WAIT_ACKS
    assert output in state.server and state.mirror == ()
    assert [(e.item, e.task) for e in state.to_client][-1] == (output, REBUILD)
    for event in state.to_client:
        state = step(state, config, Move(MoveKind.CLIENT_APPLY, None, event.item))
    return state, output


@pytest.mark.parametrize(("tool", "cleanup"), [(1, 0), (0, 1)])
def test_the_three_way_rebuild_answer_settles_no_push(tool: int, cleanup: int) -> None:
    """The three-way session keys its acks by op: the rebuild's answer is no push's,
    whichever task index the tool push has."""
    names = ("tool-outputs", "cleanup") if tool == 0 else ("cleanup", "tool-outputs")
    config = _config(*names)
    state, output = _to_the_rebuild_answer(config, tool, cleanup)
    assert len(state.tasks) == 2
    assert not any(task.stalled for task in state.tasks)
    assert (OpKind.CREATE, output) in state.tasks[tool].pending
    # its own create, sent again behind the rebuild, is refused as a duplicate and settles it
    state = step(state, config, Move(MoveKind.SERVER_APPLY, tool, output))
    state = step(state, config, Move(MoveKind.CLIENT_APPLY, tool, output))
    assert not state.tasks[tool].pending and not state.tasks[tool].stalled


def test_the_verdict_does_not_depend_on_which_task_runs_last() -> None:
    """Every verdict of the pair is the same in both orders of its calls (before: the
    order with the tool push last fell over on a state with four tasks)."""
    verdicts = [
        {f.invariant: f.verdict for f in explore_readable(_config(*names)).findings}
        for names in (("cleanup", "tool-outputs"), ("tool-outputs", "cleanup"))
    ]
    assert verdicts[0] == verdicts[1]
    assert verdicts[0][Invariant.NO_WAIT_ON_SETTLED] is Verdict.HOLDS


def test_a_mirror_diff_rebuild_answer_settles_whoever_waits_for_the_item() -> None:
    """The released session resolves its create futures by item id, the rebuild's
    `conversation.item.added` included (livekit-agents 1.8.9
    `_handle_conversion_item_added`): the tool push stops waiting, and is not marked."""
    config = _config("cleanup", "tool-outputs", variant="unlocked")
    state, output = _to_the_rebuild_answer(config, 1, 0)
    assert len(state.tasks) == 2
    assert (OpKind.CREATE, output) not in state.tasks[1].pending
    assert not state.tasks[1].stalled


def test_a_rebuilt_tool_output_is_read_as_its_own_push_s_by_the_placeholder_handler() -> None:
    """The release's handler of announced items (`appended-after-last`) gives a call's
    own item after a hidden item its real anchor: a tool output follows its function
    call in the replayed mirror too. A replacement that trimmed the output runs last;
    the rebuild's announcement of the output puts it back locally, as its anchor, the
    function call, is the real local context's last item. Read as the last task's
    (the replacement's), the output was left out."""
    shape = attrs.evolve(
        SHAPES_BY_NAME["openai-reconnect"],
        remote_item_added=RemoteItemAdded.APPENDED_AFTER_LAST,
        local_tail=LocalTail.LOCAL_ONLY,
    )
    config = Config(
        VARIANTS_BY_NAME["lock5"],
        SCENARIOS_BY_NAME["trim-tool-output"],
        RECONNECTS,
        with_hidden_calls(SITES),
        shape=shape,
    )
    labels = "call T0;server-apply T0 out1;client-apply T0 out1;call T1"
    state = _run(config, [*labels.split(";"), "disconnect", "disconnect", "connect"])
    assert state.local == ("msg0",) and [(e.item, e.task) for e in state.to_client] == [
        ("msg0", REBUILD),
        ("out1", REBUILD),
    ]
    for item in ("msg0", "out1"):
        state = step(state, config, Move(MoveKind.CLIENT_APPLY, None, item))
    assert state.local == ("msg0", "out1")
