"""A deterministic asyncio event loop whose scheduling the harness controls.

There are no timers and no I/O: the only thing a loop iteration does is run the
callbacks that were ready when it began (tasks waking up, future callbacks), as
asyncio's own loop does. Which order they run in is the *scheduler*'s choice:
FIFO (asyncio's order) by default; in scheduler mode each choice among two or
more ready callbacks is a number, drawn by Hypothesis or read back from a
schedule string, so a failing interleaving shrinks and replays exactly.

`run_until_blocked` runs iterations until nothing is ready: every task waits
for something only the harness can give (a delivery, a timeout, a lock).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections import deque
from collections.abc import Callable, Coroutine, Iterator, Sequence
from typing import Any, NoReturn, Protocol, TypeVar

from attrs import frozen

from proofs.errors import LoopError

T = TypeVar("T")


class Scheduler(Protocol):
    def choose(self, ready: int) -> int:
        """Which of `ready` (>= 2) waiting callbacks runs next: 0 is asyncio's order."""
        ...


class Fifo:
    """asyncio's own order."""

    def choose(self, ready: int) -> int:
        return 0


@frozen
class Schedule:
    """A list of choices, one per point where two or more callbacks were ready.

    Printed as the choices joined by dots (`"1.0.2"`; empty: FIFO throughout).
    Past its end every choice is 0, so a prefix of a schedule is a schedule.
    """

    choices: tuple[int, ...] = ()

    def __str__(self) -> str:
        return ".".join(str(choice) for choice in self.choices)

    @classmethod
    def parse(cls, text: str) -> Schedule:
        text = text.strip()
        if not text:
            return cls()
        try:
            choices = tuple(int(part) for part in text.split("."))
        except ValueError:
            raise ValueError(f"a schedule is numbers joined by dots, not {text!r}") from None
        if any(choice < 0 for choice in choices):
            raise ValueError(f"a schedule's choices are not negative: {text!r}")
        return cls(choices)


class Replay:
    """Follows a schedule; a choice beyond the callbacks ready picks the last one.

    `used` records the choices actually made (clamped), so a run's schedule can
    be printed and replayed exactly.
    """

    def __init__(self, schedule: Schedule | Sequence[int] = ()) -> None:
        choices = schedule.choices if isinstance(schedule, Schedule) else tuple(schedule)
        self._choices: deque[int] = deque(choices)
        self.used: list[int] = []

    def choose(self, ready: int) -> int:
        choice = self._choices.popleft() if self._choices else 0
        choice = min(choice, ready - 1)
        self.used.append(choice)
        return choice

    @property
    def schedule(self) -> Schedule:
        """The choices made, without the FIFO tail (which is implied)."""
        used = list(self.used)
        while used and used[-1] == 0:
            used.pop()
        return Schedule(tuple(used))


class _Ready:
    __slots__ = ("args", "callback", "context", "handle")

    def __init__(
        self,
        handle: asyncio.Handle,
        callback: Callable[..., object],
        args: tuple[Any, ...],
        context: contextvars.Context,
    ) -> None:
        self.handle = handle
        self.callback = callback
        self.args = args
        self.context = context


