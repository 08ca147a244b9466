"""Case 5 (livekit/agents-js #1843) replayed on the released agents-js session.

The session is `RealtimeSession` of `@livekit/agents-plugin-openai` 1.7.0 with
`@livekit/agents` 1.7.0, unchanged, run by node (`js/driver.mjs`, installed with
`npm ci` from the committed lock under `.cache/agents-js/<version>`). It talks
over a real socket to `impl.gated_server`, and Python steers both, one move of
the model's counterexample at a time (JSON lines over the driver's stdin and
stdout):

* set-up: the session pushes [msg0, call1] and every event goes through, so the
  server conversation and the session's mirror both hold the case's start (call1
  reaches the mirror through the session's own item event, as a call the model
  made does; how it got to the server does not enter the case);
* `disconnect`: the gated server drops the socket (code 1011). The JS session
  opens a new one at once and sends its rebuild; no view is read here, since the
  JS session has no state between the two moves;
* `connect`: the new server applies the rebuild's creates (the model puts the
  rebuild on the new server at once); their events wait at the gate. Then the
  driver queues one client event that is no item op (`input_audio_buffer.clear`):
  the JS session loses the first event queued after a reconnect (`_Run.filler`),
  and a live session's first one is audio, so the push that follows is sent as it
  would be there;
* `call T` (the tool-outputs site): the driver does what `AgentActivity` of
  @livekit/agents 1.7.0 does when a tool returns: it copies the session's chat
  context, appends the output, and calls `updateChatCtx` with that copy. The
  agent's local context gets the output before the push, as that code does; the
  replay keeps the local context itself;
* `server-apply`: the gated server handles the next item op. The gated server has
  no rule for function outputs, so the replay adds the one the case rests on: a
  `function_call_output` whose `call_id` no function call in the conversation
  carries is refused with an `error` naming the create's event id (the code,
  `ORPHAN_OUTPUT`, is ours, not OpenAI's);
* `client-apply`: the next item event (or error) is written to the socket, and
  the replay waits until the session has received it;
* `resume`: the push returns.

After each move (but `disconnect`) the session's mirror and the server's items
are set beside the model's. At the end `lost` names the items the local context
holds that reached some server conversation and are not on the last one (as
`reconnect.ReconnectOutcome` reads the Python plugin), and `refused` the items
the server refused.

Nothing here imports livekit; node and npm are needed only to run a replay.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from attrs import asdict, frozen

from impl.gated_server import GatedConnection, GatedServer, is_item_event
from model import Config, Invariant, Move, MoveKind, State, initial_state, step
from model.cases import CASES_BY_NAME, Case
from model.scenarios import ItemKind
from model.sites import RequestSource
from proofs.adapters.livekit.cases_b import StepView
from proofs.adapters.livekit.releases import ROOT, npm_install_into
from proofs.engines.casebook import config_of
from proofs.errors import ReleaseUnavailable, UnsupportedConfig

CASE_NAME = "agents-js-1843"
#: The agents-js release the committed lock pins (both packages).
AGENTS_JS = "1.7.0"
PACKAGE = Path(__file__).resolve().parent / "js"
CACHE = ROOT / ".cache" / "agents-js"
#: The error code the replay's server gives an output whose call it lacks.
ORPHAN_OUTPUT = "item_create_unknown_call_id"


@frozen
class JsReplay:
    """What the released JS session did with one trace, beside the model."""

    #: The versions of @livekit/agents and @livekit/agents-plugin-openai that ran.
    release: tuple[str, str]
    fix: str
    steps: tuple[StepView, ...]
    #: Items the local context holds that reached a server and are not on the last.
    lost: tuple[str, ...]
    #: Items the server refused (an output with no call to answer).
    refused: tuple[str, ...]
    #: How each push ended: "fulfilled", or "rejected: REASON".
    pushes: tuple[str, ...]
    #: The release's own warnings and errors, by message.
    logged: tuple[str, ...]
    local: tuple[str, ...]
    mirror: tuple[str, ...]
    server: tuple[str, ...]
    connections: int
    #: The stand-in events queued after a reconnect (`_Run.filler`) that the session
    #: never wrote to any socket.
    unsent_fillers: int

    @property
    def agrees(self) -> bool:
        return all(view.agrees for view in self.steps)

    @property
    def broken(self) -> frozenset[Invariant]:
        """The invariant the case is judged on, read off the real run."""
        return frozenset({Invariant.AGREEMENT_AT_REST}) if self.lost else frozenset()

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(json.dumps(asdict(self)))
        data["agrees"] = self.agrees
        return data


def node_missing() -> str | None:
    """Why a replay cannot run here (node or npm not on the PATH), or None."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            return f"{tool} is not on the PATH (the agents-js replay needs node 20 and npm)"
    return None


