"""Traces for people and machines: one readable line a step, and JSON.

Each line is worked out from the two states around a move, so what it says is
what the model did, not what the move's name suggests.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from model import REBUILD, Config, Dropped, EventKind, Move, MoveKind, Op, OpKind, Pc, State
from proofs.engines.trace import Trace, before_call_words
from proofs.errors import InternalError

_PC_TEXT = {
    Pc.IDLE: "has not started",
    Pc.COPIED: "holds its copy",
    Pc.WAIT_ACTIVITY: "waits for the activity lock",
    Pc.WAIT_PROVIDER: "waits for the provider lock",
    Pc.WAIT_ACKS: "waits for its acks",
    Pc.WAIT_SEND: "waits for its send to return",
    Pc.DONE: "is done",
    Pc.FAILED: "failed (ack timeout)",
    Pc.WAIT_DONE: "sent the cancel of its interrupted response and waits for its end",
    Pc.ENDED: "its interrupted response has ended",
}


def ids(items: tuple[str, ...]) -> str:
    return "[" + ", ".join(items) + "]"


def actor(config: Config, task: int | None) -> str:
    if task is None:
        return "model"
    return f"T{task} {config.call(task).site}"


def describe_op(config: Config, before: State, op: Op) -> str:
    if op.kind is OpKind.CANCEL:
        return "cancel of the interrupted response"
    if op.kind is OpKind.DELETE:
        text = f"delete {op.item}"
        if op.item in before.acked and op.item not in config.call(op.task).drops:
            text += " (acknowledged, not meant to be removed)"
        return text
    return f"create {op.item} after {op.after or 'the head'}"


#: What renders one step of a move kind as a line: (config, before, move, after).
Describer = Callable[[Config, State, Move, State], str]


def whose(task: int | None) -> str:
    """Who an op or event belongs to, in a trace's words: a push task, the model (an
    item it created), or the session's own rebuild after a reconnect."""
    if task is None:
        return "the model's"
    return "the rebuild's" if task == REBUILD else f"T{task}'s"


def _server_step(config: Config, before: State, move: Move, after: State) -> str:
    op = before.to_server[0]
    event = after.to_client[-1]
    verb = "rejects" if event.kind is EventKind.REJECTED else "applies"
    return (
        f"server {verb} {whose(op.task)} {describe_op(config, before, op)}; "
        f"server {ids(after.server)}"
    )


def _client_step(config: Config, before: State, move: Move, after: State) -> str:
    event = before.to_client[0]
    if event.kind is EventKind.DONE:
        return f"session receives the end of {whose(event.task)} interrupted response"
    text = f"session receives {whose(event.task)} '{event.item} {event.kind.value}'"
    if after.mirror != before.mirror:
        text += f"; mirror {ids(after.mirror)}"
    return text


def _model_creates(config: Config, before: State, move: Move, after: State) -> str:
    return f"the model creates {move.item} server-side; server {ids(after.server)}"


def _model_anchors_on_deleted(config: Config, before: State, move: Move, after: State) -> str:
    anchor = after.to_client[-1].after
    return (
        f"the model creates {move.item} server-side, announced after the deleted {anchor}; "
        f"server {ids(after.server)}"
    )


def _learn(config: Config, before: State, move: Move, after: State) -> str:
    return f"the local context learns {move.item}; local {ids(after.local)}"


def _resume(config: Config, before: State, move: Move, after: State) -> str:
    assert move.task is not None
    waited_for_send = before.tasks[move.task].pc is Pc.WAIT_SEND
    opening = "its send returns" if waited_for_send else "its acks are in"
    return _task_step(opening)(config, before, move, after)


def _disconnect(config: Config, before: State, move: Move, after: State) -> str:
    """A drop, or, in a shape with a drop window, the session noticing one: a drop's
    first `disconnect` leaves the session treating the dead connection as active, and
    its second is when the session gives it up (`model.Dropped`)."""
    if before.connected is Dropped.UNNOTICED:
        queued = len(before.to_server)
        return (
            "the session notices the dropped connection and gives it up; "
            f"{queued} op(s) queued for the next connection"
        )
    lost = len(before.to_server) + len(before.to_client)
    text = f"the connection drops; {lost} op(s) and event(s) in flight are lost"
    if after.connected is Dropped.UNNOTICED:
        text += " (the session does not notice yet: its drop window)"
    return text


def _connect(config: Config, before: State, move: Move, after: State) -> str:
    text = f"a new server session: the session rebuilds the server as {ids(after.server)}"
    if before.kept is not None:
        text += f" from the request kept back {ids(before.kept)}"
    resent = len(after.to_server) - len(before.to_server)
    if resent:
        text += f"; re-sends {resent} op(s) it still awaits"
    return text


