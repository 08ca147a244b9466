"""The locked mirror-diff session: acks, timeouts, rejections, its lock, cancellation."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging

import pytest

from impl.chat_context import ChatContext
from impl.clock import SystemClock
from impl.fake_server import FakeServer
from impl.session import RealtimeError, RealtimeSession
from tests.impl.conftest import World, msg


def request(world: World, *ids: str) -> ChatContext:
    ctx = world.session.chat_ctx
    for item_id in ids:
        ctx.upsert(msg(item_id))
    return ctx


def session(world: World) -> RealtimeSession:
    assert isinstance(world.session, RealtimeSession)
    return world.session


def test_mirror_changes_only_on_events(world: World) -> None:
    push = world.spawn(world.session.update_chat_ctx(request(world, "a")))
    assert world.session.mirror_ids() == ("msg0",) and len(world.server.to_server) == 1
    world.do(world.server.deliver_to_server)
    assert world.server.server_ids() == ("msg0", "a") and world.session.mirror_ids() == ("msg0",)
    assert not push.done()
    world.do(world.server.deliver_to_client)
    assert world.session.mirror_ids() == ("msg0", "a") and push.done() and push.result() is None


def test_the_request_is_read_once_the_lock_is_held(world: World) -> None:
    first = world.spawn(world.session.update_chat_ctx(request(world, "a")))
    live = request(world, "b")
    second = world.spawn(world.session.update_chat_ctx(live))
    assert session(world).lock.waiting == [second]
    live.upsert(msg("late"))  # changed while the push waits for the lock
    world.deliver_all()
    assert first.done() and second.done()
    # the second push read its request after the first one's ack: it deletes "a"
    assert world.server.server_ids() == ("msg0", "b", "late")


def test_timeout_raises_and_the_ops_stay_in_flight(world: World) -> None:
    push = world.spawn(world.session.update_chat_ctx(request(world, "a")))
    world.do(world.server.clock.fire, push)
    with pytest.raises(RealtimeError, match="timed out"):
        push.result()
    assert not session(world).lock.locked()
    assert [s.op.item_id for s in world.server.to_server] == ["a"]
    world.deliver_all()
    assert world.session.mirror_ids() == ("msg0", "a")


def test_a_rejected_op_is_logged_and_does_not_fail_the_push(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    push = world.spawn(world.session.update_chat_ctx(request(world, "a")))
    with caplog.at_level(logging.WARNING, logger="impl.session"):
        world.do(world.server.reject_next)
        world.do(world.server.deliver_to_client)
    assert push.done() and push.result() is None
    assert "rejected" in caplog.text and [op.event_id for op in world.session.rejected] == ["evt_1"]


def test_cancelled_while_waiting_for_acks_releases_the_lock_and_forgets_acks(
    world: World,
) -> None:
    push = world.spawn(world.session.update_chat_ctx(request(world, "a")))
    waiting = world.spawn(world.session.update_chat_ctx(request(world, "b")))
    push.cancel()
    world.settle()
    assert push.cancelled()
    assert session(world)._acks.keys() == {("create", "b")}  # only the next push's
    assert session(world).lock.holder is waiting
    world.deliver_all()
    assert waiting.done() and not session(world).lock.locked()


def test_cancelled_while_waiting_for_the_lock(world: World) -> None:
    first = world.spawn(world.session.update_chat_ctx(request(world, "a")))
    second = world.spawn(world.session.update_chat_ctx(request(world, "b")))
    second.cancel()
    world.settle()
    assert second.cancelled() and session(world).lock.waiting == []
    world.deliver_all()
    assert first.done() and not session(world).lock.locked()
    assert world.server.server_ids() == ("msg0", "a")


def test_a_push_with_nothing_to_change_returns_at_once(world: World) -> None:
    push = world.spawn(world.session.update_chat_ctx(request(world)))
    assert push.done() and not world.server.to_server


def test_aclose_stops_the_receive_loop(world: World) -> None:
    world.spawn(world.session.aclose())
    world.do(world.server.model_creates, msg("m"))
    world.do(world.server.deliver_to_client)
    assert world.session.mirror_ids() == ("msg0",)


def test_an_abandoned_ack_wait_leaves_no_unretrieved_error() -> None:
    """On shutdown (Ctrl-C), a push's task is cancelled while it waits for acks:
    the timeout cancels the gathering future, which then ends with a
    CancelledError set as its error, and nobody awaits it any more. asyncio logs
    that as "exception was never retrieved" unless the session consumes it."""

    async def scenario() -> list[str]:
        loop = asyncio.get_running_loop()
        logged: list[str] = []
        loop.set_exception_handler(lambda _, context: logged.append(context["message"]))
        session = RealtimeSession(FakeServer().transport, clock=SystemClock())
        ack: asyncio.Future[bool] = loop.create_future()
        waiting = asyncio.create_task(session._await_acks({("create", "a"): ack}))
        await asyncio.sleep(0)
        waiting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await waiting
        del waiting, ack
        gc.collect()
        await asyncio.sleep(0)
        return logged

    assert asyncio.run(scenario()) == []
