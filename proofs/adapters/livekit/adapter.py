"""The conformance `Adapter` for the installed livekit-agents release.

A real `AgentSession` runs a real `AgentActivity` over the stand-in realtime
model (`standin`), on a `VirtualTimeLoop`. Each scenario call is driven the way
an application or the model would cause it, through the public API where that
reaches the site:

* user-turn: `session.generate_reply(user_input=...)`.
* tool-outputs: set up by `session.generate_reply()`, answered by the model
  with a function call, whose real `@function_tool` starts and waits; the call
  opens the tool's gate, so it returns and the activity pushes its output.
* replacement: `agent.update_chat_ctx(copy)` in a task of its own; the copy is
  taken then, or earlier by the `copy` stimulus (stale copies).
* spoken-message: `session.say(text)`.
* cleanup, interrupted-tool-outputs: set up as a generation with a message the
  harness never lets play, or with a function call whose tool waits; the call
  lets the tool return (unless it has), interrupts the speech, and the server
  ends its response.
* the model's `before-call` (`born`): an item made ahead of its call. A
  tool-output push's generation then calls a second tool (`early`), and the
  first returns now; an interrupted generation's tool returns now; `say()` is
  given a text stream whose playout starts now and ends at the call.
* model-creates and learn: set up as a response the server starts on its own;
  the server appends a function call, then the response's function stream
  yields it and the tool's start puts it in the local context.

The two interruption sites are reached through `session.generate_reply()` and
`session.interrupt()` when a scenario has one of them. When it has two, the
activity's scheduler would never run their generations at once, so each runs
as `AgentActivity._realtime_generation_task` on a speech handle of its own,
started with the activity's `_create_speech_task` (as livekit-agents' own unit
tests call the activity's coroutines); `PATHS` says which way each call went.

Item ids map to scenario names by what the items are: items the harness
creates carry the scenario id; the user message is the one whose text is the
scenario id; a tool output is the one answering `call_<id>`; a spoken message is
the assistant message whose text is the scenario id. Every other item (the
function calls of the set-up, a second tool's output, livekit's own config-update
items) is background: left out of the observation, its ops and events let
through once they head their FIFO (`_pass_background`), and a delete of an
acknowledged background item is reported (`background_losses`), so no loss
hides there.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, cast

import attrs
from livekit.agents import Agent, AgentSession, RunContext, function_tool, llm
from livekit.agents.voice.agent import ModelSettings
from livekit.agents.voice.speech_handle import SpeechHandle

from model import Config, OpKind, Pc, RequestSource
from model.sites import SITES_BY_NAME
from model.state import RESPONSE
from proofs.adapters.livekit.probe import HolderLock, Phase, PushRecord, Tracker
from proofs.adapters.livekit.standin import (
    CancelSender,
    Generation,
    SentOp,
    StandInModel,
    StandInServer,
    Stream,
)
from proofs.engines.conformance import WireEvent, WireOp
from proofs.engines.conformance.adapter import LockView, Observation, TaskView
from proofs.errors import SetupError, UnsupportedConfig

#: The sites whose generation is interrupted, which need a generation of their own.
_INTERRUPTIBLE = frozenset({"cleanup", "interrupted-tool-outputs"})
#: The prefix of a second tool's name (`LivekitAdapter._second_tool`).
SECOND_TOOL = "later_"
#: How many loop runs and deliveries the set-up may take before it is declared stuck.
_SETUP_LIMIT = 200


class _ToolAgent(Agent):
    """An agent with one tool whose every call waits for the harness to open its gate."""

    def __init__(self, gates: dict[str, asyncio.Future[None]], chat_ctx: llm.ChatContext) -> None:
        super().__init__(instructions="You are a test agent.", chat_ctx=chat_ctx)
        self._gates = gates

    @function_tool
    async def lookup(self, context: RunContext[Any]) -> str:
        """Look something up (the harness decides when it returns)."""
        call_id = context.function_call.call_id
        gate = self._gates.get(call_id)
        if gate is None:
            gate = asyncio.get_running_loop().create_future()
            self._gates[call_id] = gate
        await gate
        return f"result of {call_id}"


class _CollectErrors(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(f"{record.name}: {record.getMessage()}")


class LivekitAdapter:
    """Drives the installed livekit-agents for one model `Config` (see the module docstring)."""

    def __init__(
        self,
        config: Config,
        *,
        direct: frozenset[int] | None = None,
        early: frozenset[int] = frozenset(),
    ) -> None:
        """`early`: the calls whose items the run makes before the call (`born`): a
        tool-output call among them gets a generation with a second tool."""
        loop = asyncio.get_running_loop()
        if not hasattr(loop, "run_until_blocked") or not hasattr(loop, "advance"):
            raise TypeError("the livekit adapter runs on a loop on virtual time the harness steps")
        self.loop: Any = loop
        self.config = config
        self.early = early
        scenario = config.scenario
        self.names: dict[str, str] = {}
        self.scenario_items = frozenset(scenario.items())
        self.pool = frozenset(scenario.server_pool)
        for call in scenario.calls:
            if call.site not in SITES_BY_NAME:
                raise UnsupportedConfig(f"no livekit path for site {call.site!r}")
            if call.site in ("user-turn", "spoken-message", "tool-outputs") and len(call.adds) != 1:
                raise UnsupportedConfig(f"{call.site} adds exactly one item here")
            if call.site == "interrupted-tool-outputs" and len(call.adds) != 1:
                raise UnsupportedConfig("interrupted-tool-outputs adds exactly one item here")
            if call.site == "cleanup" and (call.adds or len(call.drops) != 1):
                raise UnsupportedConfig("cleanup drops exactly one never-played item here")
        if set(scenario.initial_local) - set(scenario.server):
            raise UnsupportedConfig("every item of the initial local context is on the server")
        sites = {call.site for call in scenario.calls}
        unplaced = {
            item
            for call in scenario.calls
            if call.site == "cleanup"
            for item in call.drops
            if item not in scenario.initial_local
        }
        if {"cleanup", "tool-outputs"} <= sites and unplaced:
            # the tool's generation has to run before the cleanup's (a reply started
            # after it queues behind it, and the interruption cancels it unrun); then
            # the never-played message follows the tool's function call, the local
            # context's last item, and the activity adds a placeholder of it locally
            # (`_on_remote_item_added`), which this scenario's start does not have
            # (an audited pair starts with it: `pairs.pair_scenario`)
            raise UnsupportedConfig(
                "a cleanup beside a tool-output push: run after the tool's generation, the "
                "never-played message gets a local placeholder the scenario does not start with"
            )
        interruptible = [i for i, c in enumerate(scenario.calls) if c.site in _INTERRUPTIBLE]
        #: Calls driven through the activity's coroutines rather than the public API.
        self.direct = (
            direct
            if direct is not None
            else frozenset(interruptible if len(interruptible) > 1 else ())
        )
        #: Generations set up at their call, not at the start (`_later_generations`).
        self.later = self._later_generations()
        self.gates: dict[str, asyncio.Future[None]] = {}
        self.generations: dict[int, Generation] = {}
        self.handles: dict[int, SpeechHandle] = {}
        self.events: dict[int, llm.GenerationCreatedEvent] = {}
        self.pool_generation: Generation | None = None
        self.tasks: dict[int, asyncio.Task[Any]] = {}
        self.copies: dict[int, llm.ChatContext] = {}
        #: Wire id to label of each second tool's output seen (`_second_tool`).
        self.second: dict[str, str] = {}
        #: The text stream of each `say()` started at `born` (closed at its call).
        self.spoken: dict[int, Stream] = {}
        self.called: set[int] = set()
        self.failures: list[str] = []
        self._errors = _CollectErrors()
        self._closed = False
        #: The ids of the copy each replacement pushed, and the local context each
        #: cleanup was called on (the model's `copy` and `base`).
        self._copy_ids: dict[int, tuple[str, ...]] = {}
        self._cleanup_base: dict[int, frozenset[str]] = {}

        self.model = self._provider()
        initial = llm.ChatContext([self._item(i) for i in self._initial_local()])
        self.agent = _ToolAgent(self.gates, initial)
        self.session: AgentSession[Any] = AgentSession(llm=self.model, user_away_timeout=None)
        self.tracker = Tracker(
            self._identify,
            lambda: self.agent._chat_ctx,
            frozenset(
                i
                for i, call in enumerate(scenario.calls)
                if SITES_BY_NAME[call.site].request is not RequestSource.MIRROR_SNAPSHOT
            ),
        )
        self._set_up()
        self.tracker.started = True
        logging.getLogger("livekit").addHandler(self._errors)

    # -- set-up -------------------------------------------------------------------------

    def _provider(self) -> Any:
        """The realtime model under the session: here the stand-in, with its server."""
        self.server = StandInServer([])
        return StandInModel(self.server)

    def _item(self, name: str) -> llm.ChatItem:
        """A chat item the harness itself creates for scenario id `name`."""
        self.names[name] = name
        if name in self.pool:
            return llm.FunctionCall(id=name, call_id=f"call_{name}", name="lookup", arguments="{}")
        if name.startswith("msg"):
            return llm.ChatMessage(id=name, role="user", content=[f"text of {name}"])
        return llm.ChatMessage(id=name, role="assistant", content=[f"text of {name}"])

    @property
    def rt(self) -> Any:
        """The activity's realtime session (the latest the stand-in model made)."""
        return self.model.sessions[-1]

    def _settle_delivering(self) -> None:
        """Run the loop, delivering every op and event at once, until all is quiet."""
        for _ in range(_SETUP_LIMIT):
            self.loop.run_until_blocked()
            if self.server.to_server:
                self.server.apply_next()
            elif self.server.to_client:
                self.rt.deliver()
            else:
                return
        raise SetupError("the set-up did not settle")

    def _start(self, coro: Any) -> asyncio.Task[Any]:
        with self.loop.running():
            task: asyncio.Task[Any] = self.loop.create_task(coro)
        return task

    def _set_up(self) -> None:
        scenario = self.config.scenario
        started = self._start(self.session.start(self.agent, record=False))
        self._await_connection()
        self._settle_delivering()
        if not started.done() or started.exception() is not None:
            raise SetupError(f"AgentSession.start did not finish: {started!r}")
        activity = self.session._activity
        assert activity is not None
        self.activity = activity
        self.rt.probe = self.tracker
        if any(self.config.ends_on_done(i) for i in range(len(scenario.calls))):
            # the cancel and its done are the model's op and event: name them so
            self.names[RESPONSE] = RESPONSE
            self._wire_cancels()
        if hasattr(activity, "_rt_chat_ctx_lock"):
            assert not activity._rt_chat_ctx_lock.locked()
            activity._rt_chat_ctx_lock = HolderLock(self.tracker.on_activity_lock)
        self._seed_model_items()
        # the interrupted generations last: each is the current speech when the
        # scenario starts (`SpeechTurn`), so a reply started after it would be
        # queued behind it, and `interrupt()` would cancel that queued reply too
        for index, call in sorted(
            enumerate(scenario.calls),
            key=lambda entry: self.config.site(entry[0]).speech.from_start,
        ):
            if index in self.later:
                continue
            with self.loop.running():
                self._prepare(index, call.site)
            self._settle_delivering()
        if scenario.server_pool:
            with self.loop.running():
                self._start_pool()
            self._settle_delivering()
        self._check_setup()

    def _later_generations(self) -> frozenset[int]:
        """The interrupted calls whose generation runs behind an earlier one's push
        (`Call.behind_earlier_push`) and has nothing on the server at the start:
        each is set up at its call, once the earlier one's traffic is done, so its
        function call is created then, as the release's second reply's is."""
        calls = self.config.scenario.calls
        interruptible = [i for i, c in enumerate(calls) if c.site in _INTERRUPTIBLE]
        if len(interruptible) < 2:
            return frozenset()
        return frozenset(
            i
            for i in interruptible
            if calls[i].behind_earlier_push and (not calls[i].drops or calls[i].made_at_call)
        )

    def _initial_local(self) -> tuple[str, ...]:
        """The items the agent's own context starts with: the scenario's."""
        return self.config.scenario.initial_local

    def _await_connection(self) -> None:
        """Run until the session's provider side is up (the stand-in is at once)."""

    def _wire_cancels(self) -> None:
        """The stand-in session ends a generation when its done event is applied."""

        def done(call: int) -> None:
            self._generation_ends(call)
            self.generations[call].close()

        self.rt.on_done = done

    def _generation_ends(self, call: int) -> None:
        """Call `call`'s done event reaches the session: a cleanup's push starts from
        the live local context as it is now, so that is its base (`Task.base`)."""
        if self.config.call(call).site == "cleanup":
            self._cleanup_base[call] = frozenset(self._named(self._local_ids()))

    def _generation_ended(self, index: int) -> bool:
        """Whether call `index`'s generation has ended on the client side."""
        generation = self.generations.get(index)
        return generation is None or generation.ended

    def _seed_model_items(self) -> None:
        """Items the model produced before the scenario starts (a never-played
        message); they reach the server before the calls' own responses."""
        scenario = self.config.scenario
        for name in scenario.server:
            if name not in scenario.initial_local:
                with self.loop.running():
                    self.server.model_creates(self._item(name))
                self._settle_delivering()

    def _start_pool(self) -> None:
        """Start the generation whose function calls are the scenario's server pool."""
        generation = Generation()
        self.pool_generation = generation
        self.rt.start_generation(generation)

    def _prepare(self, index: int, site: str) -> None:
        call = self.config.call(index)
        if site == "tool-outputs":
            self._tool_generation(index, call.adds[0], close=True)
        elif site == "interrupted-tool-outputs":
            self._tool_generation(index, call.adds[0], close=False)
        elif site == "cleanup":
            generation = Generation()
            text = Stream()  # held back: none of it is ever played
            generation.add_message(call.drops[0], text)
            self._begin(index, generation)

    def _begin(self, index: int, generation: Generation) -> None:
        """Start the generation of call `index`, publicly or on the activity's coroutine."""
        self.generations[index] = generation
        if index in self.direct:
            handle = SpeechHandle.create(allow_interruptions=True)
            handle._authorize_generation()
            event = generation.event()
            self.events[index] = event
            self.handles[index] = handle
            self.activity._create_speech_task(
                self.activity._realtime_generation_task(
                    speech_handle=handle, generation_ev=event, model_settings=ModelSettings()
                ),
                speech_handle=handle,
                name=f"ackguard.generation.T{index}",
            )
        else:
            self.rt.replies.append(generation)
            self.handles[index] = self.session.generate_reply()

    def _tool_generation(self, index: int, name: str, *, close: bool) -> None:
        """The generation of a tool-output call: the model's function call, whose tool
        waits on the gate `call_<name>`. A tool-output push whose output is made
        before its call (`early`) has a generation that calls a second tool too
        (`call_later_<name>`, outside the scenario): the first returns at `born`, and
        the generation waits for the second, which returns at the call."""
        generation = Generation()
        self._begin(index, generation)
        calls = [name, *self._second_tool(index)]
        for called in calls:
            call_id = f"call_{called}"
            self.gates[call_id] = self.loop.create_future()
            function_call = llm.FunctionCall(
                id=f"fc_{called}", call_id=call_id, name="lookup", arguments="{}"
            )
            # the model's function call reaches the server conversation, then the stream
            self.server.model_creates(function_call.model_copy())
            generation.functions.push(function_call)
        if close:
            generation.close()

    def _second_tool(self, index: int) -> tuple[str, ...]:
        """The second tool of call `index`'s generation, if it has one (`early`)."""
        call = self.config.call(index)
        if call.site == "tool-outputs" and index in self.early:
            return (f"{SECOND_TOOL}{call.adds[0]}",)
        return ()

    def _open_gate(self, call_id: str) -> bool:
        """Let the tool waiting on `call_id` return (its output is made then); whether
        it was still waiting."""
        gate = self.gates[call_id]
        if gate.done():
            return False
        gate.set_result(None)
        return True

    def _check_setup(self) -> None:
        scenario = self.config.scenario
        if self.tracker.records:
            raise SetupError(f"a scenario push ran during the set-up: {self.tracker.records}")
        observed = self._named(self._server_ids())
        if observed != scenario.server:
            raise SetupError(f"the server starts as {observed}, not {scenario.server}")
        local = self._named(self._local_ids())
        if local != scenario.initial_local:
            raise SetupError(f"the local context starts as {local}, not {scenario.initial_local}")
        if self._errors.messages:
            raise SetupError("; ".join(self._errors.messages))

    # -- attribution --------------------------------------------------------------------

    def _identify(self, function: str, frame: dict[str, Any]) -> int | None:
        """Which call an activity frame belongs to."""
        calls = self.config.scenario.calls
        if function == "update_chat_ctx":
            task = asyncio.current_task()
            for index, started in self.tasks.items():
                if started is task:
                    return index
            return None
        if function == "_realtime_generation_task_impl":
            event = frame.get("generation_ev")
            for index, generation in self.generations.items():
                if self.events.get(index) is event or (
                    event is not None
                    and event.message_stream is generation.messages
                    and event.function_stream is generation.functions
                ):
                    return index
            return None
        wanted = {"_realtime_reply_task": "user-turn", "_tts_task_impl": "spoken-message"}
        site = wanted.get(function)
        text = frame.get("user_input" if site == "user-turn" else "text")
        for index, call in enumerate(calls):
            if call.site != site:
                continue
            if (index in self.called and call.adds[0] == text) or (
                text is not None and self.spoken.get(index) is text
            ):
                return index
        return None

    # -- stimuli ------------------------------------------------------------------------

    def copy(self, task: int) -> None:
        self.copies[task] = self.agent.chat_ctx.copy()

    def call(self, task: int) -> None:
        call = self.config.call(task)
        self.called.add(task)
        site = call.site
        if site == "user-turn":
            self.handles[task] = self.session.generate_reply(user_input=call.adds[0])
        elif site == "spoken-message":
            spoken = self.spoken.get(task)
            if spoken is None:
                self.handles[task] = self.session.say(call.adds[0])
            else:
                spoken.close()  # the playout that started at `born` ends
        elif site == "tool-outputs":
            # the scenario's tool returns now unless it did at `born`; a second one last
            for name in (call.adds[0], *self._second_tool(task)):
                self._open_gate(f"call_{name}")
        elif site in _INTERRUPTIBLE:
            self._start_later(task)
            if call.made_at_call:
                self._make_at_call(task)
            if site == "interrupted-tool-outputs" and self._open_gate(f"call_{call.adds[0]}"):
                # the tool returns now, its output made, before the interruption
                self.loop.run_until_blocked()
            if site == "cleanup":
                self._cleanup_base[task] = frozenset(self._named(self._local_ids()))
            ends_on_done = self.config.ends_on_done(task)
            if ends_on_done:
                # the session's next cancel is this call's; its done ends the response
                self.rt.interrupting = task
            if task in self.direct:
                self.handles[task].interrupt()
            else:
                self.session.interrupt()
            if not ends_on_done:
                self._end_cancelled(task)
        elif site == "replacement":
            ctx = self.copies.pop(task, None)
            if ctx is None:
                ctx = self.agent.chat_ctx.copy()
            self._copy_ids[task] = self._named(tuple(item.id for item in ctx.items))
            ctx.items[:] = [item for item in ctx.items if self.names.get(item.id) not in call.drops]
            for name in call.adds:
                ctx.items.append(self._item(name))
            self.tasks[task] = self.loop.create_task(
                self.agent.update_chat_ctx(ctx), name=f"ackguard.replacement.T{task}"
            )
        else:
            raise UnsupportedConfig(f"no livekit path for site {site!r}")

    def _start_later(self, task: int) -> None:
        """Set up call `task`'s generation now if it is one set up late (`later`)."""
        if task in self.later:
            self.later = self.later - {task}
            with self.loop.running():
                self._prepare(task, self.config.call(task).site)
            self._settle_delivering()

    def born(self, task: int) -> None:
        """The model's `before-call`: call `task`'s item is made now, ahead of its call.
        A tool-output push's first tool returns (its generation waits for the second);
        an interrupted generation's tool returns (the generation goes on); `say()` is
        given a text stream whose first text starts the playout, stamping the message's
        `created_at` (the playout ends at the call)."""
        call = self.config.call(task)
        if call.site in ("tool-outputs", "interrupted-tool-outputs"):
            # a later generation starts here, its tool returning (the sweep leaves
            # out the runs where the earlier one's traffic is not done, `drivable`)
            self._start_later(task)
            if f"call_{call.adds[0]}" not in self.gates:
                raise LookupError(f"T{task}'s generation starts at its call: no tool yet")
            if call.site == "tool-outputs" and not self._second_tool(task):
                # one tool, whose return is the push: the output is made at the call,
                # and where that order differs the next comparison says so
                return
            self._open_gate(f"call_{call.adds[0]}")
        elif call.site == "spoken-message":
            spoken = Stream()
            spoken.push(call.adds[0])
            self.spoken[task] = spoken
            self.handles[task] = self.session.say(spoken)
        else:
            raise UnsupportedConfig(f"no livekit path makes {call.site}'s items before its call")

    def _make_at_call(self, task: int) -> None:
        """Call `task`'s generation makes its never-played messages as it runs
        (`Call.made_at_call`): each reaches the server and the mirror before the
        interruption, in the call's step as in the model's (nothing else is in
        flight then, `Call.behind_earlier_push`)."""
        for name in self.config.call(task).drops:
            with self.loop.running():
                self.server.model_creates(self._item(name))
            self._settle_delivering()

    def _end_cancelled(self, task: int) -> None:
        """The server ends the cancelled response at once (`InterruptionEnd.AT_ONCE`)."""
        self.generations[task].close()

    def server_apply(self) -> None:
        self.server.apply_next()

    def server_reject(self) -> None:
        self.server.reject_next()

    def client_apply(self) -> None:
        self.rt.deliver()

    def model_creates(self, item: str) -> None:
        self.server.model_creates(self._item(item))

    def learn(self, item: str) -> None:
        if self.pool_generation is None:
            raise UnsupportedConfig("no response of the model is under way to carry the item")
        created = self._item(item)
        assert isinstance(created, llm.FunctionCall)
        self.pool_generation.functions.push(created)

    def timeout(self, task: int) -> None:
        record = self.tracker.records.get(task)
        if record is None or record.task is None:
            raise LookupError(f"T{task} has no push waiting")
        self.rt.clock.fire(record.task)

    # -- reading ------------------------------------------------------------------------

    def _server_ids(self) -> tuple[str, ...]:
        return self.server.ids()

    def _learn_server_names(self) -> None:
        self._learn_names(self.server.conversation)
        for op in self.server.to_server:
            if op.item is not None:
                self._name(op.item)
        for event in self.server.to_client:
            if event.item is not None:
                self._name(event.item)

    def _server_view(self) -> dict[str, Any]:
        """The server's half of the observation (names learned first, see `observe`)."""
        server = self.server.shared.view(self.names.get, self._who, self._anchor)
        return attrs.asdict(server, recurse=False) | {
            "created": len([i for i in self.pool if i in self.server.shared.reached])
        }

    def _name(self, item: llm.ChatItem) -> str | None:
        known = self.names.get(item.id)
        if known is not None:
            return known
        name: str | None = None
        if isinstance(item, llm.FunctionCallOutput) and item.call_id.startswith("call_"):
            name = item.call_id.removeprefix("call_")
            if name.startswith(SECOND_TOOL):
                self.second[item.id] = name  # a second tool's output (background)
        elif isinstance(item, llm.ChatMessage):
            text = item.text_content
            if text in self.scenario_items:
                name = text
        if name is not None and name in self.scenario_items:
            self.names[item.id] = name
            return name
        return None

    def _learn_names(self, items: list[llm.ChatItem]) -> None:
        for item in items:
            self._name(item)

    def _named(self, ids: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(self.names[i] for i in ids if i in self.names)

    def _local_ids(self) -> tuple[str, ...]:
        items = self.agent._chat_ctx.items
        self._learn_names(items)
        return tuple(item.id for item in items)

    def _pass_background(self) -> None:
        """Let an op or event of an item outside the scenario through once it heads its
        FIFO (a second tool's output), as the plugin's gate does: the model has no
        move for it, and it never overtakes a scenario op or event."""
        shared = self.server.shared
        for _ in range(_SETUP_LIMIT):
            if shared.to_server and self._background(shared.to_server[0]):
                self.server.apply_next()
            elif shared.to_client and self._background(shared.to_client[0]):
                self.rt.deliver()
            else:
                return
            self.loop.run_until_blocked()
        raise SetupError("background traffic did not settle")

    def _background(self, wire: WireOp | WireEvent) -> bool:
        """Whether an op or event in flight is about an item outside the scenario."""
        if wire.item in self.names:
            return False
        if wire.payload is not None:
            # the bridge puts only livekit chat items in (`StandInServer`)
            return self._name(cast(llm.ChatItem, wire.payload)) is None
        # a delete or an error carries no item: name what the server holds first
        self._learn_server_names()
        return wire.item not in self.names

    def observe(self) -> Observation:
        self._pass_background()
        self._learn_server_names()
        self._learn_names(self.rt.mirror_items())
        local = self._named(self._local_ids())
        for record in self.tracker.records.values():
            if record.request is not None:
                self._learn_names(record.request.items)
        server = self._server_view()
        return Observation(
            **server,
            mirror=self._named(self.rt.mirror_ids()),
            local=local,
            activity_lock=self._lock(getattr(self.activity, "_rt_chat_ctx_lock", None)),
            provider_lock=self._traced(self.rt.lock.holder, self.rt.lock.waiting),
            tasks=tuple(self._task(i) for i in range(len(self.config.scenario.calls))),
            learned=frozenset(i for i in local if i in self.pool),
        )

    def _anchor(self, wire: WireOp | WireEvent) -> str | None:
        """Where the model has a create or an "added" event: after the nearest
        scenario item before it (the model knows no set-up items)."""
        if isinstance(wire, WireEvent):
            if wire.answers is None:
                return self._server_after(wire.item)
            wire = wire.answers
        assert isinstance(wire.message, SentOp)
        return self._after_name(wire.message)

    def _after_name(self, op: SentOp) -> str | None:
        """The nearest scenario item before a create's item in the request it came from.

        The model knows no set-up items, so a create that follows one (a tool
        output follows its own function call) is placed after the scenario item
        before that, which is where the model's request has it.
        """
        previous: str | None = None
        for item_id in op.request:
            if item_id == op.item_id:
                return previous
            if item_id in self.names:
                previous = self.names[item_id]
        return previous

    def _who(self, origin: object) -> int | None:
        if isinstance(origin, CancelSender):
            return origin.call
        for record in self.tracker.records.values():
            if record.task is origin and origin is not None:
                return record.call
        return None

    def _server_after(self, item_id: str) -> str | None:
        """The nearest scenario item before a model-created item on the server."""
        previous: str | None = None
        for item in self.server.conversation:
            if item.id == item_id:
                return previous
            if item.id in self.names:
                previous = self.names[item.id]
        return previous

    def _lock(self, lock: object) -> LockView:
        if isinstance(lock, HolderLock):
            return self._traced(lock.holder, lock.waiting)
        return LockView()

    def _traced(self, holder: object, waiting: list[Any]) -> LockView:
        return LockView(
            None if holder is None else self._who(holder),  # type: ignore[arg-type]
            tuple(w for w in (self._who(t) for t in waiting) if w is not None),
        )

    def phase(self, index: int) -> Phase | None:
        """Where call `index`'s push is (None: it has not reached one)."""
        record = self.tracker.records.get(index)
        if record is None:
            return None
        if record.returned:
            return Phase.FAILED if record.failed else Phase.DONE
        lock = getattr(self.activity, "_rt_chat_ctx_lock", None)
        if isinstance(lock, HolderLock) and record.task in lock.waiting:
            return Phase.WAIT_ACTIVITY
        if record.task in self.rt.lock.waiting:
            return Phase.WAIT_PROVIDER
        if record.read is not None:
            return Phase.WAIT_ACKS
        return None

    def _task(self, index: int) -> TaskView:
        call = self.config.call(index)
        record = self.tracker.records.get(index)
        phase = self.phase(index)
        copy = self.copies.get(index)
        if record is None or phase is None:
            interrupted = index in self.called and self.config.ends_on_done(index)
            if interrupted and not self._generation_ended(index):
                return TaskView(Pc.WAIT_DONE)  # interrupted; its done not yet applied
            if index in self.called:
                return TaskView(Pc.IDLE)  # reported by errors(): the call reached no push
            if copy is not None:
                return TaskView(Pc.COPIED, copy=self._named(tuple(i.id for i in copy.items)))
            return TaskView(Pc.IDLE)
        return self._view(record, phase, call.drops)

    def _view(self, record: PushRecord, phase: Phase, drops: tuple[str, ...]) -> TaskView:
        site = SITES_BY_NAME[self.config.call(record.call).site]
        request = record.request
        live = self.agent._chat_ctx
        base: frozenset[str] = frozenset()
        copy: tuple[str, ...] | None = None
        if site.request is RequestSource.MIRROR_SNAPSHOT and record.snapshot is not None:
            base = frozenset(self._named(record.snapshot)) | frozenset(drops)
        elif site.request is RequestSource.CALLER_COPY:
            origin = self._copy_ids.get(record.call)
            copy = origin
            base = frozenset(origin or ()) | frozenset(drops)
        elif site.request is RequestSource.LOCAL_CONTEXT:
            base = self._cleanup_base.get(record.call, frozenset()) | frozenset(drops)
        pending = frozenset(
            (OpKind.CREATE if kind == "create" else OpKind.DELETE, self.names[item])
            for kind, item in record.pending()
            if item in self.names
        )
        return TaskView(
            phase=Pc(phase.value),
            copy=copy,
            request=None if request is None else self._named(tuple(i.id for i in request.items)),
            request_is_live=request is not None and request is live,
            read=None if record.read is None else self._named(record.read),
            bound_at_read=record.bound_at_read,
            base=base,
            pending=pending if phase is Phase.WAIT_ACKS else frozenset(),
        )

    def errors(self) -> list[str]:
        found = list(self.failures)
        for index, task in sorted(self.tasks.items()):
            if task.done() and not task.cancelled():
                error = task.exception()
                # a replacement whose acks time out raises to the application, by design
                if error is not None and not isinstance(error, llm.RealtimeError):
                    found.append(f"T{index}: {error!r}")
        for touch in self.tracker.stray:
            found.append(
                f"a push outside the scenario: {touch.function}:{touch.line} ({touch.what})"
            )
        found.extend(self._errors.messages)
        for index in sorted(self.called):
            if self.phase(index) is None:
                found.append(f"T{index} ({self.config.call(index).site}) reached no push")
        return found

    def unreached(self) -> list[int]:
        return [index for index in sorted(self.called) if self.phase(index) is None]

    def background_losses(self) -> list[str]:
        """Acknowledged items outside the scenario that a push deleted (a second
        tool's output as `later_<output>`)."""
        return [
            self.second.get(item, item)
            for origin, item, acked in self.server.deletes_sent
            if acked and item not in self.names
        ]

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        logging.getLogger("livekit").removeHandler(self._errors)
        for gate in self.gates.values():
            if not gate.done():
                gate.cancel()
        closing = self._start(self.session.aclose())
        del closing


def livekit_adapter(config: Config) -> LivekitAdapter:
    """The factory the harness takes (`AdapterFactory`)."""
    return LivekitAdapter(config)


AdapterMaker = Callable[[Config], LivekitAdapter]
