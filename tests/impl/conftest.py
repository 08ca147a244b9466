"""A small deterministic world for unit tests of `impl`: a controlled loop, a fake
server, a session and an activity, all driven step by step."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterable
from typing import Any, TypeVar

import pytest

from impl.activity import AgentActivity
from impl.chat_context import ChatContext, ChatItem, ChatMessage, FunctionCallOutput
from impl.fake_server import FakeServer
from impl.policy import POLICIES, SessionKind
from impl.session import RealtimeSession
from impl.three_way import ThreeWaySession
from proofs.engines.conformance.loop import ControlledLoop, new_loop

T = TypeVar("T")


def msg(item_id: str, role: str = "user") -> ChatMessage:
    return ChatMessage(item_id, role, f"text of {item_id}")  # type: ignore[arg-type]


def out(item_id: str) -> FunctionCallOutput:
    return FunctionCallOutput(item_id, f"call_{item_id}", "42")


class World:
    def __init__(self, items: Iterable[ChatItem] = (), policy: str = "lock5") -> None:
        items = tuple(items)
        self.loop: ControlledLoop = new_loop()
        with self.loop.running():
            self.server = FakeServer(items)
            kind = POLICIES[policy].session
            session_class = ThreeWaySession if kind is SessionKind.THREE_WAY else RealtimeSession
            self.session = session_class(
                self.server.transport, clock=self.server.clock, initial=items
            )
            self.session.start()
            self.activity = AgentActivity(
                self.session, policy=POLICIES[policy], chat_ctx=ChatContext(items)
            )
        self.settle()

    def spawn(self, coro: Coroutine[Any, Any, T], name: str | None = None) -> asyncio.Task[T]:
        with self.loop.running():
            task = self.loop.create_task(coro, name=name)
        self.settle()
        return task

    def settle(self) -> None:
        self.loop.run_until_blocked()

    def do(self, action: Any, *args: Any) -> None:
        """Call a control of the fake server (or anything), then let the tasks run."""
        with self.loop.running():
            action(*args)
        self.settle()

    def deliver_all(self) -> None:
        """Every op to the server and every event back, until nothing is in flight."""
        while not self.server.quiet():
            if self.server.to_server:
                self.do(self.server.deliver_to_server)
            else:
                self.do(self.server.deliver_to_client)


@pytest.fixture
def world() -> World:
    return World([msg("msg0")])
