"""Counterexamples as Mermaid sequence diagrams and as ITF traces.

Both are worked out from a replayed `Trace` (the model's own states), like the
readable timeline of `proofs.report.render`.

- Mermaid: a `sequenceDiagram` with one lifeline per push task, the provider
  session and the server; the step that breaks the invariant is marked.
- ITF: the Informal Trace Format of Apalache and Quint
  (https://apalache-mc.org/docs/adr/015adr-trace.html): `#meta`, `vars` and
  `states`, each state holding every variable plus `action`, the move that led
  to it (`init` for the first). Quint's model-based-testing variables
  `mbt::actionTaken` and `mbt::nondetPicks` carry the same, so Quint-based
  drivers can replay the trace against an implementation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from model import Config, Dropped, EventKind, Invariant, Move, MoveKind, OpKind, State, Violation
from proofs.engines.trace import Trace
from proofs.report.render import describe, describe_op, handler, ids, whose

# -- Mermaid ------------------------------------------------------------------

_SESSION = "S"
_SERVER = "V"


def _text(text: str) -> str:
    """Message text Mermaid parses as text (';' ends a statement, '#' starts an entity)."""
    return text.replace(";", ",").replace("#", "no. ")


def mermaid(
    config: Config, trace: Trace, violation: Violation | None = None, title: str = ""
) -> str:
    """A Mermaid sequence diagram of a trace."""
    tasks = range(len(config.scenario.calls))
    lines = ["sequenceDiagram"]
    for task in tasks:
        lines.append(f"    participant T{task} as T{task} {config.call(task).site}")
    lines.append(f"    participant {_SESSION} as session")
    lines.append(f"    participant {_SERVER} as server")
    span = f"T0,{_SERVER}" if config.scenario.calls else f"{_SESSION},{_SERVER}"
    if title:
        lines.append(f"    Note over {span}: {_text(title)}")
    state = trace.start
    for number, step in enumerate(trace.steps, start=1):
        lines.extend(
            f"    {line}" for line in _mermaid_step(config, state, step.move, step.state, number)
        )
        state = step.state
    if violation is not None:
        lines.append(f"    Note over {span}: VIOLATED {_text(violation.describe())}")
    return "\n".join(lines) + "\n"


#: What draws one step of a move kind: (config, before, move, after, step number).
MermaidStep = Callable[[Config, State, Move, State, int], list[str]]


def _mermaid_server(
    config: Config, before: State, move: Move, after: State, number: int
) -> list[str]:
    op = before.to_server[0]
    event = after.to_client[-1]
    if op.kind is OpKind.CANCEL:
        return [f"{_SERVER}-->>{_SESSION}: {number}. ends {whose(op.task)} interrupted response"]
    if event.kind is EventKind.REJECTED:
        return [
            f"{_SERVER}-->>{_SESSION}: {number}. rejects {whose(op.task)} {op.kind.value} {op.item}"
        ]
    return [
        f"{_SERVER}-->>{_SESSION}: {number}. {op.item} {event.kind.value} "
        f"(server {_text(ids(after.server))})"
    ]


def _mermaid_client(
    config: Config, before: State, move: Move, after: State, number: int
) -> list[str]:
    event = before.to_client[0]
    if event.kind is EventKind.DONE:
        return [
            f"Note over {_SESSION}: {number}. receives the end of {whose(event.task)} "
            "interrupted response"
        ]
    lines = [
        f"Note over {_SESSION}: {number}. receives {whose(event.task)} "
        f"'{event.item} {event.kind.value}'"
        + (f", mirror {_text(ids(after.mirror))}" if after.mirror != before.mirror else "")
    ]
    for task, (old, new) in enumerate(zip(before.tasks, after.tasks, strict=True)):
        for op_kind, item in sorted(old.pending - new.pending, key=lambda k: (k[0].value, k[1])):
            if new.pc is old.pc:
                lines.append(f"{_SESSION}-->>T{task}: ack {op_kind.value} {item}")
    return lines


def _mermaid_model_anchors_on_deleted(
    config: Config, before: State, move: Move, after: State, number: int
) -> list[str]:
    anchor = after.to_client[-1].after
    return [
        f"Note over {_SERVER}: {number}. the model creates {move.item} after the deleted "
        f"{anchor}, server {_text(ids(after.server))}"
    ]


def _mermaid_model_creates(
    config: Config, before: State, move: Move, after: State, number: int
) -> list[str]:
    return [
        f"Note over {_SERVER}: {number}. the model creates {move.item}, "
        f"server {_text(ids(after.server))}"
    ]


def _mermaid_learn(
    config: Config, before: State, move: Move, after: State, number: int
) -> list[str]:
    return [
        f"Note over {_SESSION}: {number}. the local context learns {move.item}, "
        f"local {_text(ids(after.local))}"
    ]


def _mermaid_network(
    config: Config, before: State, move: Move, after: State, number: int
) -> list[str]:
    """The connection drops or comes back: a note across session and server, which
    both lifelines share, then an arrow per op it (re-)sends."""
    text = _text(describe(config, before, move, after))
    lines = [f"Note over {_SESSION},{_SERVER}: {number}. {text}"]
    for op in after.to_server[: len(after.to_server) - len(before.to_server)]:
        lines.append(f"{_SESSION}->>{_SERVER}: {_text(describe_op(config, before, op))}")
    return lines


def _mermaid_task(head: Callable[[str, int, str], list[str]]) -> MermaidStep:
    """A push task's step: `head(lifeline, number, text)`, then an arrow per op it sends."""

    def draw(config: Config, before: State, move: Move, after: State, number: int) -> list[str]:
        assert move.task is not None
        text = _text(describe(config, before, move, after).split(": ", 1)[-1])
        lines = head(f"T{move.task}", number, text)
        for op in after.to_server[len(before.to_server) :]:
            lines.append(f"{_SESSION}->>{_SERVER}: {_text(describe_op(config, before, op))}")
        return lines

    return draw