def ensure_release(cache: Path = CACHE) -> tuple[Path, float]:
    """`npm ci` the pinned agents-js release under the cache (once): folder, seconds."""
    return npm_install_into(cache / AGENTS_JS, PACKAGE)


def installed_versions(install: Path) -> tuple[str, str]:
    """The versions of the two packages installed under `install`, read off disk."""
    found = []
    for name in ("agents", "agents-plugin-openai"):
        meta = install / "node_modules" / "@livekit" / name / "package.json"
        found.append(str(json.loads(meta.read_text())["version"]))
    return found[0], found[1]


def case() -> Case:
    return CASES_BY_NAME[CASE_NAME]


def model_lost(state: State) -> tuple[str, ...]:
    """The model's counterpart of `JsReplay.lost` in a state at rest."""
    return tuple(i for i in state.local if i in state.reached and i not in state.server)


def before_trace(config: Config, limit: int = 100_000) -> tuple[Move, ...]:
    """The model's shortest run under `config` that drops the connection once, pushes
    the tool output after the reconnect, comes to rest, and breaks agreement-at-rest.

    The explorer's shortest counterexample stops at the rebuild (call1 is lost
    before any output is pushed); this one goes on through the push the report is
    about, so the replay shows what the release does with the output too.
    """
    from collections import deque

    from model import check, successors
    from model.state import Pc

    def at_rest(state: State) -> bool:
        return (
            state.connected is True
            and not state.to_server
            and not state.to_client
            and all(t.pc in (Pc.DONE, Pc.FAILED) for t in state.tasks)
        )

    start = initial_state(config)
    #: phase 0: not dropped yet; 1: dropped (and maybe back); 2: pushed after the connect
    seen = {(start, 0)}
    queue: deque[tuple[State, int, tuple[Move, ...]]] = deque([(start, 0, ())])
    while queue:
        state, phase, moves = queue.popleft()
        violated = check(state, config, Invariant.AGREEMENT_AT_REST) is not None
        if phase == 2 and at_rest(state) and violated:
            return moves
        for move, after in successors(state, config):
            if move.kind is MoveKind.DISCONNECT:
                if phase:
                    continue
                nxt = 1
            elif move.kind is MoveKind.CALL:
                if phase != 1 or not after.connected:
                    continue
                nxt = 2
            else:
                nxt = phase
            if (after, nxt) in seen or len(seen) >= limit:
                continue
            seen.add((after, nxt))
            queue.append((after, nxt, (*moves, move)))
    raise UnsupportedConfig("no run pushes the output after a reconnect and loses an item")


