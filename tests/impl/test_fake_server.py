from __future__ import annotations

import asyncio

import pytest

from impl.fake_server import FakeServer
from impl.transport import CreateOp, DeleteOp, ErrorEvent, ItemAdded, ItemDeleted, ServerEvent
from proofs.engines.conformance.loop import new_loop
from tests.impl.conftest import msg


def applied(server: FakeServer, *ops: CreateOp | DeleteOp) -> list[ServerEvent]:
    loop = new_loop()
    with loop.running():
        for op in ops:
            server.transport.send(op)
            server.deliver_to_server()
    return [sent.event for sent in server.to_client]


def test_server_applies_ops_like_the_model() -> None:
    server = FakeServer([msg("a")])
    events = applied(
        server,
        CreateOp("e1", msg("h"), None),  # after None: the head
        CreateOp("e2", msg("b"), "a"),
        CreateOp("e3", msg("b"), "a"),  # duplicate
        CreateOp("e4", msg("c"), "nope"),  # unknown predecessor
        DeleteOp("e5", "nope"),  # unknown item
        DeleteOp("e6", "a"),
    )
    assert server.server_ids() == ("h", "b")
    assert events == [
        ItemAdded(msg("h"), None),
        ItemAdded(msg("b"), "a"),
        ErrorEvent("e3", "item b already exists"),
        ErrorEvent("e4", "previous item nope not found"),
        ErrorEvent("e5", "item nope not found"),
        ItemDeleted("a"),
    ]
    assert server.removed == {"a"} and server.reached == {"a", "h", "b"}


def test_model_items_go_to_the_tail_and_recreation_is_seen() -> None:
    server = FakeServer([msg("a"), msg("b")])
    server.model_creates(msg("m", "assistant"))
    assert server.server_ids() == ("a", "b", "m")
    assert server.to_client[-1].event == ItemAdded(msg("m", "assistant"), "b")
    assert server.created == 1
    applied(server, DeleteOp("e1", "b"), CreateOp("e2", msg("b"), "a"))
    assert [item for _, item in server.recreated] == ["b"]


def test_reject_next_answers_with_the_event_id() -> None:
    server = FakeServer()
    loop = new_loop()
    with loop.running():
        server.transport.send(CreateOp("e1", msg("a"), None))
        server.reject_next()
    assert server.server_ids() == ()
    assert server.to_client[0].event == ErrorEvent("e1", "rejected")


def test_events_reach_the_client_only_when_delivered() -> None:
    server = FakeServer([msg("a")])
    loop = new_loop()
    got: list[ServerEvent] = []

    async def client() -> None:
        while True:
            got.append(await server.transport.recv())

    with loop.running():
        loop.create_task(client())
        server.model_creates(msg("b"))
        server.model_creates(msg("c"))
    loop.run_until_blocked()
    assert got == [] and "b" not in server.acked
    with loop.running():
        server.deliver_to_client()
    loop.run_until_blocked()
    assert [type(e) for e in got] == [ItemAdded] and "b" in server.acked and "c" not in server.acked


def test_virtual_clock_fires_only_when_told() -> None:
    server = FakeServer()
    loop = new_loop()

    async def wait() -> str:
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        return await server.clock.wait_for(future, 5.0)

    with loop.running():
        task = loop.create_task(wait())
    loop.run_until_blocked()
    assert not task.done() and server.clock.armed() == (task,)
    with loop.running():
        server.clock.fire(task)
    loop.run_until_blocked()
    with pytest.raises(TimeoutError):
        task.result()
    with pytest.raises(LookupError):
        server.clock.fire(task)
