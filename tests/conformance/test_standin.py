"""The shared stand-in server applies ops as the model's server does, and records it."""

from __future__ import annotations

import asyncio

import pytest

from model import EventKind, OpKind
from proofs.engines.conformance import AckClock, StandIn, WireEvent, WireOp

T0, T1 = object(), object()
WHO = {T0: 0, T1: 1}


def create(item: str, after: str | None = None, origin: object = T0) -> WireOp:
    return WireOp(OpKind.CREATE, item, after, payload=f"payload {item}", origin=origin)


def delete(item: str, origin: object = T0) -> WireOp:
    return WireOp(OpKind.DELETE, item, origin=origin)


def answered(server: StandIn, *ops: WireOp) -> list[WireEvent]:
    for op in ops:
        server.send(op)
        server.apply_next()
    events = list(server.to_client)
    server.to_client.clear()
    return events


def test_creates_go_after_their_anchor_and_duplicates_are_answered_by_an_error() -> None:
    server = StandIn([("a", None)])
    events = answered(server, create("b", "a"), create("c"), create("b", "a"))
    assert server.ids() == ("c", "a", "b")
    assert [event.kind for event in events] == [
        EventKind.ADDED,
        EventKind.ADDED,
        EventKind.REJECTED,
    ]
    assert events[0].payload == "payload b" and events[0].after == "a"
    assert "already exists" in events[2].reason


def test_a_create_after_a_deleted_item_is_refused_and_recorded() -> None:
    server = StandIn([("a", None)])
    events = answered(server, delete("a"), create("b", "a"), create("c", "zz"), delete("zz"))
    assert [event.kind for event in events] == [EventKind.DELETED] + [EventKind.REJECTED] * 3
    assert server.refused == {"b"}  # "c" followed an item that never was there
    assert server.removed == {"a"}


def test_a_re_creation_and_each_delete_are_recorded_with_their_sender() -> None:
    server = StandIn([("a", None)])
    answered(server, delete("a", T1), create("a", None, T1))
    view = server.view(str, WHO.get)
    assert view.deletes_sent == frozenset({(1, "a", True)})
    assert view.recreated == frozenset({(1, "a")})


def test_the_models_items_go_to_the_tail_and_count_as_acked_only_once_taken() -> None:
    delivered: list[int] = []
    server = StandIn([("a", None)], on_deliver=lambda: delivered.append(1))
    server.model_creates("m1", "payload m1")
    assert server.ids() == ("a", "m1") and server.created == 1
    server.deliver_next()
    assert delivered == [1] and "m1" not in server.acked
    assert server.view(str, WHO.get).to_client[0].after == "a"  # still in flight
    event = server.take()
    assert (event.kind, event.answers) == (EventKind.ADDED, None) and "m1" in server.acked


def test_a_rejection_names_the_kind_of_op_it_answers() -> None:
    server = StandIn([("a", None)], on_deliver=lambda: None)
    server.send(delete("a", T1))
    server.reject_next()
    (event,) = server.view(str, WHO.get).to_client
    assert (event.kind, event.item, event.op, event.task) == (
        EventKind.REJECTED,
        "a",
        OpKind.DELETE,
        1,
    )
    assert server.ids() == ("a",)


def test_delivering_without_a_bridge_says_so() -> None:
    server = StandIn()
    server.model_creates("m1")
    with pytest.raises(RuntimeError, match="on_deliver"):
        server.deliver_next()


def test_the_clock_times_out_only_the_task_it_fires() -> None:
    clock = AckClock()

    async def waits(future: asyncio.Future[None]) -> str:
        try:
            await clock.wait_for(future, 5.0)
        except TimeoutError:
            return "timed out"
        return "acked"

    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        first, second = loop.create_future(), loop.create_future()
        tasks = [loop.create_task(waits(first)), loop.create_task(waits(second))]
        await asyncio.sleep(0)
        assert clock.armed() == tuple(tasks)
        clock.fire(tasks[0])
        second.set_result(None)
        with pytest.raises(LookupError):
            clock.fire(object())
        return list(await asyncio.gather(*tasks))

    assert asyncio.run(main()) == ["timed out", "acked"]
