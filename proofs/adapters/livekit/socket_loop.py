"""An asyncio selector loop with real sockets and virtual time, stepped by the harness.

The real OpenAI plugin talks over a real websocket (aiohttp's client, the
`websockets` server of `impl.gated_server`), so it needs a loop with I/O; the
conformance loops (`proofs.engines.conformance.loop`) have none. This is
asyncio's own selector loop with two changes:

* `time()` is virtual: it moves only when the harness calls `advance`, so no
  timer of livekit, aiohttp or websockets fires by itself (the plugin's 5 s ack
  wait, `generate_reply`'s 10 s timeout, connect timeouts), and a run's
  interleaving comes from the harness alone. `fire(task, delay)` runs one timer
  that `task` armed with that delay, now, and no other: that is how an ack
  times out for one push (the real `asyncio.wait_for(..., timeout=5.0)` of the
  plugin's `update_chat_ctx`, armed by the push's own task).
* `run_until_blocked` runs loop iterations, polling the sockets without
  waiting, until an iteration has nothing to run and no socket is readable;
  then once more after a short real wait (`SETTLE`), since a loopback write
  is readable by its peer at once but the kernel does not promise it. The gate
  guarantees that nothing else can arrive: the server writes only when told.

It offers what the harness's `Follow` uses of a loop (`running`,
`run_until_blocked`, `advance`, `close`), so a follow over the real plugin
is the engines' own `Follow` with this loop in it.
"""

from __future__ import annotations

import asyncio
import contextlib
import selectors
import time
from collections.abc import Callable, Iterator
from typing import Any

from proofs.errors import LoopError

#: Real seconds of the last poll before the loop is declared blocked.
SETTLE = 0.002
#: Iterations before a run is declared busy (a task that never waits).
MAX_ITERATIONS = 100_000


class SocketLoop(asyncio.SelectorEventLoop):
    """A selector loop whose clock stands still unless advanced (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__(selectors.DefaultSelector())
        self._now = 0.0
        self._poll = 0.0
        self._busy = False
        self._owners: dict[asyncio.TimerHandle, tuple[object, float]] = {}
        self._failures: list[dict[str, Any]] = []
        #: Called each time the loop is blocked; True: it released something, go on
        #: (the adapter lets session traffic through the gate this way).
        self.on_blocked: Callable[[], bool] | None = None
        base: Any = self
        selector = base._selector
        select = selector.select

        def poll(timeout: float | None = None) -> list[Any]:
            del timeout  # never block: the harness decides when to wait
            return list(select(self._poll))

        selector.select = poll  # type: ignore[method-assign]
        self.set_exception_handler(self._record)

    # -- virtual time ------------------------------------------------------------------

    def time(self) -> float:
        return self._now

    def call_at(  # type: ignore[override]
        self,
        when: float,
        callback: Callable[..., object],
        *args: Any,
        context: Any = None,
    ) -> asyncio.TimerHandle:
        handle = super().call_at(when, callback, *args, context=context)
        try:
            owner: object = asyncio.current_task(self)
        except RuntimeError:
            owner = None
        self._owners[handle] = (owner, round(when - self._now, 6))
        return handle

    def advance(self, seconds: float) -> None:
        """Move virtual time on; timers due by then run at the next iteration."""
        self._now += seconds

    def next_timer(self) -> float | None:
        """When the earliest live timer is due (virtual time), or None."""
        live = [h.when() for h in self._internals()._scheduled if not h.cancelled()]
        return min(live) if live else None

    def armed(self, owner: object) -> list[float]:
        """The delays of the live timers `owner` armed."""
        return [
            delay
            for handle, (who, delay) in self._owners.items()
            if who is owner and not handle.cancelled() and handle in self._internals()._scheduled
        ]

    def fire(self, owner: object, delay: float) -> None:
        """Run now the live timer that task `owner` armed with `delay`; no other moves."""
        for handle, (who, armed) in list(self._owners.items()):
            if who is owner and armed == delay and not handle.cancelled():
                if handle not in self._internals()._scheduled:
                    continue
                timer: Any = handle
                callback, args, context = timer._callback, timer._args, timer._context
                handle.cancel()
                self.call_soon(callback, *args, context=context)
                return
        raise LookupError(f"no live {delay} s timer armed by {owner!r}")

    def _internals(self) -> Any:
        """asyncio's base loop, whose private queues the stepping reads."""
        return self

    # -- stepping ------------------------------------------------------------------------

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """Make this the running loop, so code outside callbacks can create tasks."""
        if asyncio._get_running_loop() is self:
            yield
            return
        previous = asyncio._get_running_loop()
        asyncio._set_running_loop(self)
        try:
            yield
        finally:
            asyncio._set_running_loop(previous)

    def _process_events(self, event_list: list[Any]) -> None:
        base = self._internals()
        self._busy = bool(event_list) or bool(base._ready)
        if base._scheduled and base._scheduled[0]._when < self._now + base._clock_resolution:
            self._busy = True
        super()._process_events(event_list)  # type: ignore[misc]

    def _iterate(self, poll: float) -> bool:
        self._poll = poll
        self._run_once()  # type: ignore[attr-defined]
        return self._busy

    def run_until_blocked(self) -> int:
        """Iterate until nothing runs and no socket is readable; the iterations run."""
        iterations = 0
        with self.running():
            while True:
                iterations += 1
                if iterations > MAX_ITERATIONS:
                    raise LoopError("the loop did not settle (a busy task?)")
                if self._iterate(0.0):
                    continue
                if self._iterate(SETTLE):
                    continue
                if self.on_blocked is None or not self.on_blocked():
                    break
        self._owners = {h: o for h, o in self._owners.items() if not h.cancelled()}
        self._raise_failures()
        return iterations

    def run_until(self, done: Callable[[], bool], seconds: float = 10.0) -> None:
        """Iterate until `done()` (real I/O, such as connecting, takes real time)."""
        deadline = time.monotonic() + seconds
        with self.running():
            while not done():
                if time.monotonic() > deadline:
                    raise LoopError(f"not done after {seconds} s of real time")
                self._iterate(0.001)
        self._raise_failures()

    def _record(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        message = str(context.get("message", ""))
        if "was never retrieved" in message or "was destroyed but it is pending" in message:
            return
        self._failures.append(context)

    def _raise_failures(self) -> None:
        if self._failures:
            failures, self._failures = self._failures, []
            raise LoopError(f"a callback failed: {failures[0].get('message')}") from failures[
                0
            ].get("exception")


def new_socket_loop() -> SocketLoop:
    return SocketLoop()