def _copy(config: Config, before: State, move: Move, after: State) -> str:
    assert move.task is not None
    return (
        f"{actor(config, move.task)}: the application copies the local context {ids(after.local)}"
    )


def _task_step(opening: str) -> Describer:
    """A push task's step: `opening`, then what changed (local, request, sends) and its pc."""

    def describe_task(config: Config, before: State, move: Move, after: State) -> str:
        assert move.task is not None
        task = move.task
        parts = [opening]
        if after.local != before.local:
            parts.append(f"local {ids(after.local)}")
        before_task, after_task = before.tasks[task], after.tasks[task]
        if after_task.request is not None and after_task.request != before_task.request:
            parts.append(f"requests {ids(after_task.request)}")
        # a task's step only appends to the op FIFO; the server's steps pop it
        sent = after.to_server[len(before.to_server) :]
        if sent:
            parts.append("sends " + ", ".join(describe_op(config, before, op) for op in sent))
        parts.append(_PC_TEXT[after_task.pc])
        return f"{actor(config, task)}: " + "; ".join(parts)

    return describe_task


#: One describer per move kind; `describe` raises for a kind missing here, so a new
#: move in `model.MOVES` cannot fall through to another kind's words.
DESCRIBERS: Mapping[MoveKind, Describer] = {
    MoveKind.COPY: _copy,
    MoveKind.CALL: _task_step("called"),
    MoveKind.WAKE: _task_step("gets the lock"),
    MoveKind.RESUME: _resume,
    MoveKind.SERVER_APPLY: _server_step,
    MoveKind.SERVER_REJECT: _server_step,
    MoveKind.CLIENT_APPLY: _client_step,
    MoveKind.MODEL_CREATES: _model_creates,
    MoveKind.MODEL_ANCHORS_ON_DELETED: _model_anchors_on_deleted,
    MoveKind.LEARN: _learn,
    MoveKind.BEFORE_CALL: before_call_words,
    MoveKind.TIMEOUT: _task_step("its ack wait times out"),
    MoveKind.DISCONNECT: _disconnect,
    MoveKind.CONNECT: _connect,
}

Handler = TypeVar("Handler")


def handler(table: Mapping[MoveKind, Handler], kind: MoveKind, what: str) -> Handler:
    """The entry of `table` for `kind`; `InternalError` naming `what` if there is none."""
    try:
        return table[kind]
    except KeyError:
        raise InternalError(f"{what} has no handler for the move kind {kind.value!r}") from None


def describe(config: Config, before: State, move: Move, after: State) -> str:
    """One line saying who did what in this step, with the item ids."""
    return handler(DESCRIBERS, move.kind, "proofs.report.render.DESCRIBERS")(
        config, before, move, after
    )


def trace_lines(config: Config, trace: Trace) -> list[str]:
    """The readable timeline of a trace, one numbered line a step."""
    lines = []
    state = trace.start
    for number, step in enumerate(trace.steps, start=1):
        lines.append(f"{number:2}. {describe(config, state, step.move, step.state)}")
        state = step.state
    return lines


def state_json(state: State) -> dict[str, Any]:
    return {
        "server": list(state.server),
        "mirror": list(state.mirror),
        "local": list(state.local),
        "to_server": [
            {"kind": op.kind.value, "item": op.item, "after": op.after, "task": op.task}
            for op in state.to_server
        ],
        "to_client": [
            {"kind": ev.kind.value, "item": ev.item, "after": ev.after, "task": ev.task}
            for ev in state.to_client
        ],
        "activity_lock": {
            "owner": state.activity_lock.owner,
            "waiters": list(state.activity_lock.waiters),
        },
        "provider_lock": {
            "owner": state.provider_lock.owner,
            "waiters": list(state.provider_lock.waiters),
        },
        "tasks": [
            {
                "pc": task.pc.value,
                "request": None if task.request is None else list(task.request),
                "pending": sorted(f"{kind.value} {item}" for kind, item in task.pending),
            }
            for task in state.tasks
        ],
    }


def move_json(config: Config, move: Move) -> dict[str, Any]:
    return {
        "move": move.kind.value,
        "task": move.task,
        "site": None if move.task is None else config.call(move.task).site,
        "item": move.item,
    }


def trace_json(config: Config, trace: Trace) -> list[dict[str, Any]]:
    """A list of steps, each with its move, its line of text and the state after it."""
    steps = []
    state = trace.start
    for number, step in enumerate(trace.steps, start=1):
        steps.append(
            {
                "step": number,
                **move_json(config, step.move),
                "text": describe(config, state, step.move, step.state),
                "state": state_json(step.state),
            }
        )
        state = step.state
    return steps
