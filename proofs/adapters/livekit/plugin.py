"""The released livekit `AgentSession` over the real OpenAI plugin and the gated socket.

`PluginAdapter` is the livekit adapter (`adapter.LivekitAdapter`: the same
site drivers, the same attribution from the stack, the same naming of items)
with no stand-in under the session: the realtime model is the release's own
OpenAI `RealtimeModel` (`plugin_session`), connected over a real websocket to
`impl.gated_server.GatedServer`, on a `SocketLoop` (real sockets, virtual time).
Each model move is one gated delivery or one public call:

* server-apply: the server handles the next item op (`apply_next`);
* server-reject: the server answers the next item op with an `error` (`reject_next`);
* client-apply: the next item event is written to the socket (`deliver_next`),
  and the session applies it when it reads it;
* model-creates: the server adds a function call to the response it started
  at set-up;
* learn: the server finishes that call (`output_item.done`); the plugin yields
  it and the tool's start puts it in the local context;
* timeout: the push's own 5 s `asyncio.wait_for` timer fires
  (`SocketLoop.fire`), and no other;
* where the release model's interrupted generation ends on its done event
  (`InterruptionEnd.ON_DONE_EVENT`): server-apply of a cancel op is the server
  handling the `response.cancel` the interruption sent (it ends the response),
  and client-apply of the done event is that `response.done` written to the
  socket, after which the release's generation ends and its push runs.

Other session traffic (`session.update`, `response.create`, a second
`response.cancel`, the other `response.*` events, items outside the scenario)
is let through the gate in order as soon as it is at the head of its FIFO: the
model has no moves for it, and one websocket is one ordered stream, so it never
overtakes an item op or event. Under a model whose interrupted generation ends
at once (the catalog's records) the cancel and its done are such traffic too.
The server's half of the observation is read from the gated server's own
records; the session's half from the real session (`_remote_chat_ctx`, its
lock, its ack futures).

A `before-call` step is the adapter's `born`, as over the stand-in: an early
tool-output push's scripted response carries a second function call, whose tool
returns at the call.

Two interrupted generations run one after the other, as livekit's speech
scheduler runs them (`model.sites.SpeechTurn`): the one whose never-played
message is on the server is the set-up's; the other is a real reply started at
its call (a second cleanup's generation makes its message then,
`Call.made_at_call`). Two never-played messages at the start are refused.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from impl.gated_server import Call, GatedConnection, GatedServer, Message, Response, is_item_op
from model import Config, EventKind, Move, OpKind
from model.state import RESPONSE
from proofs.adapters.livekit.adapter import SECOND_TOOL, LivekitAdapter
from proofs.adapters.livekit.plugin_session import ObservedModel, SentOp
from proofs.adapters.livekit.replay import (
    Outcome,
    _outcome,
    early_calls,
    give_until_stuck,
    quiet_close,
)
from proofs.adapters.livekit.socket_loop import new_socket_loop
from proofs.engines.conformance.adapter import EventView, OpView
from proofs.engines.conformance.follow import Follow
from proofs.errors import SetupError, UnsupportedConfig

__all__ = ["PluginAdapter", "PluginFollow", "plugin_adapter", "run_plugin"]

log = logging.getLogger("ackguard.livekit.plugin")

#: The sites whose generation is interrupted (a scenario may have one of them here).
_INTERRUPTIBLE = frozenset({"cleanup", "interrupted-tool-outputs"})

#: The ack wait of the OpenAI session's update_chat_ctx, in seconds (the release's own).
ACK_TIMEOUT = 5.0


class PluginAdapter(LivekitAdapter):
    """The livekit adapter over the real OpenAI plugin (see the module docstring)."""

    def __init__(self, config: Config, early: frozenset[int] = frozenset()) -> None:
        calls = config.scenario.calls
        interruptible = [i for i, c in enumerate(calls) if c.site in _INTERRUPTIBLE]
        if sum(1 for i in interruptible if calls[i].drops and not calls[i].made_at_call) > 1:
            raise UnsupportedConfig(
                "two never-played messages on the server at the start need two generations "
                "current at once; the speech scheduler runs one at a time (not driven here)"
            )
        #: Interrupted generations started at their call, not in the set-up: with
        #: two in a scenario the scheduler runs them one after the other
        #: (`SpeechTurn`), so the later one starts once the turn is free. The one
        #: whose message is on the server at the start is the set-up's; a cleanup
        #: whose message is made at its call (`Call.made_at_call`) is deferred.
        self.deferred = (
            frozenset(i for i in interruptible if not calls[i].drops or calls[i].made_at_call)
            if len(interruptible) > 1
            else frozenset()
        )
        self._delivering: asyncio.Task[Any] | None = None
        #: Whether the cancel of an interruption and its done are the model's op and
        #: event (gated) rather than session traffic (set in `_wire_cancels`).
        self.gates_cancels = False
        super().__init__(config, direct=frozenset(), early=early)
        self.loop.on_blocked = self._release_background

    def _later_generations(self) -> frozenset[int]:
        """None: the plugin's deferred generations are `deferred` (see `call`)."""
        return frozenset()

    # -- the provider: the gated server and the release's own OpenAI model --------------

    def _provider(self) -> Any:
        self.gated = GatedServer(max_lifetime=600.0)
        with self.loop.running():
            starting = self.loop.create_task(self.gated.start())
        self.loop.run_until(starting.done)
        starting.result()
        return ObservedModel(self.gated.base_url)

    @property
    def conn(self) -> GatedConnection:
        return self.gated.current

    def _await_connection(self) -> None:
        self.loop.run_until(lambda: bool(self.gated.connections) and bool(self.conn.to_server))

    def _initial_local(self) -> tuple[str, ...]:
        """The scenario's start less a cleanup's never-played messages: over the
        plugin each is made by its generation on the server, and the activity's
        placeholder handler adds it locally where the scenario starts with it
        (`_check_setup` confirms the local context the scenario starts with)."""
        scenario = self.config.scenario
        drops = {item for call in scenario.calls if call.site == "cleanup" for item in call.drops}
        return tuple(item for item in scenario.initial_local if item not in drops)

    def _seed_model_items(self) -> None:
        """Over the plugin nothing is seeded before the calls: the stand-in's
        `model_creates` has no counterpart on the gated server yet."""

    def _start_pool(self) -> None:
        self.conn.start_response()

    def _settle_delivering(self) -> None:
        """Run, letting every op and event through at once, until all is quiet."""
        for _ in range(400):
            self.loop.run_until_blocked()
            if self.conn.to_server:
                self.conn.apply_next()
            elif self.conn.to_client:
                self._deliver()
            else:
                return
        raise SetupError("the set-up did not settle")

    def call(self, task: int) -> None:
        """A deferred generation starts now (unless its tool returned at `born`), runs
        (its session traffic let through) until its tool has returned, and is then
        interrupted as any other."""
        self._start_later(task)
        super().call(task)

    def _start_later(self, task: int) -> None:
        """A deferred generation starts: its reply is sent and let through until its
        tool runs."""
        if task in self.deferred:
            self.deferred = self.deferred - {task}
            self._prepare(task, self.config.call(task).site)
            self.loop.run_until_blocked()

    def _make_at_call(self, task: int) -> None:
        """The deferred generation has started (`call`): let its message through to
        the server and the mirror, as the model's call step does; nothing else is in
        flight then (`Call.behind_earlier_push`)."""
        self._settle_delivering()

    def _prepare(self, index: int, site: str) -> None:
        if index in self.deferred:
            return
        call = self.config.call(index)
        if site in ("tool-outputs", "interrupted-tool-outputs"):
            # each tool waits on its gate; an `early` tool-output push's response calls
            # a second tool, outside the scenario, which returns at the call
            called = [call.adds[0], *self._second_tool(index)]
            for each in called:
                self.gates[f"call_{each}"] = self.loop.create_future()
            held = site == "interrupted-tool-outputs"
            outputs = tuple(Call(f"fc_{each}", f"call_{each}", "lookup") for each in called)
            self.gated.responses.append(Response(outputs, held=held, tag=str(index)))
            self.handles[index] = self.session.generate_reply()
        elif site == "cleanup":
            name = call.drops[0]
            self.names[name] = name
            # the model's message reaches the server and the mirror; its text never plays
            self.gated.responses.append(
                Response((Message(name, f"text of {name}"),), held=True, tag=str(index))
            )
            self.handles[index] = self.session.generate_reply()

    def _identify(self, function: str, frame: dict[str, Any]) -> int | None:
        """A generation's call is the tag of the scripted response it came from."""
        if function != "_realtime_generation_task_impl":
            return super()._identify(function, frame)
        event = frame.get("generation_ev")
        response_id = getattr(event, "response_id", None)
        for conn in self.gated.connections:
            script = conn.started.get(str(response_id))
            if script is not None and script.tag is not None:
                return int(script.tag)
        return None

    def _end_cancelled(self, task: int) -> None:
        """The server ends the cancelled response when the session's cancel reaches it."""

    def _wire_cancels(self) -> None:
        """The cancel and its done are gated (`_scenario_op`, `_scenario_event`)."""
        self.gates_cancels = True

    def _generation_ended(self, index: int) -> bool:
        """Whether the `response.done` of call `index`'s response has been written."""
        ids = {
            response_id
            for conn in self.gated.connections
            for response_id, script in conn.started.items()
            if script is not None and script.tag == str(index)
        }
        return any(
            event.get("type") == "response.done" and event["response"]["id"] in ids
            for conn in self.gated.connections
            for event in conn.written_log
        )

    def _cancel_call(self, event: dict[str, Any]) -> int | None:
        """The call a gated `response.cancel` interrupts (None: other traffic)."""
        if not self.gates_cancels or event.get("type") != "response.cancel":
            return None
        cancels: dict[str, int] = self.rt.cancels
        return cancels.get(str(event.get("event_id")))

    def _done_call(self, event: dict[str, Any]) -> int | None:
        """The call whose cancel a `response.done` answers (None: other traffic)."""
        if not self.gates_cancels or event.get("type") != "response.done":
            return None
        cancel = self.conn.answers.get(str(event.get("event_id")))
        cancels: dict[str, int] = self.rt.cancels
        return None if cancel is None else cancels.get(cancel)

    # -- the gate --------------------------------------------------------------------------

    def _scenario_op(self, event: dict[str, Any]) -> bool:
        if self._cancel_call(event) is not None:
            return True
        if not is_item_op(event):
            return False
        item = event.get("item_id") if event["type"].endswith("delete") else event["item"]["id"]
        return self._name_of_id(str(item)) is not None

    def _scenario_event(self, event: dict[str, Any]) -> bool:
        if self._done_call(event) is not None:
            return True
        kind = event.get("type")
        if kind in ("conversation.item.added", "conversation.item.created"):
            return self._name_of_id(str(event["item"]["id"])) is not None
        if kind == "conversation.item.deleted":
            return self._name_of_id(str(event["item_id"])) is not None
        if kind == "error":
            op = self.rt.sent.get(event.get("error", {}).get("event_id"))
            return op is not None and self._name_of_id(op.item_id) is not None
        return False

    def _name_of_id(self, item_id: str) -> str | None:
        known = self.names.get(item_id)
        if known is not None:
            return known
        for record in self.tracker.records.values():
            if record.request is not None:
                self._learn_names(record.request.items)
        self._learn_names(self.agent._chat_ctx.items)
        return self.names.get(item_id)

    def _release_background(self) -> bool:
        """Let session traffic at the head of either FIFO through (see the module docstring)."""
        if not self.gated.connections or (self._delivering and not self._delivering.done()):
            return False
        conn = self.conn
        if conn.to_server and not self._scenario_op(conn.to_server[0]):
            conn.apply_next()
            return True
        if conn.to_client and not self._scenario_event(conn.to_client[0]):
            self._deliver()
            return True
        return False

    def _deliver(self) -> None:
        with self.loop.running():
            self._delivering = self.loop.create_task(self.conn.deliver_next())

    def _head_op(self) -> None:
        if not self.conn.to_server:
            raise IndexError("no op in flight to the server")

    def server_apply(self) -> None:
        self._head_op()
        self.conn.apply_next()

    def server_reject(self) -> None:
        self._head_op()
        self.conn.reject_next()

    def client_apply(self) -> None:
        if not self.conn.to_client:
            raise IndexError("no event in flight to the client")
        ending = self._done_call(self.conn.to_client[0])
        if ending is not None:
            self._generation_ends(ending)
        self._deliver()

    def model_creates(self, item: str) -> None:
        self.names[item] = item
        self.conn.create_item(Call(item, f"call_{item}", "lookup"))

    def learn(self, item: str) -> None:
        if not self.conn.responding:
            raise UnsupportedConfig("no response of the model is under way to carry the item")
        self.conn.end_output(item)

    def timeout(self, task: int) -> None:
        record = self.tracker.records.get(task)
        if record is None or record.task is None:
            raise LookupError(f"T{task} has no push waiting")
        self.loop.fire(record.task, ACK_TIMEOUT)

    # -- reading ---------------------------------------------------------------------------

    def _pass_background(self) -> None:
        """Nothing: the loop lets session traffic through when blocked (`_release_background`)."""

    def _server_ids(self) -> tuple[str, ...]:
        return self.conn.conversation.ids()

    def _learn_server_names(self) -> None:
        for item in self.conn.conversation.items:
            self._learn_json(item)

    def _learn_json(self, item: dict[str, Any]) -> None:
        item_id = str(item.get("id"))
        if item_id in self.names:
            return
        name: str | None = None
        if item.get("type") == "function_call_output":
            call_id = str(item.get("call_id", ""))
            if call_id.startswith("call_"):
                name = call_id.removeprefix("call_")
                if name.startswith(SECOND_TOOL):
                    self.second[item_id] = name
        elif item.get("type") == "message":
            texts = [part.get("text") for part in item.get("content", [])]
            if len(texts) == 1 and texts[0] in self.scenario_items:
                name = texts[0]
        if name is not None and name in self.scenario_items:
            self.names[item_id] = name

    def _server_view(self) -> dict[str, Any]:
        conn = self.conn
        conversation = conn.conversation
        sent: dict[str, SentOp] = self.rt.sent
        name = self.names.get

        def who(event_id: object) -> int | None:
            op = sent.get(str(event_id))
            return None if op is None else self._who(op.origin)

        to_server = []
        for event in conn.to_server:
            cancelling = self._cancel_call(event)
            if cancelling is not None:
                to_server.append(OpView(OpKind.CANCEL, RESPONSE, None, cancelling))
                continue
            if not is_item_op(event):
                continue
            op = sent.get(str(event.get("event_id")))
            if op is None:
                continue
            item = name(op.item_id)
            if item is None:
                continue
            kind = OpKind.CREATE if op.kind == "create" else OpKind.DELETE
            after = self._after_name(op) if kind is OpKind.CREATE else None
            to_server.append(OpView(kind, item, after, self._who(op.origin)))
        to_client = []
        for event in conn.to_client:
            view = self._event_view(event, sent)
            if view is not None:
                to_client.append(view)
        acked = frozenset(found for found in map(name, conn.acked) if found is not None)
        deletes = frozenset(
            (task, item, delete.acked)
            for delete in conn.deletes
            if (task := who(delete.event_id)) is not None
            and (item := name(delete.item_id)) is not None
        )
        recreated = frozenset(
            (task, item)
            for item_id in conversation.recreated
            if (item := name(item_id)) is not None
            and (task := who(conn.created_by.get(item_id))) is not None
        )
        initial = frozenset(self.config.scenario.server)
        return {
            "server": tuple(found for found in map(name, conversation.ids()) if found is not None),
            "to_server": tuple(to_server),
            "to_client": tuple(to_client),
            "created": len([i for i in self.pool if i in conversation.reached]),
            # the set-up's items were acknowledged before the scenario starts
            "acked": acked | initial,
            "reached": frozenset(
                found for found in map(name, conversation.reached) if found is not None
            ),
            "removed": frozenset(
                found for found in map(name, conversation.removed) if found is not None
            ),
            "deletes_sent": deletes,
            "refused": frozenset(
                found for found in map(name, conversation.refused) if found is not None
            ),
            "recreated": recreated,
        }

    def _event_view(self, event: dict[str, Any], sent: dict[str, SentOp]) -> EventView | None:
        ending = self._done_call(event)
        if ending is not None:
            return EventView(EventKind.DONE, RESPONSE, task=ending)
        kind = event.get("type")
        if kind in ("conversation.item.added", "conversation.item.created"):
            item_id = str(event["item"]["id"])
            item = self.names.get(item_id)
            if item is None:
                return None
            op = sent.get(str(self.conn.created_by.get(item_id)))
            if op is None:
                return EventView(EventKind.ADDED, item, self._server_after(item_id))
            return EventView(EventKind.ADDED, item, self._after_name(op), task=self._who(op.origin))
        if kind == "conversation.item.deleted":
            item_id = str(event["item_id"])
            item = self.names.get(item_id)
            if item is None:
                return None
            deletes = [op for op in sent.values() if op.kind == "delete" and op.item_id == item_id]
            task = self._who(deletes[-1].origin) if deletes else None
            return EventView(EventKind.DELETED, item, task=task)
        if kind == "error":
            op = sent.get(str(event.get("error", {}).get("event_id")))
            if op is None:
                return None
            item = self.names.get(op.item_id)
            if item is None:
                return None
            op_kind = OpKind.CREATE if op.kind == "create" else OpKind.DELETE
            return EventView(EventKind.REJECTED, item, op=op_kind, task=self._who(op.origin))
        return None

    def _after_name(self, op: Any) -> str | None:
        previous: str | None = None
        for item_id in op.request:
            if item_id == op.item_id:
                return previous
            if item_id in self.names:
                previous = self.names[item_id]
        return previous

    def _server_after(self, item_id: str) -> str | None:
        previous: str | None = None
        for item in self.conn.conversation.items:
            if item["id"] == item_id:
                return previous
            if item["id"] in self.names:
                previous = self.names[str(item["id"])]
        return previous

    def in_flight(self) -> tuple[bool, bool]:
        """Whether an op is on its way to the server, and an event to the client."""
        return bool(self.conn.to_server), bool(self.conn.to_client)

    def background_losses(self) -> list[str]:
        """Acknowledged items outside the scenario that a push deleted."""
        sent: dict[str, SentOp] = self.rt.sent
        return [
            self.second.get(d.item_id, d.item_id)
            for d in self.conn.deletes
            if d.acked and d.item_id not in self.names and str(d.event_id) in sent
        ]

    def close(self) -> None:
        """Close the session (its websocket with it), then the model, then the server."""
        if self._closed:
            return
        self._closed = True
        logging.getLogger("livekit").removeHandler(self._errors)
        for gate in self.gates.values():
            if not gate.done():
                gate.cancel()
        self.loop.on_blocked = None

        async def closing() -> None:
            await self.session.aclose()
            await self.model.aclose()
            await self.gated.aclose()

        self._start(closing())


