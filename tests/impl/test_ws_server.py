"""The loopback server's protocol answers, over a real socket on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from impl.ws_server import DUPLICATE_ID, LoopbackServer, ServerSettings

T = TypeVar("T")
JSON = dict[str, Any]


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(coro, 10))


@asynccontextmanager
async def client(
    settings: ServerSettings | None = None,
) -> AsyncIterator[tuple[LoopbackServer, ClientConnection, str]]:
    async with (
        LoopbackServer(settings) as server,
        connect(server.url, proxy=None, compression=None) as ws,
    ):
        hello = json.loads(await ws.recv())
        assert hello["type"] == "session.created"
        yield server, ws, hello["session"]["id"]


async def ask(ws: ClientConnection, event: JSON) -> JSON:
    await ws.send(json.dumps(event))
    answer: JSON = json.loads(await ws.recv())
    return answer


def create(event_id: str, item_id: str, previous: str | None = "root") -> JSON:
    event: JSON = {
        "type": "conversation.item.create",
        "event_id": event_id,
        "item": {
            "id": item_id,
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": item_id}],
        },
    }
    if previous is not None:
        event["previous_item_id"] = previous
    return event


def test_create_is_answered_by_added_at_the_named_place() -> None:
    async def scenario() -> None:
        async with client() as (server, ws, session_id):
            first = await ask(ws, create("e1", "a"))
            assert first["type"] == "conversation.item.added"
            assert first["previous_item_id"] is None and first["item"]["id"] == "a"
            assert (await ask(ws, create("e2", "c", "a")))["previous_item_id"] == "a"
            assert (await ask(ws, create("e3", "b", "a")))["previous_item_id"] == "a"
            assert (await ask(ws, create("e4", "z", None)))["previous_item_id"] == "c"
            assert (await ask(ws, create("e5", "h", "root")))["previous_item_id"] is None
            assert server.conversations[session_id].ids() == ("h", "a", "b", "c", "z")

    run(scenario())


def test_older_servers_answer_with_created() -> None:
    async def scenario() -> None:
        async with client(ServerSettings(legacy_created=True)) as (_, ws, _id):
            answer = await ask(ws, create("e1", "a"))
            assert answer["type"] == "conversation.item.created"

    run(scenario())


def test_delete_is_answered_by_deleted() -> None:
    async def scenario() -> None:
        async with client() as (server, ws, session_id):
            await ask(ws, create("e1", "a"))
            delete = {"type": "conversation.item.delete", "event_id": "e2", "item_id": "a"}
            answer = await ask(ws, delete)
            assert answer == {"type": "conversation.item.deleted", "item_id": "a", **_eid(answer)}
            conversation = server.conversations[session_id]
            assert conversation.ids() == () and conversation.removed == {"a"}

    run(scenario())


def _eid(event: JSON) -> JSON:
    return {"event_id": event["event_id"]}


@pytest.mark.parametrize(
    ("setup", "event", "code"),
    [
        ([create("e0", "a")], create("e1", "a"), DUPLICATE_ID),
        ([], create("e1", "b", "nowhere"), "item_create_invalid_previous_item_id"),
        ([], {"type": "conversation.item.delete", "event_id": "e1", "item_id": "x"}, None),
        ([], {"type": "response.dance", "event_id": "e1"}, None),
    ],
    ids=["duplicate-id", "unknown-predecessor", "unknown-item", "unknown-event"],
)
def test_errors_carry_the_clients_event_id(
    setup: list[JSON], event: JSON, code: str | None
) -> None:
    async def scenario() -> None:
        async with client() as (_, ws, _id):
            for earlier in setup:
                await ask(ws, earlier)
            answer = await ask(ws, event)
            assert answer["type"] == "error"
            assert answer["error"]["event_id"] == "e1"
            if code is not None:
                assert answer["error"]["code"] == code

    run(scenario())


def test_the_model_adds_items_unasked_at_the_tail() -> None:
    async def scenario() -> None:
        async with client() as (server, ws, session_id):
            await ask(ws, create("e1", "a"))
            server.add_item(session_id, {"id": "m", "type": "message", "role": "assistant"})
            event = json.loads(await ws.recv())
            assert event["type"] == "conversation.item.added"
            assert event["item"]["id"] == "m" and event["previous_item_id"] == "a"
            assert server.conversations[session_id].model_items == 1

    run(scenario())


def test_rejection_probability_one_rejects_every_op() -> None:
    async def scenario() -> None:
        async with client(ServerSettings(reject_probability=1.0)) as (server, ws, session_id):
            answer = await ask(ws, create("e1", "a"))
            assert answer["type"] == "error" and answer["error"]["event_id"] == "e1"
            assert server.conversations[session_id].ids() == ()

    run(scenario())


def test_each_message_is_delayed_and_order_is_kept_under_jitter() -> None:
    async def scenario() -> None:
        settings = ServerSettings(latency=0.015, jitter=0.01, seed=3)
        async with client(settings) as (_, ws, _id):
            started = time.perf_counter()
            for n in range(20):
                await ws.send(json.dumps(create(f"e{n}", f"i{n}", None)))
            answers = [json.loads(await ws.recv())["item"]["id"] for _ in range(20)]
            elapsed = time.perf_counter() - started
            assert answers == [f"i{n}" for n in range(20)]
            assert elapsed >= 2 * (0.015 - 0.01)

    run(scenario())


def test_round_trip_is_two_latencies() -> None:
    async def scenario() -> None:
        async with client(ServerSettings(latency=0.02)) as (_, ws, _id):
            started = time.perf_counter()
            await ask(ws, create("e1", "a"))
            assert 0.039 <= time.perf_counter() - started < 0.2

    run(scenario())


def test_binds_loopback_and_closes() -> None:
    async def scenario() -> None:
        server = LoopbackServer()
        await server.start()
        url = server.url
        assert url.startswith("ws://127.0.0.1:")
        ws = await connect(url, proxy=None)
        await server.aclose()
        with pytest.raises(ConnectionClosed):
            await ws.recv()  # session.created may be in the buffer; the close is next
            await ws.recv()
        with pytest.raises(OSError):
            await connect(url, proxy=None, open_timeout=1)

    run(scenario())


def test_the_server_closes_itself_after_its_lifetime() -> None:
    async def scenario() -> None:
        async with LoopbackServer(ServerSettings(max_lifetime=0.05)) as server:
            ws = await connect(server.url, proxy=None)
            await _until_closed(ws.recv)

    run(scenario())


async def _until_closed(recv: Callable[[], Awaitable[object]]) -> None:
    with pytest.raises(ConnectionClosed):
        for _ in range(10):
            await recv()


def test_a_create_after_a_deleted_item_is_refused_and_recorded() -> None:
    async def scenario() -> None:
        async with client() as (server, ws, session_id):
            await ask(ws, create("e1", "a"))
            await ask(ws, {"type": "conversation.item.delete", "event_id": "e2", "item_id": "a"})
            answer = await ask(ws, create("e3", "b", "a"))
            assert answer["type"] == "error" and answer["error"]["event_id"] == "e3"
            assert server.conversations[session_id].refused == {"b"}

    run(scenario())
