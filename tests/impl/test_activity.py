"""The activity's sites, its one locked helper, and the policies."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from impl.chat_context import FunctionCall, stamped
from impl.policy import DEFAULT_POLICY, POLICIES, policy
from impl.probe import Phase
from impl.session import RealtimeSession
from model import SITES, SITES_BY_NAME, VARIANTS, VARIANTS_BY_NAME, LocalUpdate, Site, Variant
from tests.impl.conftest import World, msg, out


def test_the_default_policy_is_the_fixed_one() -> None:
    assert DEFAULT_POLICY.name == "lock5" and policy("lock5") is DEFAULT_POLICY
    with pytest.raises(ValueError, match="choose from"):
        policy("nope")


def test_there_is_one_policy_per_variant_of_the_catalog() -> None:
    assert list(POLICIES) == [variant.name for variant in VARIANTS]
    assert all(POLICIES[variant.name].variant is variant for variant in VARIANTS)


def _call_site(world: World, site: str) -> tuple[asyncio.Task[None], Callable[[], bool]]:
    """Call the activity's method for `site`; return its task and whether its local
    change (what it adds, drops or replaces) is visible in the live local context."""
    activity = world.activity
    if site == "replacement":
        copy = activity.chat_ctx.copy()
        copy.upsert(msg("new"))
        return world.spawn(activity.update_chat_ctx(copy)), lambda: activity.chat_ctx is copy
    if site == "cleanup":
        task = world.spawn(activity.cleanup_interrupted(["asst1"]))
        return task, lambda: "asst1" not in activity.chat_ctx
    calls = {
        "user-turn": lambda: activity.generate_reply(msg("new")),
        "tool-outputs": lambda: activity.push_tool_outputs([out("new")]),
        "interrupted-tool-outputs": lambda: activity.push_interrupted_tool_outputs([out("new")]),
        "spoken-message": lambda: activity.commit_spoken(msg("new")),
    }
    return world.spawn(calls[site]()), lambda: "new" in activity.chat_ctx


def _observed(world: World, site: Site) -> tuple[bool, bool, bool]:
    """Whether the site's call held the activity lock while it waited for its acks,
    and whether its local change showed then and once the push returned."""
    task, changed = _call_site(world, site.name)
    (record,) = world.activity.pushes
    assert record.site == site.name and record.phase is Phase.WAIT_ACKS
    locked, early = world.activity.lock.holder is task, changed()
    world.deliver_all()
    assert task.done()
    return locked, early, changed()


def _expected(variant: Variant, site: Site) -> tuple[bool, bool, bool]:
    update = variant.local_update(site)
    return (
        variant.locks(site),
        update in (LocalUpdate.BEFORE_PUSH, LocalUpdate.REPLACE),
        update is not LocalUpdate.NONE,
    )


def _world(policy: str) -> World:
    return World([msg("msg0"), msg("asst1", "assistant")], policy=policy)


@pytest.mark.parametrize("site", SITES, ids=lambda site: site.name)
@pytest.mark.parametrize("variant", VARIANTS, ids=lambda variant: variant.name)
def test_each_site_locks_and_updates_locally_as_the_model_says(
    variant: Variant, site: Site
) -> None:
    """The activity reads the model's records: whether a site holds the activity lock
    across its push, and when its local change shows, are the variant's answers."""
    world = _world(variant.name)
    assert _observed(world, site) == _expected(variant, site)


@pytest.mark.parametrize(
    ("runs", "expects", "site"),
    [
        ("lock5", "unlocked", "tool-outputs"),
        ("lock3", "lock5", "cleanup"),
        ("lock5", "lock5-hoisted", "user-turn"),
        ("lock5-hoisted", "lock5", "user-turn"),
    ],
)
def test_the_check_tells_a_policy_from_another_variant(runs: str, expects: str, site: str) -> None:
    """An activity that ran another variant's policy than the one asked for is caught."""
    world = _world(expects)
    world.activity.policy = POLICIES[runs]
    record = SITES_BY_NAME[site]
    assert _observed(world, record) != _expected(VARIANTS_BY_NAME[expects], record)


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


def test_a_user_message_made_at_its_snapshot_enters_before_a_younger_output() -> None:
    """Unlocked: the turn's message is made when its push snapshots; a tool output
    made after it enters first; the message goes before it, as livekit's insert."""
    world = World([msg("msg0")], policy="unlocked")
    world.spawn(world.activity.generate_reply(msg("hello")))
    world.spawn(world.activity.push_tool_outputs([out("out1")]))
    world.deliver_all()
    assert world.activity.chat_ctx.ids() == ("msg0", "hello", "out1")


def test_an_output_made_before_the_call_keeps_its_time() -> None:
    """A tool output its tool returned before the user turn enters after the turn's
    message, and goes before it."""
    world = World([msg("msg0")], policy="lock5")
    made = stamped(out("out1"))
    world.spawn(world.activity.generate_reply(msg("hello")))
    world.deliver_all()
    world.spawn(world.activity.push_tool_outputs([made]))
    assert world.activity.chat_ctx.ids() == ("msg0", "out1", "hello")


def test_a_waiting_user_turn_makes_its_message_when_it_takes_the_lock() -> None:
    """Under lock5 the message is made after the wait: a function call learned
    meanwhile is older, so the message enters after it."""
    world = World([msg("msg0")], policy="lock5")
    world.spawn(world.activity.push_tool_outputs([out("out1")]))
    world.spawn(world.activity.generate_reply(msg("hello")))
    world.activity.learn(FunctionCall("fc1", "call_fc1", "lookup"))
    world.deliver_all()
    assert world.activity.chat_ctx.ids() == ("msg0", "out1", "fc1", "hello")
