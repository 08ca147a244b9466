"""The activity's sites, its one locked helper, and the policies."""

from __future__ import annotations

import pytest

from impl.policy import DEFAULT_POLICY, POLICIES, policy
from impl.policy import SITES as IMPL_SITES
from impl.probe import Phase
from impl.session import RealtimeSession
from model import SITES, VARIANTS
from tests.impl.conftest import World, msg, out


def test_the_default_policy_is_the_fixed_one() -> None:
    assert DEFAULT_POLICY.name == "lock5" and policy("lock5") is DEFAULT_POLICY
    with pytest.raises(ValueError, match="choose from"):
        policy("nope")


def test_impl_sites_and_policies_agree_with_the_model() -> None:
    assert {s.name: (s.request.value, s.local_update.value) for s in SITES} == {
        name: (s.request.value, s.local_update.value) for name, s in IMPL_SITES.items()
    }
    for variant in VARIANTS:
        mine = POLICIES[variant.name]
        assert mine.session.value == variant.session.value
        for site in SITES:
            assert mine.locks(site.name) == variant.locks(site)
            assert mine.local_update(site.name).value == variant.local_update(site).value


def test_lock5_holds_the_activity_lock_across_snapshot_push_and_acks() -> None:
    world = World([msg("msg0")], policy="lock5")
    tools = world.spawn(world.activity.push_tool_outputs([out("out1")]), name="tools")
    turn = world.spawn(world.activity.generate_reply(msg("hello")), name="turn")
    assert world.activity.lock.holder is tools and world.activity.lock.waiting == [turn]
    assert [p.phase for p in world.activity.pushes] == [Phase.WAIT_ACKS, Phase.WAIT_ACTIVITY]
    world.deliver_all()
    assert world.server.server_ids() == ("msg0", "out1", "hello")
    assert world.activity.chat_ctx.ids() == ("msg0", "out1", "hello")


def test_unlocked_loses_the_tool_output() -> None:
    world = World([msg("msg0")], policy="unlocked")
    world.spawn(world.activity.push_tool_outputs([out("out1")]))
    world.spawn(world.activity.generate_reply(msg("hello")))
    world.deliver_all()
    assert world.server.server_ids() == ("msg0", "hello")
    assert world.activity.chat_ctx.ids() == ("msg0", "out1", "hello")


def test_replacement_makes_the_copy_live_and_pushes_that_object() -> None:
    world = World([msg("msg0")], policy="lock5")
    copy = world.activity.chat_ctx.copy()
    copy.upsert(msg("note1"))
    world.spawn(world.activity.update_chat_ctx(copy))
    assert world.activity.chat_ctx is copy
    record = world.activity.pushes[0]
    assert record.request is copy and record.bound() and record.base == {"msg0"}
    world.deliver_all()
    assert world.server.server_ids() == ("msg0", "note1")


def test_cleanup_pushes_the_live_local_context() -> None:
    world = World([msg("msg0"), msg("asst1", "assistant")], policy="lock5")
    world.activity.chat_ctx.remove("asst1")
    world.spawn(world.activity.cleanup_interrupted(["asst1"]))
    world.deliver_all()
    assert world.server.server_ids() == ("msg0",)


def test_the_user_turn_updates_locally_after_its_push_even_when_it_fails() -> None:
    world = World([msg("msg0")], policy="lock5")
    turn = world.spawn(world.activity.generate_reply(msg("hello")))
    assert "hello" not in world.activity.chat_ctx
    world.do(world.server.clock.fire, turn)
    assert turn.done() and world.activity.pushes[0].phase is Phase.FAILED
    assert "hello" in world.activity.chat_ctx and not world.activity.lock.locked()


def test_hoisted_user_turn_updates_locally_first() -> None:
    world = World([msg("msg0")], policy="lock5-hoisted")
    world.spawn(world.activity.generate_reply(msg("hello")))
    assert "hello" in world.activity.chat_ctx


def test_a_cancelled_site_releases_both_locks_and_forgets_its_acks() -> None:
    world = World([msg("msg0")], policy="lock5")
    tools = world.spawn(world.activity.push_tool_outputs([out("out1")]), name="tools")
    turn = world.spawn(world.activity.generate_reply(msg("hello")), name="turn")
    session = world.session
    assert isinstance(session, RealtimeSession)
    assert session.lock.holder is tools and world.activity.lock.holder is tools
    tools.cancel()
    world.settle()
    assert tools.cancelled() and world.activity.pushes[0].phase is Phase.CANCELLED
    # the waiting turn got both locks; the cancelled push's ack is forgotten
    assert world.activity.lock.holder is turn and session.lock.holder is turn
    assert ("create", "out1") not in session._acks
    world.deliver_all()
    assert turn.done() and not world.activity.lock.locked() and not session.lock.locked()


def test_three_way_sites_take_no_lock_and_keep_both_items() -> None:
    world = World([msg("msg0")], policy="three-way")
    world.spawn(world.activity.push_tool_outputs([out("out1")]))
    world.spawn(world.activity.generate_reply(msg("hello")))
    assert not world.activity.lock.locked() and len(world.server.to_server) == 2
    world.deliver_all()
    assert set(world.server.server_ids()) == {"msg0", "out1", "hello"}
