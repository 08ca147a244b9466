"""`ackguard demo`: a short run over the loopback socket, its output, and its cleanup."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from websockets.asyncio.client import connect

from impl.ws_server import LoopbackServer
from proofs.adapters.impl import demo
from proofs.cli import main

FAST = ["--turns", "3", "--latency-ms", "3", "--jitter-ms", "1", "--seed", "7"]


def test_unlocked_loses_the_overlapping_tool_output_and_three_way_loses_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status = main(["demo", "--variant", "unlocked", "--variant", "three-way", "--json", *FAST])
    rows = {row["variant"]: row for row in json.loads(capsys.readouterr().out)}
    assert status == 0
    # every turn opens with a tool output and a user turn started while it waits
    assert rows["unlocked"]["lost"] >= 3
    assert rows["unlocked"]["unintended_deletes"] >= 3
    three_way = rows["three-way"]
    assert three_way["lost"] == three_way["unintended_deletes"] == three_way["resurrected"] == 0
    assert three_way["pushes"] == rows["unlocked"]["pushes"] > 0
    assert 0 < three_way["push_ms"]["p50"] <= three_way["push_ms"]["p99"]


def test_the_table_names_every_variant(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", *FAST, "--turns", "1"]) == 0
    out = capsys.readouterr().out
    assert "ws://127.0.0.1:" in out and "unintended deletes" in out
    for variant in ("unlocked", "lock3", "lock5", "lock5-hoisted", "three-way"):
        assert f"\n{variant} " in out


def test_bad_input_is_one_line_and_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--variant", "nope"]) == 2
    assert "choose from: unlocked" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main(["demo", "--latency-ms", "-1"])
    assert exit_.value.code == 2


def test_help_has_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    out = capsys.readouterr().out
    assert "examples:\n  ackguard demo " in out


async def _connect_fails(url: str) -> None:
    with pytest.raises(OSError):
        await connect(url, proxy=None, open_timeout=1)


def _run_and_stop(stop: Callable[[asyncio.Task[Any]], Awaitable[None]]) -> LoopbackServer:
    """Run the demo until `stop(task)` ends it; check that nothing is left behind."""
    servers: list[LoopbackServer] = []
    urls: list[str] = []

    def started(server: LoopbackServer) -> None:
        servers.append(server)
        urls.append(server.url)

    async def scenario() -> None:
        async with asyncio.timeout(10):
            task = asyncio.create_task(
                demo.run_demo(
                    ["unlocked"], turns=50, latency=0.01, jitter=0.0, seed=0, on_server=started
                )
            )
            await stop(task)
        assert asyncio.all_tasks() == {asyncio.current_task()}  # nothing left running
        await _connect_fails(urls[0])  # nothing left listening

    asyncio.run(scenario())
    assert all(conversation.closed for conversation in servers[0].conversations.values())
    return servers[0]


def test_ctrl_c_closes_the_server_and_the_connections() -> None:
    async def cancel(task: asyncio.Task[Any]) -> None:
        await asyncio.sleep(0.1)
        task.cancel()  # what asyncio.run does to the main task on SIGINT
        with pytest.raises(asyncio.CancelledError):
            await task

    assert _run_and_stop(cancel).conversations


def test_an_error_closes_the_server_and_the_connections(monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(self: demo.Agent, plan: demo.Round, *, window: float) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(demo.Agent, "play", broken)

    async def expect_error(task: asyncio.Task[Any]) -> None:
        with pytest.raises(RuntimeError, match="boom"):
            await task

    assert _run_and_stop(expect_error).conversations


def test_the_demo_server_has_no_lifetime_to_outlive() -> None:
    """`run_demo` closes its server itself, so a long run never meets a watchdog (with
    the one-hour lifetime it had, a longer run ended with exit 3)."""
    lifetimes: list[float | None] = []

    def started(server: LoopbackServer) -> None:
        lifetimes.append(server.settings.max_lifetime)

    tallies = asyncio.run(
        demo.run_demo(["unlocked"], turns=1, latency=0.0, jitter=0.0, seed=0, on_server=started)
    )
    assert lifetimes == [None] and len(tallies) == 1
