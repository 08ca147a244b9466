"""Case 3 (livekit/agents #6964) replayed on a release's own OpenAI realtime session.

The session is the release's `RealtimeSession`, unchanged, talking over a real
socket to `impl.gated_server` (nothing moves unless the replay says so). The
replay takes the model's shortest counterexample of the configuration before
the fix and gives the session the same moves, one at a time:

* `call T`: the push, `session.update_chat_ctx` with the ids the model's task
  requests (messages with those ids; no agent activity: the case's pushes are
  replacements, which hand the session a context of their own);
* `server-apply`: the gated server handles the next item op (its own errors:
  a duplicate id, an unknown predecessor);
* `model-anchors-on-deleted`: `impl.gated_server_anchor.add_after_deleted`
  (beside a model under which the option is inert, its ordinary `model-creates`:
  the replay then checks the argument for inertness on the release);
* `client-apply`: the next item event is written to the socket;
* `resume`: the push returns; `learn` touches only the agent's local context,
  which the replay keeps itself (the request of a later call).

After each step the session's mirror (`chat_ctx`) and the server's items are
read and set beside the model's, stepped along under `config` (a move the model
does not enable there, as a send the fixed session never makes, is skipped on
both sides). At the end, `waiting` names the pushes still waiting for an answer
whose error or event has already been delivered: the report's stall.

Run it for another release with `python -m proofs.adapters.livekit.cases_b`
under a `PYTHONPATH` that starts with that release's folder (`run_release`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from attrs import asdict, frozen

from impl.gated_server import GatedConnection, GatedServer, is_item_event
from impl.gated_server_anchor import add_after_deleted
from model import Config, Move, MoveKind, State, initial_state, step
from model.cases import CASES_BY_NAME, Case
from proofs.adapters.livekit.releases import install_into, run_module
from proofs.engines.casebook import config_of
from proofs.engines.explore import explore
from proofs.errors import ReleaseUnavailable, UnsupportedConfig

CASE_NAME = "livekit-agents-6964"
ROOT = Path(__file__).resolve().parents[3]
CACHE = ROOT / ".cache" / "livekit"
#: What `pip install --no-deps --target` needs for a release the venv does not have.
REQUIREMENTS: dict[str, tuple[str, ...]] = {
    # 1.6.8 imports httpx, which the releases the extra pins replaced by httpx2
    "1.6.8": (
        "livekit-agents==1.6.8",
        "livekit==1.1.14",
        "livekit-plugins-openai==1.6.8",
        "httpx==0.28.1",
        "httpcore==1.0.9",
    ),
    # the first releases with livekit/agents #6729 (refusals settle) and #6964 (tail)
    "1.6.9": (
        "livekit-agents==1.6.9",
        "livekit==1.1.14",
        "livekit-plugins-openai==1.6.9",
        "httpx==0.28.1",
        "httpcore==1.0.9",
    ),
    "1.7.1": (
        "livekit-agents==1.7.1",
        "livekit==1.1.15",
        "livekit-plugins-openai==1.7.1",
        "httpx==0.28.1",
        "httpcore==1.0.9",
    ),
}


@frozen
class StepView:
    """One replayed move: what the session's mirror and the server hold after it,
    beside the model's."""

    move: str
    mirror: tuple[str, ...]
    model_mirror: tuple[str, ...]
    server: tuple[str, ...]
    model_server: tuple[str, ...]

    @property
    def agrees(self) -> bool:
        """The same items as the model (invariant 3 compares items, not order)."""
        return sorted(self.mirror) == sorted(self.model_mirror) and sorted(self.server) == sorted(
            self.model_server
        )


@frozen
class Replay:
    release: str
    fix: str
    steps: tuple[StepView, ...]
    #: Moves of the trace the configuration does not enable (skipped on both sides).
    skipped: tuple[str, ...]
    #: The pushes still waiting at the end although every answer was delivered.
    waiting: tuple[int, ...]
    #: The codes of the error events the session was delivered.
    errors: tuple[str, ...]

    @property
    def agrees(self) -> bool:
        return all(view.agrees for view in self.steps)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["agrees"] = self.agrees
        # as JSON has it (lists), in-process and from a subprocess alike
        loaded: dict[str, Any] = json.loads(json.dumps(data))
        return loaded