class ControlledLoop(asyncio.AbstractEventLoop):
    """Just enough of an event loop for asyncio tasks, futures and locks."""

    def __init__(self, scheduler: Scheduler | None = None, *, max_callbacks: int = 100_000):
        self.scheduler: Scheduler = scheduler if scheduler is not None else Fifo()
        self._ready: deque[_Ready] = deque()
        self._closed = False
        self._running = False
        self._errors: list[dict[str, Any]] = []
        self._max_callbacks = max_callbacks
        #: Callbacks run so far, and iterations with a real scheduling choice.
        self.callbacks_run = 0
        self.choice_points = 0
        #: When set, the name of every callback run, in order (for replay tests).
        self.log: list[str] | None = None

    # -- driving -------------------------------------------------------------------

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """Make this the running loop, so code outside callbacks can create tasks."""
        if self._running:
            yield
            return
        previous = asyncio._get_running_loop()
        asyncio._set_running_loop(self)
        self._running = True
        try:
            yield
        finally:
            self._running = False
            asyncio._set_running_loop(previous)

    def run_until_blocked(self) -> int:
        """Run loop iterations until no callback is ready; the number of callbacks run."""
        ran = 0
        with self.running():
            while self._ready:
                batch = list(self._ready)
                self._ready.clear()
                while batch:
                    batch = [entry for entry in batch if not entry.handle.cancelled()]
                    if not batch:
                        break
                    index = 0
                    if len(batch) > 1:
                        self.choice_points += 1
                        index = self.scheduler.choose(len(batch))
                        if not 0 <= index < len(batch):
                            raise LoopError(f"scheduler chose {index} of {len(batch)}")
                    self._run(batch.pop(index))
                    ran += 1
                    if ran > self._max_callbacks:
                        raise LoopError("the loop did not settle (a busy task?)")
        self.callbacks_run += ran
        if self._errors:
            errors, self._errors = self._errors, []
            raise LoopError(f"a callback failed: {errors[0].get('message')}") from errors[0].get(
                "exception"
            )
        return ran

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` as a task until everything is blocked; it must have finished."""
        with self.running():
            task = self.create_task(coro)
        self.run_until_blocked()
        if not task.done():
            raise LoopError("the coroutine is still waiting once the loop is blocked")
        return task.result()

    def _run(self, entry: _Ready) -> None:
        if self.log is not None:
            self.log.append(_name(entry.callback))
        try:
            entry.context.run(entry.callback, *entry.args)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as error:
            self.call_exception_handler(
                {"message": f"exception in callback {_name(entry.callback)}", "exception": error}
            )

    def ready_count(self) -> int:
        return len(self._ready)

    # -- what asyncio's tasks and futures use -------------------------------------------

    def call_soon(  # type: ignore[override]
        self,
        callback: Callable[..., object],
        *args: Any,
        context: contextvars.Context | None = None,
    ) -> asyncio.Handle:
        self._check_closed()
        if context is None:
            context = contextvars.copy_context()
        handle = asyncio.Handle(callback, args, self, context)
        self._ready.append(_Ready(handle, callback, args, context))
        return handle

    def call_soon_threadsafe(  # type: ignore[override]
        self,
        callback: Callable[..., object],
        *args: Any,
        context: contextvars.Context | None = None,
    ) -> asyncio.Handle:
        return self.call_soon(callback, *args, context=context)

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any, **kw: Any):  # type: ignore[no-untyped-def, override]
        return self._no_timers()

    def call_at(self, when: float, callback: Callable[..., object], *args: Any, **kw: Any):  # type: ignore[no-untyped-def, override]
        return self._no_timers()

    def _no_timers(self) -> NoReturn:
        """Reported by `run_until_blocked` even when the task that asked swallows it."""
        error = LoopError("virtual time: this loop has no timers (use the VirtualClock)")
        self._errors.append({"message": str(error), "exception": error})
        raise error

    def time(self) -> float:
        return 0.0

    def create_future(self) -> asyncio.Future[Any]:
        return asyncio.Future(loop=self)

    def create_task(  # type: ignore[override]
        self,
        coro: Coroutine[Any, Any, T],
        *,
        name: str | None = None,
        context: contextvars.Context | None = None,
    ) -> asyncio.Task[T]:
        self._check_closed()
        return asyncio.Task(coro, loop=self, name=name, context=context)

    def get_debug(self) -> bool:
        return False

    def set_debug(self, enabled: bool) -> None:
        del enabled

    def is_running(self) -> bool:
        return self._running

    def is_closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        self._closed = True
        self._ready.clear()

    async def shutdown_asyncgens(self) -> None:
        return None

    async def shutdown_default_executor(self, timeout: float | None = None) -> None:
        return None

    def call_exception_handler(self, context: dict[str, Any]) -> None:
        message = str(context.get("message", ""))
        if "was never retrieved" in message or "was destroyed but it is pending" in message:
            return  # reported by the harness from the tasks themselves
        self._errors.append(context)

    def default_exception_handler(self, context: dict[str, Any]) -> None:
        self.call_exception_handler(context)

    def get_exception_handler(self) -> None:
        return None

    def set_exception_handler(self, handler: object) -> None:
        del handler

    def _check_closed(self) -> None:
        if self._closed:
            raise RuntimeError("the loop is closed")


def new_loop(scheduler: Scheduler | None = None) -> ControlledLoop:
    """A controlled loop (the asyncio methods it leaves out raise NotImplementedError)."""
    return ControlledLoop(scheduler)  # type: ignore[abstract]


def _name(callback: Callable[..., object]) -> str:
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, asyncio.Task):
        return owner.get_name()
    if isinstance(owner, asyncio.Future):
        return f"future-callback:{getattr(callback, '__qualname__', repr(callback))}"
    return getattr(callback, "__qualname__", repr(callback))
