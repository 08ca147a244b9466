"""The real OpenAI realtime session of the installed release, observed, over the gated socket.

Nothing of the session is replaced. `observed(base)` subclasses the release's
own `RealtimeSession` only to see what it does, and each hook calls the real
method and returns what it returns:

* `chat_ctx` (the mirror copy a snapshot site takes): the probe is told;
* `update_chat_ctx`: the probe is told of the push, of its return and whether
  it raised (a `RealtimeError`: the ack wait timed out);
* `_create_update_chat_ctx_events` (the diff against the mirror, inside the
  session's own lock, with no await before the sends): which task diffed, the
  request's ids, and each op's event id;
* `send_event`: an item op's ack future (the session makes it just before
  the send), so the probe knows what each push still waits for; and, where the
  harness says a call is interrupting (`interrupting`), the first
  `response.cancel` after it gets an event id naming that call (`cancels`), so
  the gated server's FIFO and its `response.done` can be told apart from other
  session traffic. The cancel is sent as the release sends it, with one optional
  field of the protocol set.

The session's own `_update_chat_ctx_lock` is swapped, before any push, for a
lock that records holder and waiters (as the activity lock is). Everything
else (the websocket, the mirror kept from `conversation.item.added` /
`.deleted`, the error handling, the 5 s `asyncio.wait_for`, reconnection) is
the release's code, talking to `impl.gated_server` over a real socket.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from livekit.agents import llm
from livekit.plugins.openai import realtime as openai_realtime

from proofs.adapters.livekit.standin import AckKey, Probe
from proofs.engines.conformance.probes import HolderLock

__all__ = ["ObservedModel", "SentOp", "observed_model"]


@dataclass
class SentOp:
    """One item op the real session sent, as the harness names it."""

    kind: str
    item_id: str
    event_id: str
    #: The asyncio task that diffed (the push's task; None: the session's own).
    origin: asyncio.Task[Any] | None
    previous_id: str | None
    #: The ids of the whole request it came from, in order.
    request: tuple[str, ...]


def _type(event: Any) -> str | None:
    kind = getattr(event, "type", None)
    if kind is None and isinstance(event, dict):
        kind = event.get("type")
    return None if kind is None else str(kind)


def _kind(event: Any) -> str | None:
    kind = _type(event)
    return kind if kind in ("conversation.item.create", "conversation.item.delete") else None


def observed(base: type[Any]) -> type[Any]:
    """The release's session class with observing hooks (see the module docstring)."""

    class ObservedSession(base):  # type: ignore[valid-type, misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.probe: Probe = Probe()
            self.lock = HolderLock()
            self._update_chat_ctx_lock = self.lock
            #: Every item op sent, by event id.
            self.sent: dict[str, SentOp] = {}
            self._requests: dict[asyncio.Task[Any] | None, llm.ChatContext] = {}
            self._waits: dict[asyncio.Task[Any] | None, dict[AckKey, asyncio.Future[Any]]] = {}
            #: The call the next `response.cancel` interrupts (set by the harness).
            self.interrupting: int | None = None
            #: Each cancel attributed to a call, by the event id it was given.
            self.cancels: dict[str, int] = {}

        @property
        def chat_ctx(self) -> llm.ChatContext:
            ctx: llm.ChatContext = super().chat_ctx
            self.probe.on_mirror_read(ctx)
            return ctx

        def mirror_items(self) -> list[llm.ChatItem]:
            """The mirror, for the harness (not a snapshot: the probe is not told)."""
            return list(self._remote_chat_ctx.to_chat_ctx().items)

        def mirror_ids(self) -> tuple[str, ...]:
            return tuple(item.id for item in self.mirror_items())

        async def update_chat_ctx(self, chat_ctx: llm.ChatContext) -> None:
            self.probe.on_push(chat_ctx)
            task = asyncio.current_task()
            self._requests[task] = chat_ctx
            failed = False
            try:
                await super().update_chat_ctx(chat_ctx)
            except llm.RealtimeError:
                failed = True
                raise
            finally:
                self._requests.pop(task, None)
                self._waits.pop(task, None)
                self.probe.on_return(failed)

        def _create_update_chat_ctx_events(self, chat_ctx: llm.ChatContext) -> list[Any]:
            events: list[Any] = super()._create_update_chat_ctx_events(chat_ctx)
            task = asyncio.current_task()
            ids = tuple(item.id for item in chat_ctx.items)
            for event in events:
                kind = _kind(event)
                if kind == "conversation.item.delete":
                    self.sent[event.event_id] = SentOp(
                        "delete", event.item_id, event.event_id, task, None, ids
                    )
                elif kind == "conversation.item.create":
                    previous = event.previous_item_id
                    self.sent[event.event_id] = SentOp(
                        "create",
                        event.item.id,
                        event.event_id,
                        task,
                        None if previous in (None, "root") else previous,
                        ids,
                    )
            request = self._requests.get(task)
            if request is not None:
                self._waits[task] = {}
                self.probe.on_diff(request, self._waits[task])
            return events

        def send_event(self, event: Any) -> None:
            # the release's own __init__ sends before this class's fields are set
            interrupting = getattr(self, "interrupting", None)
            if interrupting is not None and _type(event) == "response.cancel":
                call: int = interrupting
                self.interrupting = None
                event_id = f"cancel_T{call}_{len(self.cancels)}"
                if isinstance(event, dict):
                    event["event_id"] = event_id
                else:
                    event.event_id = event_id
                self.cancels[event_id] = call
            kind = _kind(event)
            task = asyncio.current_task()
            if kind is not None and task in self._waits:
                future = self._chat_ctx_event_futures.get(event.event_id)
                if future is not None:
                    item = event.item_id if kind.endswith("delete") else event.item.id
                    self._waits[task][("delete" if kind.endswith("delete") else "create", item)] = (
                        future
                    )
                    request = self._requests.get(task)
                    if request is not None:
                        self.probe.on_diff(request, self._waits[task])
            super().send_event(event)

    ObservedSession.__name__ = f"Observed{base.__name__}"
    return ObservedSession


class ObservedModel(openai_realtime.RealtimeModel):  # type: ignore[misc]
    """The release's `RealtimeModel`, whose sessions are observed; text only, no server VAD."""

    def __init__(self, base_url: str) -> None:
        super().__init__(base_url=base_url, api_key="x", modalities=["text"], turn_detection=None)
        self.session_class = observed(openai_realtime.RealtimeSession)
        self.sessions: list[Any] = []

    def session(self, *args: Any, **kwargs: Any) -> Any:
        session = self.session_class(self, *args, **kwargs)
        self._sessions.add(session)
        self.sessions.append(session)
        return session


def observed_model(base_url: str) -> ObservedModel:
    return ObservedModel(base_url)
