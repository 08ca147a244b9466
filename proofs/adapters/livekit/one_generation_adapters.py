"""The adapters that drive a `one_generation` reading over each provider.

Both start one generation with the tool's function call and the never-played
message; the cleanup's call interrupts it, the tool-output call's call lets the
tool return, and the generation's task then pushes the output once its cleanup
has returned (`proofs.adapters.livekit.one_generation`). Both pushes run in that
one task, so which call an op, a lock or a frame belongs to is told apart here:
the frame by the outputs it holds, an op by the push it was sent from.
"""

from __future__ import annotations

from typing import Any

from livekit.agents import llm

from impl.gated_server import Call, Message, Response
from model import Config
from proofs.adapters.livekit.adapter import LivekitAdapter
from proofs.adapters.livekit.one_generation import is_one_generation, roles
from proofs.adapters.livekit.plugin import PluginAdapter
from proofs.adapters.livekit.standin import Generation, SentOp, Stream

__all__ = ["OneGenerationPlugin", "OneGenerationStandIn", "one_generation_adapter"]


class _Sender:
    """Which of the generation's two pushes sent an op (both run in one task)."""

    def __init__(self, call: int) -> None:
        self.call = call


class _OneGeneration(LivekitAdapter):
    """What both providers' one-generation adapters share: which push is which,
    and the tool call's call (the tool returns)."""

    cleanup: int
    tool: int
    output: str

    def _roles(self, config: Config) -> None:
        found = roles(config)
        if found is None or not is_one_generation(config):
            raise ValueError("not a one-generation config")
        self.cleanup, self.tool = found
        self.output = config.call(self.tool).adds[0]

    def _function_call(self) -> llm.FunctionCall:
        return llm.FunctionCall(
            id=f"fc_{self.output}", call_id=f"call_{self.output}", name="lookup", arguments="{}"
        )

    def _identify(self, function: str, frame: dict[str, Any]) -> int | None:
        """The generation's frame is the cleanup's until it has its tools' outputs
        (`interrupted_fnc_outputs`, set just before the tool push takes the lock)."""
        call = super()._identify(function, frame)
        if call == self.cleanup and "interrupted_fnc_outputs" in frame:
            return self.tool
        return call

    def _who(self, origin: object) -> int | None:
        """The generation's task is the cleanup's until the tool push has started,
        then the tool push's; an op is its sender's (`_Sender`)."""
        if isinstance(origin, _Sender):
            return origin.call
        tool = self.tracker.records.get(self.tool)
        if tool is not None and origin is not None and tool.task is origin:
            return self.tool
        return super()._who(origin)

    def _sender(self, origin: object) -> object:
        """The `_Sender` of an op the generation's task sends now, else `origin`."""
        cleanup = self.tracker.records.get(self.cleanup)
        if cleanup is None or origin is None or cleanup.task is not origin:
            return origin
        tool = self.tracker.records.get(self.tool)
        pushing = tool is not None and tool.entered and not tool.returned
        return _Sender(self.tool if pushing else self.cleanup)

    def _prepare(self, index: int, site: str) -> None:
        """The cleanup's call sets up the one generation (the tool's gate, then the
        provider's `_start_generation`); the tool call has nothing of its own."""
        if index == self.tool:
            return  # the cleanup's generation is this call's too
        if index != self.cleanup:
            super()._prepare(index, site)
            return
        self.gates[f"call_{self.output}"] = self.loop.create_future()
        self._start_generation(index)

    def _start_generation(self, index: int) -> None:
        """Start the generation with the function call and the never-played message."""
        raise NotImplementedError

    def call(self, task: int) -> None:
        """The cleanup's call interrupts the generation; the tool call's lets the tool
        return, after which the generation pushes its output (once its cleanup has)."""
        if task != self.tool:
            super().call(task)
            return
        self.called.add(task)
        self._open_gate(f"call_{self.output}")


