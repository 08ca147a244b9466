"""Casebook cases 1, 2 and 4 replayed on the released OpenAI realtime session.

A model counterexample becomes a script (`script_of`): the server's items that
reach the session's mirror, the function calls and turns the agent learns, and
each push of the application's context. `drive` runs the script on a release's
own code: its `RemoteChatContext` is the mirror, its `_handle_response_output_item_done`
hands the agent each function call (under the id the release gives it), and its
`_create_update_chat_ctx_events` computes each push's ops. Nothing is sent over a
socket: the session object is a stand-in holding only what those methods read,
so the replay checks the session's diff and ids, not its websocket or locks.

The installed release (1.8.9) runs in-process. livekit-agents 1.4.2 (before
livekit/agents #4876 and #5887), 1.4.4 (the first with #4876) and 1.6.5 (the
first with #5887) are each installed under `.cache/livekit/<version>` as the
other releases are (`releases.py`), with the packages they need that 1.8.9 does
not (httpx, httpcore). One subprocess imports the dependencies they share and
forks a child per release, which runs every replay asked of it (`run_releases`,
`main`).

Nothing here imports livekit at module level.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import types
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from model import Config, MoveKind, OpKind
from model.moves import fresh_id
from model.scenarios import ItemKind
from model.sites import RequestSource
from proofs.adapters.livekit.releases import (
    CACHE,
    install_into,
    installed_version,
    run_module,
)
from proofs.engines.trace import Trace
from proofs.errors import ReleaseUnavailable

#: The release before #4876 and #5887.
BEFORE = "1.4.2"
#: The releases replayed in a subprocess, and what `pip install --no-deps` needs for
#: each beside the installed release's dependencies: 1.4.2 (before #4876 and #5887),
#: 1.4.4 (the first with #4876) and 1.6.5 (the first with #5887). Each imports httpx,
#: which the installed release replaced. Each pins an older livekit (rtc) build, and
#: runs on the installed one instead: the replay reads no room, track or frame, so
#: the pin does not reach it, and all three fork from one process (`main`).
REQUIREMENTS: dict[str, tuple[str, ...]] = {
    "1.4.2": (
        "livekit-agents==1.4.2",
        "livekit-plugins-openai==1.4.2",
        "httpx==0.28.1",
        "httpcore==1.0.9",
    ),
    "1.4.4": (
        "livekit-agents==1.4.4",
        "livekit-plugins-openai==1.4.4",
        "httpx==0.28.1",
        "httpcore==1.0.9",
    ),
    "1.6.5": (
        "livekit-agents==1.6.5",
        "livekit-plugins-openai==1.6.5",
        "httpx==0.28.1",
        "httpcore==1.0.9",
    ),
}
#: One action of a script: ("mirror", item, kind, after), ("learn", item, kind),
#: ("push", task, drops, adds); items by their model names.
Action = list[Any]


def script_of(config: Config, trace: Trace) -> tuple[list[Action], list[list[list[str]]]]:
    """The actions of `trace` that the session's code sees, and the model's ops of each
    push (as [kind, item] pairs), in order."""
    scenario = config.scenario
    actions: list[Action] = []
    model_ops: list[list[list[str]]] = []
    state = trace.start
    for step in trace.steps:
        move, after = step.move, step.state
        if move.kind is MoveKind.CLIENT_APPLY and move.task is None and move.item is not None:
            event = state.to_client[0]
            kind = scenario.kind(move.item).value
            actions.append(["mirror", move.item, kind, event.after])
        elif move.kind is MoveKind.LEARN and move.item is not None:
            actions.append(["learn", move.item, scenario.kind(move.item).value])
        elif move.kind is MoveKind.CALL and move.task is not None:
            if config.site(move.task).request is not RequestSource.CALLER_COPY:
                raise ReleaseUnavailable("only the application's replacement is replayed here")
            call = config.call(move.task)
            actions.append(["push", move.task, list(call.drops), list(call.adds)])
            sent = after.to_server[len(state.to_server) :]
            model_ops.append([[op.kind.value, op.item] for op in sent])
        state = after
    return actions, model_ops


def initial_items(config: Config) -> dict[str, list[list[str]]]:
    """The scenario's server conversation and local context, each item with its kind."""
    scenario = config.scenario
    return {
        "server": [[i, scenario.kind(i).value] for i in scenario.server],
        "local": [[i, scenario.kind(i).value] for i in scenario.initial_local],
    }


