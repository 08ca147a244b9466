"""The stand-in session keeps the OpenAI realtime session's push semantics.

These are the properties the verdicts rest on: the mirror changes only on
acks, the session lock covers diff, sends and acks, the diff is livekit-agents'
own, a timeout raises `RealtimeError` with the ops still in flight, and a
rejected op does not fail the push.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from proofs.engines.conformance.virtual_time import VirtualTimeLoop, new_virtual_loop


@pytest.fixture
def loop(livekit_version: str) -> Iterator[VirtualTimeLoop]:
    loop = new_virtual_loop()
    yield loop
    for task in asyncio.all_tasks(loop):
        task.cancel()
    loop.run_until_blocked()
    loop.close()


def _message(item_id: str, text: str | None = None) -> Any:
    from livekit.agents import llm

    return llm.ChatMessage(id=item_id, role="user", content=[text or f"text of {item_id}"])


def _session(loop: VirtualTimeLoop, *ids: str) -> Any:
    from proofs.adapters.livekit.standin import StandInModel, StandInServer

    with loop.running():
        return StandInModel(StandInServer([_message(i) for i in ids])).session()


def _push(loop: VirtualTimeLoop, session: Any, *ids: str) -> asyncio.Task[None]:
    from livekit.agents import llm

    with loop.running():
        task = loop.create_task(
            session.update_chat_ctx(llm.ChatContext([_message(i) for i in ids]))
        )
    loop.run_until_blocked()
    return task


def _deliver_all(loop: VirtualTimeLoop, session: Any) -> None:
    server = session.server
    while server.to_server or server.to_client:
        with loop.running():
            if server.to_server:
                server.apply_next()
            else:
                session.deliver()
        loop.run_until_blocked()


def test_the_mirror_changes_only_on_acks(loop: VirtualTimeLoop) -> None:
    session = _session(loop, "msg0")
    push = _push(loop, session, "msg0", "msg1")
    assert [(op.kind, op.item_id, op.previous_id) for op in session.server.to_server] == [
        ("create", "msg1", "msg0")
    ]
    assert session.mirror_ids() == ("msg0",) and not push.done()
    with loop.running():
        session.server.apply_next()
    loop.run_until_blocked()
    assert session.mirror_ids() == ("msg0",) and not push.done()
    with loop.running():
        session.deliver()
    loop.run_until_blocked()
    assert session.mirror_ids() == ("msg0", "msg1") and push.done() and push.exception() is None


def test_the_session_lock_covers_diff_send_and_acks(loop: VirtualTimeLoop) -> None:
    session = _session(loop, "msg0")
    first = _push(loop, session, "msg0", "msg1")
    # a second push of a stale request waits, then diffs against the acked mirror
    second = _push(loop, session, "msg0", "msg2")
    assert [op.item_id for op in session.server.to_server] == ["msg1"]
    _deliver_all(loop, session)
    assert first.done() and second.done()
    assert [item for _, item, _ in session.server.deletes_sent] == ["msg1"]
    assert session.mirror_ids() == ("msg0", "msg2")


def test_an_edited_message_is_a_delete_then_a_create(loop: VirtualTimeLoop) -> None:
    from livekit.agents import llm

    session = _session(loop, "msg0")
    with loop.running():
        edited = llm.ChatContext([_message("msg0", "edited")])
        task = loop.create_task(session.update_chat_ctx(edited))
    loop.run_until_blocked()
    assert [(op.kind, op.item_id) for op in session.server.to_server] == [
        ("delete", "msg0"),
        ("create", "msg0"),
    ]
    _deliver_all(loop, session)
    assert task.done() and task.exception() is None


def test_a_timeout_raises_realtime_error_and_leaves_the_ops_in_flight(
    loop: VirtualTimeLoop,
) -> None:
    from livekit.agents import llm

    session = _session(loop, "msg0")
    push = _push(loop, session, "msg0", "msg1")
    with loop.running():
        session.clock.fire(push)
    loop.run_until_blocked()
    assert isinstance(push.exception(), llm.RealtimeError)
    assert [op.item_id for op in session.server.to_server] == ["msg1"]
    assert not session.lock.locked()
    _deliver_all(loop, session)
    assert session.mirror_ids() == ("msg0", "msg1")


def test_a_rejected_op_does_not_fail_the_push(loop: VirtualTimeLoop) -> None:
    session = _session(loop, "msg0")
    push = _push(loop, session, "msg0", "msg1")
    with loop.running():
        session.server.reject_next()
        session.deliver()
    loop.run_until_blocked()
    assert push.done() and push.exception() is None
    assert [op.item_id for op in session.rejected] == ["msg1"]
    assert session.mirror_ids() == ("msg0",)


def test_the_server_answers_impossible_ops_with_errors(loop: VirtualTimeLoop) -> None:
    from proofs.adapters.livekit.standin import SentOp

    session = _session(loop, "msg0")
    server = session.server
    server.receive(SentOp("delete", "gone", "e1", None))
    server.receive(SentOp("create", "msg0", "e2", None, _message("msg0"), None))
    server.receive(SentOp("create", "msg9", "e3", None, _message("msg9"), "unknown"))
    for _ in range(3):
        server.apply_next()
    assert [event.kind for event in server.to_client] == ["error", "error", "error"]
    assert server.ids() == ("msg0",)


def test_a_cancel_queues_behind_earlier_ops_and_its_done_behind_their_answers(
    loop: VirtualTimeLoop,
) -> None:
    from proofs.adapters.livekit.standin import CancelSender

    session = _session(loop, "msg0")
    ended: list[int] = []
    session.on_done = ended.append
    push = _push(loop, session, "msg0", "msg1")
    with loop.running():
        session.interrupt()  # nobody is interrupting: the old value sends nothing
        session.interrupting = 3
        session.interrupt()
        session.interrupt()  # livekit's second cancel of the same interruption
    assert [op.kind for op in session.server.to_server] == ["create", "cancel"]
    assert session.server.to_server[1].origin == CancelSender(3)
    with loop.running():
        session.server.apply_next()
        session.server.apply_next()
    assert [event.kind for event in session.server.to_client] == ["added", "done"]
    with loop.running():
        session.deliver()
    loop.run_until_blocked()
    assert push.done() and ended == []
    with loop.running():
        session.deliver()
    assert ended == [3] and session.mirror_ids() == ("msg0", "msg1")
    assert session.server.ids() == ("msg0", "msg1")
