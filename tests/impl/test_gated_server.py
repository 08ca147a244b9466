"""The gated websocket server: nothing moves unless released, one delivery at a time."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from impl.gated_server import Call, GatedConnection, GatedServer, Message, Response

JSON = dict[str, Any]


async def _until(done: Callable[[], bool], seconds: float = 5.0) -> None:
    for _ in range(int(seconds / 0.005)):
        if done():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("not done in time")


async def _nothing_arrives(ws: ClientConnection) -> bool:
    try:
        await asyncio.wait_for(ws.recv(), 0.05)
    except TimeoutError:
        return True
    return False


async def _recv(ws: ClientConnection) -> JSON:
    return dict(json.loads(await asyncio.wait_for(ws.recv(), 2.0)))


def _run(test: Callable[[GatedServer, ClientConnection, GatedConnection], Awaitable[None]]) -> None:
    async def main() -> None:
        async with GatedServer(max_lifetime=30) as server, connect(server.url) as ws:
            await _until(lambda: bool(server.connections))
            await test(server, ws, server.current)

    asyncio.run(main())


async def _send(ws: ClientConnection, connection: GatedConnection, event: JSON) -> None:
    before = len(connection.to_server)
    await ws.send(json.dumps(event))
    await _until(lambda: len(connection.to_server) > before)


def _create(item_id: str, event_id: str, previous: str = "root") -> JSON:
    item = {"id": item_id, "type": "message", "role": "user", "content": []}
    return {
        "type": "conversation.item.create",
        "event_id": event_id,
        "previous_item_id": previous,
        "item": item,
    }


def test_nothing_is_delivered_until_released() -> None:
    async def test(server: GatedServer, ws: ClientConnection, c: GatedConnection) -> None:
        assert await _nothing_arrives(ws)  # even session.created waits
        await c.deliver_next()
        assert (await _recv(ws))["type"] == "session.created"
        await _send(ws, c, _create("a", "chat_ctx_create_1"))
        assert await _nothing_arrives(ws)
        assert c.conversation.ids() == ()  # received, not applied
        c.apply_next()
        assert c.conversation.ids() == ("a",)
        assert await _nothing_arrives(ws)  # applied, its ack not written
        assert "a" not in c.acked
        await c.deliver_next()
        added = await _recv(ws)
        assert added["type"] == "conversation.item.added"
        assert added["item"]["id"] == "a"
        assert "a" in c.acked
        assert c.created_by["a"] == "chat_ctx_create_1"

    _run(test)


def test_rejection_names_the_event_and_deletes_record_what_was_acked() -> None:
    async def test(server: GatedServer, ws: ClientConnection, c: GatedConnection) -> None:
        await c.deliver_next()
        await _recv(ws)
        await _send(ws, c, _create("a", "chat_ctx_create_1"))
        c.reject_next()
        await c.deliver_next()
        error = await _recv(ws)
        assert error["type"] == "error"
        assert error["error"]["event_id"] == "chat_ctx_create_1"
        assert c.conversation.ids() == ()
        await _send(ws, c, _create("b", "chat_ctx_create_2"))
        c.apply_next()
        delete = {"type": "conversation.item.delete", "event_id": "chat_ctx_delete_1"}
        await _send(ws, c, {**delete, "item_id": "b"})  # b's ack not delivered yet
        c.apply_next()
        assert c.deletes[-1].item_id == "b"
        assert not c.deletes[-1].acked
        assert c.conversation.ids() == ()
        assert c.conversation.removed == {"b"}

    _run(test)


def test_session_update_and_a_scripted_function_call() -> None:
    async def test(server: GatedServer, ws: ClientConnection, c: GatedConnection) -> None:
        await c.deliver_next()
        await _recv(ws)
        await _send(ws, c, {"type": "session.update", "event_id": "s1", "session": {}})
        c.apply_next()
        await c.deliver_next()
        assert (await _recv(ws))["type"] == "session.updated"
        server.responses.append(Response((Call("fc1", "call_1", "lookup"),)))
        request = {"type": "response.create", "event_id": "r1"}
        await _send(ws, c, {**request, "response": {"metadata": {"client_event_id": "r1"}}})
        c.apply_next()
        kinds = []
        while c.to_client:
            await c.deliver_next()
            kinds.append((await _recv(ws))["type"])
        assert kinds == [
            "response.created",
            "response.output_item.added",
            "conversation.item.added",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.output_item.done",
            "response.done",
        ]
        assert c.conversation.ids() == ("fc1",)
        created = next(e for e in c.written_log if e["type"] == "response.created")
        assert created["response"]["metadata"] == {"client_event_id": "r1"}

    _run(test)


def test_a_held_message_stays_open_until_the_client_cancels() -> None:
    async def test(server: GatedServer, ws: ClientConnection, c: GatedConnection) -> None:
        server.responses.append(Response((Message("asst1", "never played"),), held=True))
        await _send(ws, c, {"type": "response.create", "event_id": "r1"})
        c.apply_next()
        kinds = [event["type"] for event in c.to_client]
        assert "response.output_text.delta" not in kinds
        assert "response.done" not in kinds
        assert c.responding
        await _send(ws, c, {"type": "response.cancel", "event_id": "c1"})
        c.apply_next()
        done = c.to_client[-1]
        assert done["type"] == "response.done"
        assert done["response"]["status"] == "cancelled"

    _run(test)


def test_the_model_creates_an_item_in_a_response_it_starts() -> None:
    async def test(server: GatedServer, ws: ClientConnection, c: GatedConnection) -> None:
        c.create_item(Call("call1", "call_call1", "lookup"))
        kinds = [event["type"] for event in c.to_client]
        assert kinds[1:] == [
            "response.created",
            "response.output_item.added",
            "conversation.item.added",
        ]
        assert c.to_client[1]["response"]["metadata"] is None  # nobody asked for it
        c.end_output("call1")
        c.finish_response()
        assert [event["type"] for event in c.to_client][-2:] == [
            "response.output_item.done",
            "response.done",
        ]

    _run(test)


def test_a_dropped_connection_closes_the_client_end() -> None:
    async def test(server: GatedServer, ws: ClientConnection, c: GatedConnection) -> None:
        await c.drop()
        await _until(lambda: c.conversation.closed)
        assert ws.close_code == 1011

    _run(test)


def test_events_delivered_together_arrive_in_order_and_are_acknowledged() -> None:
    """`deliver_together`: the acks of two applied creates reach the client in the
    server's order and both items count as acknowledged; asking for more than waits
    is refused. (That one write gives the client no loop turn between them is what
    `tests/livekit/test_one_generation.py` relies on and shows with the plugin.)"""

    async def test(server: GatedServer, ws: ClientConnection, c: GatedConnection) -> None:
        await c.deliver_next()  # session.created
        await _recv(ws)
        await _send(ws, c, _create("a", "chat_ctx_create_1"))
        await _send(ws, c, _create("b", "chat_ctx_create_2", previous="a"))
        c.apply_next()
        c.apply_next()
        assert c.acked.isdisjoint({"a", "b"})
        with_too_many = len(c.to_client) + 1
        try:
            await c.deliver_together(with_too_many)
        except ValueError as error:
            assert "waiting" in str(error)
        else:
            raise AssertionError("more events than wait were delivered")
        sent = await c.deliver_together(2)
        assert [e["item"]["id"] for e in sent] == ["a", "b"]
        first, second = await _recv(ws), await _recv(ws)
        assert [first["item"]["id"], second["item"]["id"]] == ["a", "b"]
        assert {"a", "b"} <= c.acked and not c.to_client

    _run(test)
