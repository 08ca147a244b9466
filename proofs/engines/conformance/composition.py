"""The two halves joined: a `Framework` over the shared stand-in, as an `Adapter`.

The environment's moves (apply, reject, deliver, the model's item, a timeout)
go to the stand-in; the application's and the sites' moves go to the
framework; an `Observation` is the stand-in's `ServerView` beside the
framework's `FrameworkView`. `SiteTasks` is the bookkeeping most frameworks
share: one asyncio task per call, found again by the ops it sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import attrs

from model import Config
from proofs.engines.conformance.adapter import (
    Adapter,
    AdapterFactory,
    Framework,
    FrameworkFactory,
    Observation,
)


class Composed:
    """An `Adapter` made of a framework and the stand-in it talks to."""

    def __init__(self, framework: Framework) -> None:
        self.framework = framework

    def copy(self, task: int) -> None:
        self.framework.copy(task)

    def call(self, task: int) -> None:
        self.framework.call(task)

    def learn(self, item: str) -> None:
        self.framework.learn(item)

    def server_apply(self) -> None:
        self.framework.server.apply_next()

    def server_reject(self) -> None:
        self.framework.server.reject_next()

    def client_apply(self) -> None:
        self.framework.server.deliver_next()

    def model_creates(self, item: str) -> None:
        wire_id, payload = self.framework.server_item(item)
        self.framework.server.model_creates(wire_id, payload)

    def timeout(self, task: int) -> None:
        self.framework.server.clock.fire(self.framework.origin(task))

    def __getattr__(self, name: str) -> Any:
        # a framework that drives a connection (`Reconnecting`) lends its
        # disconnect and connect, and one that can create a call's items ahead of
        # it lends `born`; without them the harness says it has none
        if name in ("disconnect", "connect", "born"):
            return getattr(self.framework, name)
        raise AttributeError(name)

    def observe(self) -> Observation:
        framework = self.framework
        server = framework.server.view(framework.name, framework.who)
        mine = framework.observe()
        return Observation(
            **attrs.asdict(server, recurse=False), **attrs.asdict(mine, recurse=False)
        )

    def errors(self) -> list[str]:
        return self.framework.errors()

    def close(self) -> None:
        self.framework.close()


def compose(build: FrameworkFactory) -> AdapterFactory:
    """The adapter factory the engines take, from a framework factory."""

    def factory(config: Config) -> Adapter:
        return Composed(build(config))

    name = getattr(build, "__name__", type(build).__name__)
    factory.__doc__ = f"An adapter for each config: {name} joined to the shared stand-in."
    return factory


class SiteTasks:
    """One asyncio task per site call: who sent an op, whose timer fires, what raised."""

    def __init__(self) -> None:
        self.tasks: dict[int, asyncio.Task[None]] = {}

    def start(self, task: int, call: Coroutine[Any, Any, None]) -> None:
        """Run `call` as call `task`'s asyncio task."""
        self.tasks[task] = asyncio.get_running_loop().create_task(call, name=f"T{task}")

    def who(self, origin: object) -> int | None:
        for index, task in self.tasks.items():
            if task is origin:
                return index
        raise RuntimeError(
            f"an op was sent outside any site call ({origin!r}): send only from the tasks "
            "that `call` starts, or override `who`"
        )

    def origin(self, task: int) -> object:
        return self.tasks[task]

    def name(self, wire_id: str) -> str:
        return wire_id

    def errors(self) -> list[str]:
        return [
            f"T{index}: {task.exception()!r}"
            for index, task in sorted(self.tasks.items())
            if task.done() and not task.cancelled() and task.exception() is not None
        ]

    def close(self) -> None:
        for task in self.tasks.values():
            if not task.done():
                task.cancel()