def case() -> Case:
    return CASES_BY_NAME[CASE_NAME]


def before_trace(case_: Case) -> tuple[Move, ...]:
    """The model's shortest counterexample of invariant 6 before the fix, under the
    report's column (the second of the case)."""
    from model import Invariant

    environment = case_.environments[1]
    finding = explore(config_of(case_, case_.before, environment)).finding(
        Invariant.NO_WAIT_ON_SETTLED
    )
    assert finding.trace is not None, "the case's record expects a stall before the fix"
    return tuple(s.move for s in finding.trace.steps)


async def _until(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.005)
    return True


async def _pump(seconds: float = 0.05) -> None:
    """Let the session's receive loop and the sockets run for a moment."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        await asyncio.sleep(0.005)


async def _deliver_session_traffic(conn: GatedConnection) -> None:
    while conn.to_client and not is_item_event(conn.to_client[0]):
        await conn.deliver_next()


async def _settle(conn: GatedConnection, until: Callable[[], bool]) -> None:
    """Let everything through (set-up only) until `until` holds and all is quiet."""
    for _ in range(400):
        await _pump(0.01)
        if conn.to_server:
            conn.apply_next()
        elif conn.to_client:
            await conn.deliver_next()
        elif until():
            return
    raise UnsupportedConfig("the set-up of the replay did not settle")


def _message(llm: Any, item: str) -> Any:
    role = "assistant" if item.startswith("asst") else "user"
    return llm.ChatMessage(id=item, role=role, content=[f"text of {item}"])


def _context(llm: Any, ids: Sequence[str]) -> Any:
    return llm.ChatContext([_message(llm, item) for item in ids])


def _model_item(item: str) -> dict[str, Any]:
    return {
        "id": item,
        "object": "realtime.item",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": f"text of {item}"}],
    }


async def replay(config: Config, fix: str, moves: Sequence[Move]) -> Replay:
    """The moves on the installed release's session, beside the model under `config`."""
    from livekit.agents import llm
    from livekit.plugins.openai import realtime

    version = _installed()
    async with GatedServer(max_lifetime=120.0) as server:
        model = realtime.RealtimeModel(
            base_url=server.base_url, api_key="x", modalities=["text"], turn_detection=None
        )
        session = model.session()
        handled = _count_handlers(session)
        pushes: dict[int, asyncio.Task[None]] = {}
        errors: list[str] = []
        try:
            await _until(lambda: bool(server.connections) and bool(server.current.to_server))
            conn = server.current
            seeding = asyncio.ensure_future(
                session.update_chat_ctx(_context(llm, config.scenario.server))
            )
            await _settle(conn, seeding.done)
            seeding.result()
            state = initial_state(config)
            views: list[StepView] = []
            skipped: list[str] = []
            for move in moves:
                try:
                    after = step(state, config, _model_move(config, move))
                except ValueError:
                    skipped.append(move.label())
                    continue
                await _act(session, conn, llm, state, after, move, pushes, errors, handled)
                state = after
                views.append(
                    StepView(
                        move.label(),
                        tuple(str(item.id) for item in session.chat_ctx.items),
                        state.mirror,
                        conn.conversation.ids(),
                        state.server,
                    )
                )
            await _pump(0.3)
            waiting = tuple(sorted(index for index, push in pushes.items() if not push.done()))
            return Replay(version, fix, tuple(views), tuple(skipped), waiting, tuple(errors))
        finally:
            for push in pushes.values():
                push.cancel()
            with contextlib.suppress(Exception):
                await session.aclose()
            with contextlib.suppress(Exception):
                await model.aclose()