class _Driver:
    """The node process: one command, one reply; the release's log lines kept apart."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.logged: list[str] = []

    @classmethod
    async def start(cls, install: Path) -> _Driver:
        process = await asyncio.create_subprocess_exec(
            "node",
            str(PACKAGE / "driver.mjs"),
            str(install),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=1 << 22,
        )
        return cls(process)

    async def call(self, cmd: str, **args: Any) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write((json.dumps({"cmd": cmd, **args}) + "\n").encode())
        await self.process.stdin.drain()
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), 30.0)
            if not line:
                raise ReleaseUnavailable(f"the agents-js driver exited: {await self._stderr()}")
            try:
                data = json.loads(line)
            except ValueError:
                self.logged.append(line.decode().strip())
                continue
            if isinstance(data, dict) and "reply" in data:
                reply: dict[str, Any] = data["reply"]
                if "error" in reply:
                    raise ReleaseUnavailable(f"the agents-js driver failed {cmd}: {reply['error']}")
                return reply
            msg = data.get("msg") if isinstance(data, dict) else None
            self.logged.append(str(msg if msg is not None else data))

    async def _stderr(self) -> str:
        assert self.process.stderr is not None
        return (await self.process.stderr.read()).decode().strip()[-3000:]

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.call("close"), 10.0)
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
        await self.process.wait()


async def _until(condition: Callable[[], Any], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not await condition():
        if time.monotonic() > deadline:
            raise UnsupportedConfig("the agents-js session did not get there in time")
        await asyncio.sleep(0.005)


def _orphan(conn: GatedConnection, event: dict[str, Any]) -> bool:
    """An output create whose call no function call on the conversation carries."""
    item = event.get("item") or {}
    if event.get("type") != "conversation.item.create" or item.get("type") != (
        "function_call_output"
    ):
        return False
    calls = {i.get("call_id") for i in conn.conversation.items if i.get("type") == "function_call"}
    return item.get("call_id") not in calls


def _apply(conn: GatedConnection, refused: list[str]) -> None:
    """The server handles the next item op, refusing an orphaned output."""
    conn.apply_session_traffic()
    event = conn.to_server[0]
    if not _orphan(conn, event):
        conn.apply_next()
        return
    conn.to_server.popleft()
    conn.conversation.handled += 1
    refused.append(str(event["item"]["id"]))
    conn.error(
        event.get("event_id"), ORPHAN_OUTPUT, "no function call in the conversation has this id"
    )


class _Run:
    """One replay's server, driver and bookkeeping."""

    def __init__(self, config: Config, server: GatedServer, driver: _Driver, install: Path) -> None:
        self.config = config
        self.install = install
        self.server = server
        self.driver = driver
        self.refused: list[str] = []
        #: How many stand-in events were queued (`filler`).
        self.fillers = 0
        self.local = list(config.scenario.initial_local)

    @property
    def conn(self) -> GatedConnection:
        return self.server.current

    async def state(self) -> dict[str, Any]:
        return await self.driver.call("state")

    async def received_all(self) -> bool:
        written = sum(len(c.written_log) for c in self.server.connections)
        return bool((await self.state())["received"] >= written)

    async def deliver(self) -> None:
        """Write the next event, the session traffic ahead of it first, and wait
        until the session has received everything written."""
        conn = self.conn
        while conn.to_client and not is_item_event(conn.to_client[0]):
            await conn.deliver_next()
        await conn.deliver_next()
        await _until(self.received_all)

    def spec(self, item: str) -> dict[str, str]:
        scenario = self.config.scenario
        kind = scenario.kind(item)
        spec = {"id": item, "kind": kind.value}
        if kind is ItemKind.FUNCTION_OUTPUT:
            calls = [i for i in scenario.items() if scenario.kind(i) is ItemKind.FUNCTION_CALL]
            if len(calls) != 1:
                raise UnsupportedConfig("an output is paired with the scenario's one call")
            spec["call"] = calls[0]
        return spec

    async def set_up(self) -> None:
        await _until(self._connected)
        seed = [self.spec(i) for i in self.config.scenario.server]
        await self.driver.call("push", items=seed)
        for _ in range(400):
            conn = self.conn
            if conn.to_server:
                conn.apply_next()
            elif conn.to_client:
                await conn.deliver_next()
            else:
                state = await self.state()
                if state["pushes"][0]["status"] != "pending" and await self.received_all():
                    break
            await asyncio.sleep(0.005)
        mirror = tuple((await self.state())["mirror"])
        if mirror != self.config.scenario.server or self.conn.conversation.ids() != mirror:
            raise UnsupportedConfig(f"the set-up ended with the mirror {mirror}")

    async def filler(self, conn: GatedConnection) -> None:
        """Queue one client event that is no item op (`outcome` counts the ones never sent).

        The JS session's sender of the dropped socket still waits on the session's
        queue (`runWs` races `messageChannel.get()` against its abort, and the
        abandoned `get` stays subscribed): the first event queued after the
        reconnect goes to it and is never sent. A live session queues audio all
        the time, so that event is an audio one; this one stands in for it, so
        that the push after it is sent as in a live session.
        """
        await self.driver.call("clear-audio")
        self.fillers += 1
        await asyncio.sleep(0.05)
        conn.apply_session_traffic()

    async def _connected(self) -> bool:
        return bool(self.server.connections)

    async def act(self, before: State, after: State, move: Move) -> None:
        kind = move.kind
        if kind is MoveKind.DISCONNECT:
            count = len(self.server.connections)
            await self.conn.drop()

            async def rebuilt() -> bool:
                return len(self.server.connections) > count and (
                    (await self.state())["reconnected"] >= count
                )

            await _until(rebuilt)
        elif kind is MoveKind.CONNECT:
            conn = self.conn

            async def rebuild_read() -> bool:
                return conn.item_ops() >= len(after.server)

            await _until(rebuild_read)
            conn.apply_session_traffic()
            while conn.to_server and conn.to_server[0].get("type") == "conversation.item.create":
                _apply(conn, self.refused)
            await self.filler(conn)
        elif kind is MoveKind.CALL:
            assert move.task is not None
            site = self.config.site(move.task)
            if site.request is not RequestSource.MIRROR_SNAPSHOT or site.name != "tool-outputs":
                raise UnsupportedConfig("only the tool-outputs push is replayed on agents-js")
            adds = self.config.call(move.task).adds
            self.local += list(adds)
            reply = await self.driver.call("tool-outputs", outputs=[self.spec(i) for i in adds])
            conn, index = self.conn, int(reply["push"])

            async def sent() -> bool:
                if len(after.to_server) > len(before.to_server):
                    return conn.item_ops() >= len(after.to_server)
                return bool((await self.state())["pushes"][index]["status"] != "pending")

            await _until(sent)
        elif kind is MoveKind.SERVER_APPLY:
            _apply(self.conn, self.refused)
        elif kind is MoveKind.SERVER_REJECT:
            self.conn.apply_session_traffic()
            self.conn.reject_next()
        elif kind is MoveKind.CLIENT_APPLY:
            await self.deliver()
        elif kind is MoveKind.RESUME:

            async def settled() -> bool:
                return all(p["status"] != "pending" for p in (await self.state())["pushes"])

            await _until(settled)
        else:
            raise UnsupportedConfig(f"the agents-js replay has no counterpart of {kind.value}")

    async def view(self, move: Move, state: State) -> StepView:
        mirror = tuple(str(i) for i in (await self.state())["mirror"])
        return StepView(
            move.label(), mirror, state.mirror, self.conn.conversation.ids(), state.server
        )

    async def outcome(self, fix: str, views: list[StepView]) -> JsReplay:
        final = await self.state()
        reached: set[str] = set()
        for conn in self.server.connections:
            reached |= conn.conversation.reached
        server = self.conn.conversation.ids()
        lost = tuple(i for i in self.local if i in reached and i not in server)
        pushes = tuple(
            p["status"] if p["status"] != "rejected" else f"rejected: {p['reason']}"
            for p in final["pushes"]
        )
        return JsReplay(
            release=installed_versions(self.install),
            fix=fix,
            steps=tuple(views),
            lost=lost,
            refused=tuple(self.refused),
            pushes=pushes,
            logged=tuple(self.driver.logged),
            local=tuple(self.local),
            mirror=tuple(final["mirror"]),
            server=server,
            connections=len(self.server.connections),
            unsent_fillers=self.fillers - int(final["sent"].get("input_audio_buffer.clear", 0)),
        )


async def replay(config: Config, fix: str, moves: Sequence[Move], install: Path) -> JsReplay:
    """The moves on the released JS session, beside the model under `config`."""
    async with GatedServer(max_lifetime=120.0) as server:
        driver = await _Driver.start(install)
        try:
            await driver.call("open", baseURL=server.base_url)
            run = _Run(config, server, driver, install)
            await run.set_up()
            state = initial_state(config)
            views: list[StepView] = []
            for move in moves:
                after = step(state, config, move)
                await run.act(state, after, move)
                state = after
                if move.kind is not MoveKind.DISCONNECT:
                    views.append(await run.view(move, state))
            await asyncio.sleep(0.05)
            return await run.outcome(fix, views)
        finally:
            await driver.stop()


def replay_fix(fix_name: str, moves: Sequence[Move], install: Path) -> JsReplay:
    """`moves` on the installed JS release, beside the model of `fix_name` under the
    case's reconnect column."""
    case_ = case()
    fix = next(f for f in case_.configurations if f.name == fix_name)
    config = config_of(case_, fix, case_.environments[-1])
    return asyncio.run(replay(config, fix_name, moves, install))
