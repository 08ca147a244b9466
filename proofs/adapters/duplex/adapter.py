"""livekit-agents' real `_DuplexRealtimeSession` (`llm/duplex_adapter.py`) in lockstep
with the model, over a stand-in duplex session.

The real class is built as livekit builds it, over `StandInDuplex`, which is
only what it touches here: event hooks, an audio stream that stays silent, and
`_append_items`, whose appends become ops to the shared append-only stand-in
server. Its append either never yields (the `duplex` shape, as GPT Live's) or
yields once before it returns (`duplex-await`, as the `async def` contract
allows), so a second push can diff before the first sets the mirror.

Every model move is one step of the real class: a call is a push through its
real `update_chat_ctx`; the append returning is the model's resume, which the
task makes on its own; the server applying an append is the stand-in's; the
model's own item arriving is a final `input_audio_transcription_completed`
event of the duplex session, which the real handler inserts into the mirror;
a rejection is the duplex session's `error` event. The duplex protocol has no
event for an append the server took, so that echo reaches the session as
nothing (it acknowledges nothing, as in the model). The shape has no reconnect
of its own.

An append carries no anchor on the wire; the model's op names the item before
it in the request (what the real diff computes and drops), so the bridge
reports that.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

from livekit.agents import llm
from livekit.agents.llm import duplex_adapter

from model import EventKind, OpKind, SessionShape
from proofs.adapters.duplex.agent import RealSessionFramework
from proofs.engines.conformance import AdapterFactory, StandIn, WireOp, compose


class StandInDuplex:
    """The duplex session under the real adapter class, talking to the stand-in."""

    def __init__(
        self, server: StandIn, requests: dict[object, tuple[str, ...]], *, yields: bool
    ) -> None:
        self.server = server
        self.yields = yields
        self.handlers: dict[str, Callable[[Any], None]] = {}
        #: The request each push task handed the real session, for the anchors.
        self.requests = requests
        self.tools = llm.ToolContext.empty()

    def on(self, event: str, handler: Callable[[Any], None]) -> None:
        self.handlers[event] = handler

    @property
    async def audio_stream(self) -> AsyncIterator[Any]:
        await asyncio.Event().wait()  # the model never speaks in these runs
        yield

    async def _append_items(self, items: list[llm.ChatItem]) -> None:
        origin = asyncio.current_task()
        request = self.requests.get(origin, ())
        for item in items:
            position = request.index(item.id) if item.id in request else 0
            after = request[position - 1] if position else None
            self.server.send(WireOp(OpKind.CREATE, item.id, after, item, origin))
        if self.yields:
            await asyncio.sleep(0)

    async def aclose(self) -> None:
        return None

    # -- what the server says, as the duplex session says it -----------------------

    def deliver(self) -> None:
        event = self.server.delivered[0]
        if event.kind is EventKind.ADDED and event.answers is None:
            self.server.take()
            self.handlers["input_audio_transcription_completed"](
                llm.InputTranscriptionCompleted(
                    item_id=event.item, transcript=event.item, is_final=True
                )
            )
        elif event.kind is EventKind.REJECTED:
            self.server.take()
            self.handlers["error"](RuntimeError(event.reason))
        else:  # no event for an append the server took: nothing is acknowledged
            self.server.take(acknowledge=False)


class _SilentGate:
    """An audio gate for a session that never hears audio in these runs."""

    def update(self, frame: object) -> bool:
        return False

    def deactivate(self) -> None:
        return None


class DuplexFramework(RealSessionFramework):
    """The real `_DuplexRealtimeSession` under impl's sites."""

    shapes = ("duplex", "duplex-await")
    what = "livekit's _DuplexRealtimeSession"
    #: The class under test (a test swaps in a mutant).
    session_class: type[Any] = duplex_adapter._DuplexRealtimeSession

    def build(self, shape: SessionShape) -> Any:
        self.duplex = StandInDuplex(self.server, self.requests, yields=shape.name == "duplex-await")
        self.server.on_deliver = self.duplex.deliver
        session = self.session_class(
            adapter=None,  # only its events are used
            duplex=self.duplex,
            gate=_SilentGate(),
            audio_timeout=1.0,
        )
        session._chat_ctx = llm.ChatContext([self.livekit[i] for i in self.config.scenario.server])
        return session

    def close(self) -> None:
        super().close()
        self.real._segment_atask.cancel()


#: The adapter factory the registry names `duplex`.
duplex_adapter_factory: AdapterFactory = compose(DuplexFramework)