class PluginFollow(Follow[PluginAdapter]):
    """The engines' `Follow`, on a `SocketLoop` instead of the conformance loop."""

    def __init__(
        self,
        config: Config,
        build: type[PluginAdapter] | None = None,
        early: frozenset[int] = frozenset(),
    ) -> None:
        """`early`: the calls whose items the run makes before the call (`born`)."""
        cls = build or PluginAdapter
        super().__init__(config, lambda c: cls(c, early=early), loop=new_socket_loop)


def plugin_adapter(config: Config) -> PluginAdapter:
    """The factory the harness takes; call it with a `SocketLoop` running."""
    return PluginAdapter(config)


def run_plugin(
    config: Config,
    stimuli: Iterable[Move],
    *,
    drain: bool = True,
    build: type[PluginAdapter] | None = None,
) -> Outcome:
    """Give the real plugin `stimuli` (internal moves are skipped), then drain.

    `build` is the adapter class (a test passes a mutant of it)."""
    stimuli = tuple(stimuli)
    session = PluginFollow(config, build, early_calls(stimuli))
    try:
        stuck = give_until_stuck(session, stimuli)
        if drain:
            session.drain(session.adapter.in_flight)
        return _outcome(session, stuck)  # type: ignore[arg-type]
    finally:
        quiet_close(session)