def model_names(config: Config, ops: list[list[str]], fresh: dict[str, str]) -> list[list[str]]:
    """A release's ops with the ids it gave function calls renamed to the model's
    `fresh_id` names, so they compare with the model's ops."""
    back = {given: fresh_id(item) for item, given in fresh.items() if given != item}
    return [[kind, back.get(item, item)] for kind, item in ops]


# -- the release's side --------------------------------------------------------------


def _realtime() -> types.ModuleType:
    """The release's OpenAI realtime module: in livekit-agents itself from 1.8, else
    in the OpenAI plugin."""
    import importlib

    try:
        return importlib.import_module("livekit.agents.llm._realtime.openai")
    except ImportError:
        return importlib.import_module("livekit.plugins.openai.realtime.realtime_model")


def _item(llm: Any, item: str, kind: str) -> Any:
    if kind == ItemKind.FUNCTION_CALL.value:
        return llm.FunctionCall(id=item, call_id=f"{item}-call", name="lookup", arguments="{}")
    if kind == ItemKind.EMPTY_MESSAGE.value:
        return llm.ChatMessage(id=item, role="user", content=[])
    return llm.ChatMessage(id=item, role="user", content=[f"text of {item}"])


def _handed_to_agent(module: Any, session: Any, item: str) -> Any:
    """The function call the release hands the agent for the server's item `item`."""
    from livekit.agents import utils

    generation = object.__new__(getattr(module, "_ResponseGeneration", object))
    generation.function_ch = utils.aio.Chan()
    generation.messages = {}
    session._current_generation = generation
    call = module.RealtimeConversationItemFunctionCall.model_construct(
        id=item, type="function_call", call_id=f"{item}-call", name="lookup", arguments="{}"
    )
    event = module.ResponseOutputItemDoneEvent.model_construct(
        type="response.output_item.done", event_id="ev", output_index=0, response_id="r", item=call
    )
    module.RealtimeSession._handle_response_output_item_done(session, event)
    return generation.function_ch.recv_nowait()


def _stand_in(module: Any, remote: Any) -> Any:
    """A session object with the release's own methods bound and only the state they read."""
    session = types.SimpleNamespace(_remote_chat_ctx=remote, _current_generation=None)
    for name in ("_handle_function_call",):
        method = getattr(module.RealtimeSession, name, None)
        if method is not None:
            setattr(session, name, types.MethodType(method, session))
    return session


def _ops(events: list[Any]) -> list[list[str]]:
    def field(event: Any, name: str) -> Any:
        return event[name] if isinstance(event, dict) else getattr(event, name)

    out: list[list[str]] = []
    for event in events:
        if field(event, "type") == "conversation.item.delete":
            out.append([OpKind.DELETE.value, field(event, "item_id")])
        else:
            out.append([OpKind.CREATE.value, field(field(event, "item"), "id")])
    return out


def drive(start: dict[str, list[list[str]]], actions: list[Action]) -> dict[str, Any]:
    """Run a script on the release on this interpreter's path: each push's ops and the
    id the agent was given for each function call it learned."""
    from livekit.agents import __version__, llm
    from livekit.agents.llm.remote_chat_context import RemoteChatContext

    module = _realtime()
    remote = RemoteChatContext()
    previous: str | None = None
    for item, kind in start["server"]:
        remote.insert(previous, _item(llm, item, kind))
        previous = item
    local = [_item(llm, item, kind) for item, kind in start["local"]]
    session = _stand_in(module, remote)
    pushes: list[list[list[str]]] = []
    fresh: dict[str, str] = {}
    for action in actions:
        if action[0] == "mirror":
            _, item, kind, after = action
            remote.insert(after, _item(llm, item, kind))
        elif action[0] == "learn":
            _, item, kind = action
            if kind == ItemKind.FUNCTION_CALL.value:
                call = _handed_to_agent(module, session, item)
                fresh[item] = call.id
                local.append(call)
            else:
                local.append(_item(llm, item, kind))
        else:
            _, _, drops, adds = action
            copy = [i for i in local if i.id not in drops]
            copy += [_item(llm, item, ItemKind.MESSAGE.value) for item in adds]
            events = module.RealtimeSession._create_update_chat_ctx_events(
                session, llm.ChatContext(copy)
            )
            pushes.append(_ops(list(events)))
            local = copy
    return {"release": __version__, "pushes": pushes, "fresh": fresh}


# -- running it ---------------------------------------------------------------------


def ensure_release(version: str, cache: Path = CACHE) -> tuple[Path, float]:
    """Install release `version` under the cache (once); its folder and the seconds."""
    return install_into(cache / version, REQUIREMENTS[version])