def _arrow_in(me: str, number: int, text: str) -> list[str]:
    return [f"{me}->>{_SESSION}: {number}. {text}"]


def _timed_out(me: str, number: int, text: str) -> list[str]:
    return [f"{_SESSION}--x{me}: {number}. ack wait times out", f"Note over {me}: {text}"]


def _acks_in(me: str, number: int, text: str) -> list[str]:
    return [f"{_SESSION}-->>{me}: {number}. all acks in", f"Note over {me}: {text}"]


def _note(me: str, number: int, text: str) -> list[str]:
    return [f"Note over {me}: {number}. {text}"]


#: One drawer per move kind; `mermaid` raises for a kind missing here.
MERMAID_STEPS: Mapping[MoveKind, MermaidStep] = {
    MoveKind.COPY: _mermaid_task(_note),
    MoveKind.CALL: _mermaid_task(_arrow_in),
    MoveKind.WAKE: _mermaid_task(_arrow_in),
    MoveKind.RESUME: _mermaid_task(_acks_in),
    MoveKind.SERVER_APPLY: _mermaid_server,
    MoveKind.SERVER_REJECT: _mermaid_server,
    MoveKind.CLIENT_APPLY: _mermaid_client,
    MoveKind.MODEL_CREATES: _mermaid_model_creates,
    MoveKind.MODEL_ANCHORS_ON_DELETED: _mermaid_model_anchors_on_deleted,
    MoveKind.LEARN: _mermaid_learn,
    MoveKind.BEFORE_CALL: _mermaid_task(_note),
    MoveKind.TIMEOUT: _mermaid_task(_timed_out),
    MoveKind.DISCONNECT: _mermaid_network,
    MoveKind.CONNECT: _mermaid_network,
}


def _mermaid_step(
    config: Config, before: State, move: Move, after: State, number: int
) -> list[str]:
    draw = handler(MERMAID_STEPS, move.kind, "proofs.report.formats.MERMAID_STEPS")
    return draw(config, before, move, after, number)


# -- ITF ----------------------------------------------------------------------

ITF_VARS: tuple[str, ...] = (
    "action",
    "mbt::actionTaken",
    "mbt::nondetPicks",
    "server",
    "mirror",
    "local",
    "to_server",
    "to_client",
    "activity_lock",
    "provider_lock",
    "tasks",
    "created",
    "learned",
    "outstanding",
    "gone",
    "acked",
    "reached",
    "removed",
    "refused",
    "deletes_sent",
    "recreated",
    "connected",
    "kept",
    "born",
    "sent",
    "rebuilt",
)


def _int(value: int) -> dict[str, str]:
    return {"#bigint": str(value)}


def _set(values: Any) -> dict[str, list[Any]]:
    return {"#set": sorted(values, key=repr)}


def _option(value: Any) -> dict[str, Any]:
    if value is None:
        return {"tag": "None", "value": {"#tup": []}}
    return {"tag": "Some", "value": value}


def _op(op: Any) -> dict[str, Any]:
    return {
        "kind": op.kind.value,
        "item": op.item,
        "after": _option(op.after),
        "task": _int(op.task),
    }


def _lock(lock: Any) -> dict[str, Any]:
    return {
        "owner": _option(None if lock.owner is None else _int(lock.owner)),
        "waiters": [_int(t) for t in lock.waiters],
    }


