"""The three-way session: expected view, base, merge, rollback, no lock."""

from __future__ import annotations

import pytest

from impl.chat_context import ChatContext, CreateItem, DeleteItem
from impl.session import RealtimeError
from impl.three_way import ThreeWaySession, expected_view, three_way_diff
from impl.transport import CreateOp, DeleteOp
from model.diff import three_way_diff as model_three_way_diff
from tests.impl.conftest import World, msg


@pytest.fixture
def world() -> World:
    return World([msg("msg0"), msg("x")], policy="three-way")


def session(world: World) -> ThreeWaySession:
    assert isinstance(world.session, ThreeWaySession)
    return world.session


def snapshot(world: World, *adds: str, drops: tuple[str, ...] = ()) -> ChatContext:
    ctx = world.session.chat_ctx
    for item_id in drops:
        ctx.remove(item_id)
    for item_id in adds:
        ctx.upsert(msg(item_id))
    return ctx


def test_expected_view_applies_outstanding_ops_in_order() -> None:
    ops = (
        CreateOp("1", msg("a"), "m"),
        DeleteOp("2", "m"),
        CreateOp("3", msg("h"), None),
        CreateOp("4", msg("t"), "gone"),
    )
    assert expected_view(("m", "z"), ops) == ("h", "a", "z", "t")


def test_three_way_diff_matches_the_model() -> None:
    request = ChatContext([msg("a"), msg("new"), msg("c")])
    ours = three_way_diff(("a", "b", "c", "unseen"), {"a", "b", "c"}, request)
    assert ours == [DeleteItem("b"), CreateItem(msg("new"), "a")]
    theirs = model_three_way_diff(("a", "b", "c", "unseen"), {"a", "b", "c"}, ("a", "new", "c"), 0)
    assert [(op.item, op.after) for op in theirs] == [("b", None), ("new", "a")]


def test_a_second_push_diffs_while_the_first_waits_and_keeps_its_items(world: World) -> None:
    first = world.spawn(world.session.update_chat_ctx(snapshot(world, "out1")))
    second = world.spawn(world.session.update_chat_ctx(snapshot(world, "hello")))
    # no lock: both sent; the second saw out1 in the expected view, not in its base
    assert [s.op.item_id for s in world.server.to_server] == ["out1", "hello"]
    # a create goes after the nearest earlier item of its own request: hello's
    # request never had out1, so hello lands after x, before out1
    assert session(world).expected_ids() == ("msg0", "x", "hello", "out1")
    world.deliver_all()
    assert first.done() and second.done()
    assert world.server.server_ids() == ("msg0", "x", "hello", "out1")


def test_only_what_the_caller_saw_and_dropped_is_deleted(world: World) -> None:
    world.do(world.server.model_creates, msg("call1", "assistant"))
    world.do(world.server.deliver_to_client)  # the mirror has call1; the caller's copy not
    stale = ChatContext([msg("msg0"), msg("x")]).copy()
    stale.remove("x")
    world.spawn(world.session.update_chat_ctx(stale))
    assert [s.op for s in world.server.to_server] == [DeleteOp("evt_1", "x")]


def test_merge_drops_what_another_push_deleted_on_purpose(world: World) -> None:
    world.spawn(world.session.update_chat_ctx(snapshot(world, drops=("x",))))
    old_copy = ChatContext([msg("msg0"), msg("x")]).copy()  # saw x; x is being deleted
    old_copy.upsert(msg("late"))
    world.spawn(world.session.update_chat_ctx(old_copy))
    assert old_copy.ids() == ("msg0", "late")  # the request object loses x too
    assert [s.op.item_id for s in world.server.to_server] == ["x", "late"]


def test_a_rejection_rolls_back_only_its_own_op(world: World) -> None:
    push = world.spawn(world.session.update_chat_ctx(snapshot(world, "a", "b")))
    world.do(world.server.reject_next)
    world.do(world.server.deliver_to_client)
    assert session(world).expected_ids() == ("msg0", "x", "b")
    # b was sent to go after a, which the server never got: it is rejected in turn
    world.deliver_all()
    assert push.done() and world.server.server_ids() == ("msg0", "x")
    assert session(world).expected_ids() == ("msg0", "x")
    assert [op.event_id for op in session(world).rejected] == ["evt_1", "evt_2"]


def test_pipelined_push_returns_once_sent_and_timeouts_keep_ops_in_view(world: World) -> None:
    pipelined = world.spawn(session(world).update_chat_ctx(snapshot(world, "a"), wait=False))
    assert pipelined.done() and session(world).expected_ids() == ("msg0", "x", "a")
    waited = world.spawn(world.session.update_chat_ctx(snapshot(world, "b")))
    world.do(world.server.clock.fire, waited)
    with pytest.raises(RealtimeError):
        waited.result()
    assert session(world).expected_ids() == ("msg0", "x", "b", "a")


def test_a_push_needs_a_base(world: World) -> None:
    task = world.spawn(world.session.update_chat_ctx(ChatContext([msg("a")])))
    with pytest.raises(ValueError, match="base"):
        task.result()