def run(version: str, replays: list[tuple[Config, Trace]]) -> list[dict[str, Any]]:
    """Replay each (config, trace) on release `version` (`run_releases` for one)."""
    return run_releases([version], replays)[version]


def _run_others(groups: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The subprocess that replays every release not installed (`main`)."""
    result = run_module(None, ["proofs.adapters.livekit.cases_a"], json.dumps(groups))
    if result.returncode != 0:
        raise ReleaseUnavailable(
            f"the livekit-agents replay of {', '.join(g['version'] for g in groups)} "
            f"failed: {result.stderr.strip()[-3000:]}"
        )
    reports: list[list[dict[str, Any]]] = json.loads(result.stdout)
    return dict(zip((g["version"] for g in groups), reports, strict=True))


def run_releases(
    versions: Sequence[str], replays: list[tuple[Config, Trace]]
) -> dict[str, list[dict[str, Any]]]:
    """Replay each (config, trace) on each release in `versions`: the installed one
    in-process, every other one (each in `REQUIREMENTS`) from one subprocess for
    all of them, one forked child per release (`main`). Each report adds "model" (the
    model's ops per push) and "renamed" (the release's ops under the model's names)."""
    scripts = [(initial_items(config), *script_of(config, trace)) for config, trace in replays]
    requests: list[dict[str, Any]] = [
        {"start": start, "actions": actions} for start, actions, _ in scripts
    ]
    installed = installed_version()
    unknown = [v for v in versions if v != installed and v not in REQUIREMENTS]
    if unknown:
        raise ReleaseUnavailable(f"no replay of casebook cases on livekit-agents {unknown[0]}")
    found: dict[str, list[dict[str, Any]]] = {}
    groups: list[dict[str, Any]] = [
        {"version": v, "path": str(ensure_release(v)[0]), "requests": requests}
        for v in versions
        if v != installed
    ]
    with ThreadPoolExecutor(max_workers=1) as pool:
        # the other releases' subprocess runs while this one replays the installed
        other = pool.submit(_run_others, groups) if groups else None
        if installed in versions:
            assert installed is not None
            # the release's channels bind to the current event loop, and an earlier
            # asyncio.run in this process leaves none: the replay gets one of its own
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            try:
                found[installed] = [drive(r["start"], r["actions"]) for r in requests]
            finally:
                asyncio.set_event_loop(None)
                loop.close()
        if other is not None:
            found.update(other.result())
    for version in versions:
        for report, (config, _), (_, _, model_ops) in zip(
            found[version], replays, scripts, strict=True
        ):
            if report["release"] != version:
                raise ReleaseUnavailable(
                    f"the replay ran livekit-agents {report['release']}, not {version}"
                )
            report["model"] = model_ops
            report["renamed"] = [
                model_names(config, ops, report["fresh"]) for ops in report["pushes"]
            ]
    return {v: found[v] for v in versions}


#: The installed dependencies the releases import, and that make up most of a
#: release's import time (the openai SDK's type modules the most); none is in a
#: release's folder (`REQUIREMENTS`). One the installed openai lacks is skipped.
_SHARED = (
    "openai",
    "openai.types.realtime",
    "openai.types.beta.realtime",
    "openai.types.chat",
    "openai.types.responses",
    "openai.types.audio",
    "aiohttp",
    "numpy",
    "pydantic",
)


def _replay_in_child(group: dict[str, Any]) -> list[dict[str, Any]]:
    """Replay one release's scripts in a forked child of this process: the child puts
    the release first on its path and imports it afresh; its reports come back
    through a pipe."""
    import os
    import traceback

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read)
        code = 0
        try:
            sys.path.insert(0, group["path"])
            data = json.dumps([drive(r["start"], r["actions"]) for r in group["requests"]])
            with os.fdopen(write, "w") as pipe:
                pipe.write(data)
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            sys.stderr.flush()
            os._exit(code)
    os.close(write)
    with os.fdopen(read) as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    if status != 0:
        raise SystemExit(f"the livekit-agents {group['version']} replay failed")
    reports: list[dict[str, Any]] = json.loads(data)
    return reports


def main() -> None:
    """`python -m proofs.adapters.livekit.cases_a`: on stdin a list of releases (their
    folder and scripts); on stdout each one's reports. This process imports the
    shared dependencies once (`_SHARED`), then forks one child per release, which
    imports only that release's livekit-agents and OpenAI plugin: no release sees
    another's modules, and the import time common to all is paid once."""
    import importlib

    groups = json.load(sys.stdin)
    for name in _SHARED:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    json.dump([_replay_in_child(group) for group in groups], sys.stdout)


if __name__ == "__main__":
    main()
