"""The abstraction function: an implementation's observation as a model state.

This is the one place where the implementation's vocabulary meets the model's.
Two mappings carry all the meaning:

* a lock: asyncio hands a released lock to its first waiter at once, but that
  waiter takes it only when it next runs; the model says the waiter owns it
  from the release on. So with no holder, the first waiter is the owner.
* a push's request: the model keeps `request=None, bound_to_local=True` while a
  push will read the live local context object when it diffs, and the ids
  otherwise. Before the diff that is "is the request object the live one now";
  from the diff on it is what the session read and whether it was live then.

One ghost field is not observed but carried: `sent` (every item a create was
sent for) grows by the creates in flight and the items that reached the server,
so it is the previous state's plus what this observation shows. Every create
passes through the op FIFO, which is compared at every step, so carrying it
hides nothing; what the adapter says it sent (`Observation.sent`) is added, for
an op a session queued and lost before it reached the wire. The connection
fields (`connected`, `kept`, `rebuilt`) are what an adapter that drives
reconnects reports, and their values without one otherwise;
a task's `ops` (kept only by a shape that re-sends what it still awaits) are not
observed, so such a shape's reconnect is not conformance-checked.
"""

from __future__ import annotations

from typing import Any

import attrs

from model import Lock, Op, OpKind, State, Task
from proofs.engines.conformance.adapter import LockView, Observation, OpView, TaskView


def abstract(observation: Observation, before: State | None = None) -> State:
    """The model state an implementation is in; `before` is the state it was in at
    the previous comparison (None at the start)."""
    sent = (
        (frozenset() if before is None else before.sent)
        | observation.reached
        | {view.item for view in observation.to_server if view.kind is OpKind.CREATE}
        | (observation.sent or frozenset())
    )
    fields: dict[str, Any] = dict(
        server=observation.server,
        mirror=observation.mirror,
        local=observation.local,
        to_server=tuple(_op(view) for view in observation.to_server),
        to_client=observation.to_client,
        activity_lock=_lock(observation.activity_lock),
        provider_lock=_lock(observation.provider_lock),
        tasks=tuple(_task(view) for view in observation.tasks),
        created=observation.created,
        learned=observation.learned,
        outstanding=tuple(_op(view) for view in observation.outstanding),
        gone=observation.gone,
        acked=observation.acked,
        reached=observation.reached,
        removed=observation.removed,
        deletes_sent=observation.deletes_sent,
        refused=observation.refused,
        recreated=observation.recreated,
        sent=sent,
        connected=observation.connected,
        kept=observation.kept,
        rebuilt=observation.rebuilt,
        # no implementation keeps creation times the harness could read: the
        # comparison takes the order from the model's state (`model.local_order.matching`)
        born=(),
    )
    missing = _STATE_FIELDS - fields.keys()
    if missing:  # the model grew a field this function does not know yet
        raise ValueError(f"the abstraction does not set {', '.join(sorted(missing))}")
    return State(**fields)


_STATE_FIELDS = frozenset(field.name for field in attrs.fields(State))


def _op(view: OpView) -> Op:
    if view.task is None:
        raise ValueError(f"op {view} has no sender")
    return Op(view.kind, view.item, view.after, view.task)


def _lock(view: LockView) -> Lock:
    if view.holder is not None:
        return Lock(view.holder, view.waiting)
    if view.waiting:
        # released and handed to the first waiter, which has not run yet
        return Lock(view.waiting[0], view.waiting[1:])
    return Lock()


def _task(view: TaskView) -> Task:
    request: tuple[str, ...] | None
    if view.read is not None:
        request, bound = view.read, view.bound_at_read
    elif view.request is None:
        request, bound = None, False
    elif view.request_is_live:
        request, bound = None, True
    else:
        request, bound = view.request, False
    return Task(
        pc=view.phase,
        copy=view.copy,
        request=request,
        bound_to_local=bound,
        base=view.base,
        pending=view.pending,
    )
