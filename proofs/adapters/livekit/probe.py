"""Seeing where each push of the real agent activity is, without changing what it does.

livekit-agents has no probes, so the harness reads the running code instead:

* Which scenario call a push belongs to, and from which line of
  `agent_activity.py` it comes, is read from the await chain on the Python
  stack (`site_frame`) when the push touches the session (reads its mirror, takes the activity
  lock, calls `update_chat_ctx`): the activity method's frame and its locals
  (`generation_ev`, `user_input`, `text`) name the call.
* The activity lock of 1.8.9 is swapped, before any push, for the engines'
  `HolderLock`, which also records which task holds it and which wait.

Both ways are generic (`proofs.engines.conformance.probes`); what is livekit's
here is which functions push and how a frame's locals name a scenario call.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from livekit.agents import llm

from proofs.adapters.livekit.standin import AckKey, Probe
from proofs.engines.conformance.probes import HolderLock, site_frame

__all__ = ["SITE_FUNCTIONS", "HolderLock", "Phase", "PushRecord", "Touch", "Tracker"]

#: The activity methods that push, as the audit names them.
SITE_FUNCTIONS = frozenset(
    {
        "update_chat_ctx",
        "_realtime_reply_task",
        "_realtime_generation_task_impl",
        "_tts_task_impl",
    }
)


class Phase(enum.Enum):
    """Where a call's push is, named as the model's program counter."""

    WAIT_ACTIVITY = "wait-activity-lock"
    WAIT_PROVIDER = "wait-provider-lock"
    WAIT_ACKS = "wait-acks"
    DONE = "done"
    FAILED = "failed"


@dataclass
class PushRecord:
    """One scenario call's push, as seen from the session's side."""

    call: int
    task: asyncio.Task[Any] | None
    function: str
    #: The line of agent_activity.py that pushed (None until it called update_chat_ctx).
    line: int | None = None
    #: The ids of the mirror copy the call took (snapshot sites).
    snapshot: tuple[str, ...] | None = None
    #: The object handed to update_chat_ctx, or the live local context a locked
    #: replacement or cleanup will hand over once it has the activity lock.
    request: llm.ChatContext | None = None
    #: The full ids the session read when it diffed, and whether that object was
    #: the live local context then.
    read: tuple[str, ...] | None = None
    bound_at_read: bool = False
    acks: dict[AckKey, asyncio.Future[Any]] = field(default_factory=dict)
    returned: bool = False
    failed: bool = False
    #: Whether it has entered the session's update_chat_ctx.
    entered: bool = False

    def pending(self) -> frozenset[AckKey]:
        return frozenset(key for key, fut in self.acks.items() if not fut.done())


@dataclass
class Touch:
    """A push (or mirror read) the harness could not attribute to a scenario call."""

    function: str
    line: int
    what: str


class Tracker(Probe):
    """Attributes every touch of the session to a scenario call and follows its push."""

    def __init__(
        self,
        identify: Callable[[str, dict[str, Any]], int | None],
        live_context: Callable[[], llm.ChatContext],
        live_calls: frozenset[int],
    ) -> None:
        #: Maps an activity frame (function name, locals) to a call index, or None.
        self._identify = identify
        self._live_context = live_context
        #: Calls that push the live local context object (replacement, cleanup).
        self._live_calls = live_calls
        self.records: dict[int, PushRecord] = {}
        #: Pushes outside any scenario call, once the scenario has started.
        self.stray: list[Touch] = []
        self.started = False

    # -- attribution ---------------------------------------------------------------

    def _record(self, what: str) -> PushRecord | None:
        # from the hook that called _record up
        frame = site_frame(SITE_FUNCTIONS, _is_activity)
        task = asyncio.current_task()
        if frame is None:
            return None
        call = self._identify(frame.f_code.co_name, frame.f_locals)
        if call is None:
            if self.started and what == "push":
                self.stray.append(Touch(frame.f_code.co_name, frame.f_lineno, what))
            return None
        record = self.records.get(call)
        if record is not None and record.returned:
            if what == "push":
                self.stray.append(Touch(frame.f_code.co_name, frame.f_lineno, "second push"))
            return None
        if record is None:
            record = PushRecord(call, task, frame.f_code.co_name)
            self.records[call] = record
        if what == "push":
            record.line = frame.f_lineno
        return record

    # -- hooks ------------------------------------------------------------------------

    def on_activity_lock(self) -> None:
        record = self._record("lock")
        if record is not None and record.request is None and record.call in self._live_calls:
            record.request = self._live_context()

    def on_mirror_read(self, mirror: llm.ChatContext) -> None:
        record = self._record("read")
        if record is not None and record.snapshot is None and not record.entered:
            record.snapshot = tuple(item.id for item in mirror.items)

    def on_push(self, request: llm.ChatContext) -> None:
        record = self._record("push")
        if record is not None:
            record.entered = True
            record.request = request

    def on_diff(self, request: llm.ChatContext, pending: dict[AckKey, asyncio.Future[Any]]) -> None:
        record = self._current()
        if record is not None:
            record.read = tuple(item.id for item in request.items)
            record.bound_at_read = request is self._live_context()
            record.acks = dict(pending)

    def on_return(self, failed: bool) -> None:
        record = self._current()
        if record is not None:
            record.returned = True
            record.failed = failed

    def _current(self) -> PushRecord | None:
        task = asyncio.current_task()
        for record in self.records.values():
            if record.task is task and record.entered and not record.returned:
                return record
        return None


def _is_activity(value: object) -> bool:
    return type(value).__name__ == "AgentActivity"
