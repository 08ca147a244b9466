"""`deliver_together` writes through two websockets internals (`impl.gated_server.one_write`):
on a connection that lacks either it stops with an error that names them and the
releases it is tested on, before it takes any event off the FIFO."""

from __future__ import annotations

import asyncio
from collections import deque
from types import SimpleNamespace
from typing import Any, cast

import pytest
from websockets.asyncio.server import ServerConnection
from websockets.server import ServerProtocol

from impl.gated_server import WEBSOCKETS_TESTED, GatedConnection, one_write


def test_the_installed_websockets_has_both_internals() -> None:
    """The real write is `tests/impl/test_gated_server.py`'s; here only the two names."""
    assert callable(ServerConnection.send_context) and callable(ServerProtocol.send_text)
    protocol = SimpleNamespace(send_text=lambda data: None)
    ws = cast(Any, SimpleNamespace(send_context=lambda: None, protocol=protocol))
    assert one_write(ws) == (ws.send_context, protocol.send_text)


@pytest.mark.parametrize(
    "ws",
    [
        SimpleNamespace(protocol=SimpleNamespace(send_text=lambda data: None)),
        SimpleNamespace(send_context=lambda: None, protocol=SimpleNamespace()),
        SimpleNamespace(send_context=lambda: None),
    ],
    ids=["no-send-context", "no-send-text", "no-protocol"],
)
def test_a_connection_without_the_internals_is_a_clear_error(ws: SimpleNamespace) -> None:
    with pytest.raises(RuntimeError, match=r"send_context\(\) or protocol\.send_text") as error:
        one_write(cast(Any, ws))
    assert WEBSOCKETS_TESTED in str(error.value)


def test_deliver_together_refuses_before_it_takes_an_event() -> None:
    events: deque[dict[str, object]] = deque([{"type": "session.created"}])
    connection = cast(Any, SimpleNamespace(ws=SimpleNamespace(), to_client=events))
    with pytest.raises(RuntimeError, match="websockets"):
        asyncio.run(GatedConnection.deliver_together(connection, 1))
    assert list(events) == [{"type": "session.created"}]