async def _act(
    session: Any,
    conn: GatedConnection,
    llm: Any,
    before: State,
    after: State,
    move: Move,
    pushes: dict[int, asyncio.Task[None]],
    errors: list[str],
    handled: list[int],
) -> None:
    kind = move.kind
    if kind is MoveKind.CALL:
        assert move.task is not None
        task = after.tasks[move.task]
        ids = task.request if task.request is not None else after.local
        push = pushes[move.task] = asyncio.ensure_future(
            session.update_chat_ctx(_context(llm, ids))
        )
        sent = len(after.to_server) - len(before.to_server)
        await _until(lambda: conn.item_ops() >= len(after.to_server) or push.done())
        if sent == 0:
            await _until(push.done)
        conn.apply_session_traffic()
    elif kind in (MoveKind.SERVER_APPLY, MoveKind.SERVER_REJECT):
        conn.apply_session_traffic()
        if kind is MoveKind.SERVER_APPLY:
            conn.apply_next()
        else:
            conn.reject_next()
    elif kind is MoveKind.MODEL_ANCHORS_ON_DELETED:
        assert move.item is not None
        # as the model names it: the last by name of the deleted items the server lacks
        conversation = conn.conversation
        gone = sorted(item for item in conversation.removed if item not in conversation.ids())
        add_after_deleted(conn, _model_item(move.item), gone[-1])
    elif kind is MoveKind.CLIENT_APPLY:
        await _deliver_session_traffic(conn)
        before_count = handled[0]
        event = await conn.deliver_next()
        if event.get("type") == "error":
            errors.append(str(event.get("error", {}).get("code")))
        # the session's receive loop has run the event's handler (and what it resolved)
        if not await _until(lambda: handled[0] > before_count):
            raise UnsupportedConfig(f"the session never handled {event.get('type')}")
        await _pump(0.01)
    elif kind is MoveKind.RESUME:
        assert move.task is not None
        await _until(pushes[move.task].done)
    elif kind is MoveKind.LEARN:
        pass  # the agent's local context is the replay's own: the next call's request
    else:
        raise UnsupportedConfig(f"the case 3 replay has no counterpart of {kind.value}")
    await _pump(0.02)


#: The session's handlers of the events a replay delivers (the same names in 1.6.8
#: and 1.8.9); each is wrapped on the instance to count its calls.
_HANDLERS = (
    "_handle_conversion_item_added",
    "_handle_conversion_item_deleted",
    "_handle_error",
)


def _count_handlers(session: Any) -> list[int]:
    """A counter the session's item-event and error handlers bump once they return."""
    count = [0]
    for name in _HANDLERS:
        original = getattr(session, name)

        def counted(event: Any, _original: Any = original) -> None:
            try:
                _original(event)
            finally:
                count[0] += 1

        setattr(session, name, counted)
    return count


def _model_move(config: Config, move: Move) -> Move:
    """The model's move for `move`: where `stale-anchors` is inert (the item goes to
    the tail, docs/model.md), the ordinary announcement, which the argument for
    inertness says ends in the same mirror; the replay checks that it does."""
    if move.kind is MoveKind.MODEL_ANCHORS_ON_DELETED and not config.stale_anchors():
        return Move(MoveKind.MODEL_CREATES, None, move.item)
    return move


def _installed() -> str:
    import importlib.metadata

    return importlib.metadata.version("livekit-agents")


def replay_fix(fix_name: str) -> Replay:
    """The before trace on the installed release, beside the model of `fix_name`."""
    case_ = case()
    fix = next(f for f in case_.configurations if f.name == fix_name)
    config = config_of(case_, fix, case_.environments[1])
    return asyncio.run(replay(config, fix_name, before_trace(case_)))


def ensure_release(version: str, cache: Path = CACHE) -> Path:
    """Install `version` under the cache once (`releases.install_into`)."""
    return install_into(cache / version, REQUIREMENTS[version])[0]


def run_release(version: str, fix_name: str) -> dict[str, Any]:
    """`replay_fix(fix_name)` against release `version`, in a subprocess."""
    result = run_module(
        ensure_release(version), ["proofs.adapters.livekit.cases_b", "--fix", fix_name]
    )
    if result.returncode != 0:
        raise ReleaseUnavailable(
            f"the case 3 replay on {version} failed: {result.stderr.strip()[-3000:]}"
        )
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m proofs.adapters.livekit.cases_b")
    parser.add_argument("--fix", default="before")
    args = parser.parse_args(argv)
    print(json.dumps(replay_fix(args.fix).to_json()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
