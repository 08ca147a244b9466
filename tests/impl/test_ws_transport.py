"""The websocket transport: the JSON codec, and both sessions and the activity
running over a real loopback socket unchanged, on real time."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import pytest

from impl.activity import AgentActivity
from impl.chat_context import ChatContext, ChatItem, ChatMessage, FunctionCall, FunctionCallOutput
from impl.policy import POLICIES
from impl.session import RealtimeError, RealtimeSession
from impl.three_way import ThreeWaySession
from impl.transport import CreateOp, DeleteOp, ErrorEvent, ItemAdded, ItemDeleted
from impl.ws_server import LoopbackServer, ServerSettings
from impl.ws_transport import (
    ProtocolError,
    WebSocketTransport,
    event_from_json,
    item_from_json,
    item_to_json,
    op_to_json,
)

T = TypeVar("T")

ITEMS: list[ChatItem] = [
    ChatMessage("u", "user", "hello"),
    ChatMessage("a", "assistant", "hi"),
    ChatMessage("s", "system", "be brief"),
    FunctionCall("c", "call_1", "lookup", '{"q": 1}'),
    FunctionCallOutput("o", "call_1", "42"),
]


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(coro, 10))


@pytest.mark.parametrize("item", ITEMS, ids=lambda item: type(item).__name__ + item.id)
def test_items_survive_the_json_round_trip(item: ChatItem) -> None:
    assert item_from_json(item_to_json(item)) == item


def test_ops_and_events_in_the_protocols_words() -> None:
    create = op_to_json(CreateOp("e1", ITEMS[0], None))
    assert create["type"] == "conversation.item.create" and create["previous_item_id"] == "root"
    assert op_to_json(CreateOp("e2", ITEMS[0], "x"))["previous_item_id"] == "x"
    assert op_to_json(DeleteOp("e3", "x")) == {
        "type": "conversation.item.delete",
        "event_id": "e3",
        "item_id": "x",
    }
    item = item_to_json(ITEMS[0])
    for kind in ("conversation.item.added", "conversation.item.created"):
        event = event_from_json({"type": kind, "previous_item_id": None, "item": item})
        assert event == ItemAdded(ITEMS[0], None)
    assert event_from_json({"type": "conversation.item.deleted", "item_id": "x"}) == ItemDeleted(
        "x"
    )
    error = {"type": "error", "error": {"event_id": "e9", "message": "no"}}
    assert event_from_json(error) == ErrorEvent("e9", "no")
    assert event_from_json({"type": "response.done"}) is None
    transcript = {"id": "t", "type": "message", "role": "user", "content": [{"transcript": "hi"}]}
    assert item_from_json(transcript) == ChatMessage("t", "user", "hi")
    with pytest.raises(ProtocolError):
        item_from_json({"id": "x", "type": "image"})


@asynccontextmanager
async def served(
    settings: ServerSettings | None = None,
) -> AsyncIterator[tuple[LoopbackServer, WebSocketTransport]]:
    async with LoopbackServer(settings) as server:
        transport = await WebSocketTransport.connect(server.url, trace=32)
        try:
            yield server, transport
        finally:
            await transport.aclose()


def test_the_locked_session_mirrors_the_server_over_the_socket() -> None:
    async def scenario() -> None:
        async with served(ServerSettings(latency=0.002)) as (server, transport):
            session = RealtimeSession(transport)
            session.start()
            request = ChatContext(ITEMS[:3])
            await session.update_chat_ctx(request)
            conversation = server.conversations[transport.session_id]
            assert session.mirror_ids() == conversation.ids() == ("u", "a", "s")
            dropped = session.chat_ctx
            dropped.remove("a")
            await session.update_chat_ctx(dropped)
            assert session.mirror_ids() == conversation.ids() == ("u", "s")
            assert transport.deletes_sent[0][1:] == ("a", True)
            await session.aclose()

    run(scenario())


def test_a_timeout_is_real_time_and_the_ops_stay_in_flight() -> None:
    async def scenario() -> None:
        async with served(ServerSettings(latency=0.03)) as (_, transport):
            session = RealtimeSession(transport, ack_timeout=0.01)
            session.start()
            with pytest.raises(RealtimeError):
                await session.update_chat_ctx(ChatContext(ITEMS[:1]))
            assert session.mirror_ids() == ()
            acked = transport.watch("u")
            await acked
            assert session.mirror_ids() == ("u",)
            await session.aclose()

    run(scenario())


def test_a_rejected_op_reaches_the_session_as_an_error() -> None:
    async def scenario() -> None:
        async with served(ServerSettings(reject_probability=1.0)) as (_, transport):
            session = ThreeWaySession(transport)
            session.start()
            await session.update_chat_ctx(ChatContext(ITEMS[:1]), base=frozenset())
            assert [op.item_id for op in session.rejected] == ["u"]
            assert session.expected_ids() == ()
            await session.aclose()

    run(scenario())


@pytest.mark.parametrize(("variant", "kept"), [("unlocked", False), ("three-way", True)])
def test_the_overlapping_push_over_a_real_socket(variant: str, kept: bool) -> None:
    """The seed's finding, unchanged code, real socket: unlocked loses the output."""

    async def scenario() -> None:
        async with served(ServerSettings(latency=0.005)) as (server, transport):
            policy = POLICIES[variant]
            session: RealtimeSession | ThreeWaySession = (
                ThreeWaySession(transport) if variant == "three-way" else RealtimeSession(transport)
            )
            session.start()
            activity = AgentActivity(session, policy=policy)
            await activity.generate_reply(ChatMessage("m0", "user", "first"))
            tool = asyncio.create_task(
                activity.push_tool_outputs([FunctionCallOutput("out1", "c", "42")])
            )
            await asyncio.sleep(0)  # the tool push has sent its create and waits
            await activity.generate_reply(ChatMessage("hello", "user", "hello"))
            await tool
            on_server = server.conversations[transport.session_id].ids()
            assert "out1" in activity.chat_ctx.ids()
            assert ("out1" in on_server) is kept
            await session.aclose()

    run(scenario())