def itf_state(state: State) -> dict[str, Any]:
    """The model state as ITF values (every field of `model.State`)."""
    return {
        "server": list(state.server),
        "mirror": list(state.mirror),
        "local": list(state.local),
        "to_server": [_op(op) for op in state.to_server],
        "to_client": [
            {
                "kind": event.kind.value,
                "item": event.item,
                "after": _option(event.after),
                "op": _option(None if event.op is None else event.op.value),
                "task": _option(None if event.task is None else _int(event.task)),
            }
            for event in state.to_client
        ],
        "activity_lock": _lock(state.activity_lock),
        "provider_lock": _lock(state.provider_lock),
        "tasks": [
            {
                "pc": task.pc.value,
                "copy": _option(None if task.copy is None else list(task.copy)),
                "request": _option(None if task.request is None else list(task.request)),
                "bound_to_local": task.bound_to_local,
                "base": _set(task.base),
                "pending": _keys(task.pending),
                "ops": [_op(op) for op in task.ops],
                "dropped": _set(task.dropped),
                "stalled": _keys(task.stalled),
            }
            for task in state.tasks
        ],
        "created": _int(state.created),
        "learned": _set(state.learned),
        "outstanding": [_op(op) for op in state.outstanding],
        "gone": _set(state.gone),
        "acked": _set(state.acked),
        "reached": _set(state.reached),
        "removed": _set(state.removed),
        "refused": _set(state.refused),
        "deletes_sent": {
            "#set": [
                {"#tup": [_int(task), item, acked]}
                for task, item, acked in sorted(state.deletes_sent)
            ]
        },
        "recreated": {
            "#set": [{"#tup": [_int(task), item]} for task, item in sorted(state.recreated)]
        },
        "connected": _connection(state.connected),
        "kept": _option(None if state.kept is None else list(state.kept)),
        "born": list(state.born),
        "sent": _set(state.sent),
        "rebuilt": _set(state.rebuilt),
    }


def _keys(keys: frozenset[tuple[OpKind, str]]) -> dict[str, list[Any]]:
    """Ack keys (kind, item) as a set of tuples."""
    ordered = sorted(keys, key=lambda k: (k[0].value, k[1]))
    return {"#set": [{"#tup": [kind.value, item]} for kind, item in ordered]}


def _connection(connected: bool | Dropped) -> str:
    """`State.connected` as one word: the drop window's third value is no Boolean."""
    if connected is Dropped.UNNOTICED:
        return "unnoticed"
    return "connected" if connected else "disconnected"


def _action(move: Move | None) -> str:
    return "init" if move is None else move.label()


def itf(
    config: Config,
    trace: Trace,
    invariant: Invariant | None = None,
    violation: Violation | None = None,
) -> dict[str, Any]:
    """An ITF trace: the start state, then the state after each move.

    Each state also holds Quint's model-based-testing variables, by Quint's
    convention: `mbt::actionTaken` is the name of the action that led to it
    (`init` for the first; the move kind, as an identifier: `server_apply`),
    and `mbt::nondetPicks` a record of what that action picked, each an
    `Option` (`Some`/`None` variant): the task and the item. Our own `action`
    keeps the move's readable label (`call T1`).
    """
    moves: list[Move | None] = [None, *trace.moves]
    states = [trace.start, *(step.state for step in trace.steps)]
    meta: dict[str, Any] = {
        "format": "ITF",
        "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
        "source": "ackguard verify",
        "description": (
            f"{config.variant.name} / {config.scenario.name} / {config.environment.name}"
            + (f": {violation.describe()}" if violation is not None else "")
        ),
        "variant": config.variant.name,
        "scenario": config.scenario.name,
        "environment": config.environment.name,
    }
    if invariant is not None:
        meta["invariant"] = invariant.value
    if violation is not None:
        meta["violation"] = violation.describe()

    def action_taken(move: Move | None) -> str:
        return "init" if move is None else move.kind.value.replace("-", "_")

    def nondet_picks(move: Move | None) -> dict[str, Any]:
        task = None if move is None or move.task is None else _int(move.task)
        return {"task": _option(task), "item": _option(None if move is None else move.item)}

    return {
        "#meta": meta,
        "vars": list(ITF_VARS),
        "states": [
            {
                "#meta": {"index": index},
                "action": _action(move),
                "mbt::actionTaken": action_taken(move),
                "mbt::nondetPicks": nondet_picks(move),
                **itf_state(state),
            }
            for index, (move, state) in enumerate(zip(moves, states, strict=True))
        ],
    }