class OneGenerationStandIn(_OneGeneration):
    """Over the stand-in: the function call and then the message are on the server
    and in the mirror before the generation starts (so the message gets no
    placeholder); the generation yields the call, whose tool waits on its gate,
    and holds the message back."""

    def __init__(
        self,
        config: Config,
        *,
        direct: frozenset[int] | None = None,
        early: frozenset[int] = frozenset(),
    ) -> None:
        del direct  # one generation, started through the public API
        self._roles(config)
        super().__init__(config, direct=frozenset(), early=early)

    def _provider(self) -> Any:
        model = super()._provider()
        receive = self.server.receive

        def tagged(op: SentOp) -> None:
            op.origin = self._sender(op.origin)  # type: ignore[assignment]
            receive(op)

        self.server.receive = tagged  # type: ignore[method-assign]
        return model

    def _seed_model_items(self) -> None:
        with self.loop.running():
            self.server.model_creates(self._function_call())
        self._settle_delivering()
        super()._seed_model_items()

    def _start_generation(self, index: int) -> None:
        generation = Generation()
        generation.functions.push(self._function_call())
        generation.add_message(self.config.call(index).drops[0], Stream())
        self._begin(index, generation)


class OneGenerationPlugin(_OneGeneration, PluginAdapter):
    """Over the plugin: one scripted response with the tool's function call and the
    never-played message; the call's `output_item.done` and the message's "added"
    events reach the session in one write (the module's docstring)."""

    #: The response's order: the function call, then the message (the order in which
    #: the model's anchor of the output is the real one; the module's docstring).
    call_first = True

    def __init__(self, config: Config, early: frozenset[int] = frozenset()) -> None:
        self._roles(config)
        super().__init__(config, early=early)

    def _start_generation(self, index: int) -> None:
        message = self.config.call(index).drops[0]
        self.names[message] = message
        call = Call(f"fc_{self.output}", f"call_{self.output}", "lookup")
        text = Message(message, f"text of {message}")
        outputs = (call, text) if self.call_first else (text, call)
        self.gated.responses.append(Response(outputs, held=True, tag=str(index)))
        handle = self.session.generate_reply()
        self.handles[index] = handle
        self.handles[self.tool] = handle

    def _settle_delivering(self) -> None:
        """As the plugin's, but the function call's `output_item.done` goes in one
        write with the events up to the message's "added" (the module's docstring)."""
        for _ in range(400):
            self.loop.run_until_blocked()
            conn = self.conn
            if conn.to_server:
                conn.apply_next()
            elif conn.to_client:
                count = self._together(list(conn.to_client))
                if count > 1:
                    with self.loop.running():
                        self._delivering = self.loop.create_task(conn.deliver_together(count))
                else:
                    self._deliver()
            else:
                return
        super()._settle_delivering()

    def _together(self, events: list[dict[str, Any]]) -> int:
        """How many events from the head go in one write: from the function call's
        `output_item.done` through the message's "added", else one."""
        head = events[0]
        if not (
            head.get("type") == "response.output_item.done"
            and head.get("item", {}).get("call_id") == f"call_{self.output}"
        ):
            return 1
        message = self.config.call(self.cleanup).drops[0]
        for count, event in enumerate(events, start=1):
            if (
                event.get("type") == "conversation.item.added"
                and event.get("item", {}).get("id") == message
            ):
                return count
        return 1

    def observe(self) -> Any:
        """Each op the generation's task sent is tagged with the push it came from, by
        the request it was diffed from (the tool push's holds its output)."""
        tool = self.tracker.records.get(self.tool)
        cleanup = self.tracker.records.get(self.cleanup)
        if cleanup is not None and cleanup.task is not None:
            wanted = (
                None
                if tool is None or tool.request is None
                else tuple(item.id for item in tool.request.items)
            )
            for op in self.rt.sent.values():
                if op.origin is cleanup.task:
                    call = self.tool if tuple(op.request) == wanted else self.cleanup
                    op.origin = _Sender(call)
        return super().observe()


def one_generation_adapter(provider: str) -> type[LivekitAdapter]:
    """The one-generation adapter class over `provider` ("standin" or "plugin")."""
    return OneGenerationPlugin if provider == "plugin" else OneGenerationStandIn
