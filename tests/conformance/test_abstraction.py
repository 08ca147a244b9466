"""The abstraction function's two subtle mappings: lock handoff and the live request."""

from __future__ import annotations

from model import Lock, Pc, Task
from proofs.engines.conformance.abstraction import _lock, _task
from proofs.engines.conformance.adapter import LockView, TaskView


def test_a_released_lock_belongs_to_its_first_waiter_at_once() -> None:
    assert _lock(LockView()) == Lock()
    assert _lock(LockView(holder=0, waiting=(1, 2))) == Lock(0, (1, 2))
    # asyncio has woken task 1 but it has not run yet: the model says it owns the lock
    assert _lock(LockView(holder=None, waiting=(1, 2))) == Lock(1, (2,))


def test_a_request_is_bound_while_it_is_the_live_local_context() -> None:
    live = TaskView(Pc.WAIT_ACTIVITY, request=("a",), request_is_live=True, base=frozenset("a"))
    assert _task(live) == Task(Pc.WAIT_ACTIVITY, bound_to_local=True, base=frozenset("a"))
    replaced = TaskView(Pc.WAIT_ACTIVITY, request=("a",), request_is_live=False)
    assert _task(replaced) == Task(Pc.WAIT_ACTIVITY, request=("a",))
    snapshotless = TaskView(Pc.WAIT_ACTIVITY)
    assert _task(snapshotless) == Task(Pc.WAIT_ACTIVITY)


def test_after_the_diff_the_request_is_what_the_session_read() -> None:
    view = TaskView(
        Pc.WAIT_ACKS,
        request=("a", "b", "later"),  # the live object changed since
        request_is_live=False,  # and was replaced since
        read=("a", "b"),
        bound_at_read=True,
    )
    assert _task(view) == Task(Pc.WAIT_ACKS, request=("a", "b"), bound_to_local=True)
