"""Work in worker processes, each job with a wall-clock deadline, all stopped at once on Ctrl-C.

`concurrent.futures` cannot stop one running job, and a z3 query returns to Python
only at its own time limit; `ackguard verify` needs both a per-job limit and a stop
within 2 s of Ctrl-C. So each job is a process of its own, forked clean from a fork
server, sending its one result back over a pipe; a job past its deadline, or every job
on Ctrl-C, is terminated. A fresh process per job also makes each result a function of
its job alone: z3's choice among equal answers depends on every term its context built
before.

A job whose result is a function of its arguments alone (the explorer's: no z3, no
state a later job could read) may instead run in a worker that is kept for the next
such job (`kept_worker`): starting a process per job cost `ackguard verify` about
20 ms a job, and it runs some 140 explorer groups. A kept worker past its deadline
is terminated as any other, and the next job gets a new one.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import signal
import sys
import time
import traceback
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any, TypeVar

from attrs import frozen

from proofs.errors import InternalError

#: How long the parent waits on the pipes before it looks at the deadlines again.
_POLL = 0.05


@frozen
class Finished:
    """One job's end: its value, or `timed_out` with no value."""

    key: Hashable
    value: Any
    timed_out: bool
    seconds: float


#: The functions whose jobs run in kept workers, by (module, qualified name): the same
#: name in the parent and in a worker, which imports the module itself.
_KEPT: set[tuple[str, str]] = set()

_F = TypeVar("_F", bound=Callable[..., Any])


def kept_worker(fn: _F) -> _F:
    """Mark `fn` as one whose jobs may share a worker process: its result must depend
    on its arguments alone, whatever ran in that process before."""
    _KEPT.add((fn.__module__, fn.__qualname__))
    return fn


@frozen
class _Job:
    key: Hashable
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    timeout: float

    @property
    def kept(self) -> bool:
        return (self.fn.__module__, self.fn.__qualname__) in _KEPT


class _Running:
    def __init__(self, job: _Job, process: Any, conn: Any) -> None:
        self.job = job
        self.process = process
        self.conn = conn
        self.started = time.monotonic()


@frozen
class _Worker:
    """A kept worker waiting for its next job."""

    process: Any
    conn: Any


def _child(conn: Any, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    """A worker leaves Ctrl-C to the parent, which terminates it; z3 must not take it
    either (it would cancel a query, which reads as a cell out of time)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import z3

        z3.set_param("ctrl_c", False)
    except ImportError:  # pragma: no cover - z3 is a dependency
        pass
    try:
        conn.send(("ok", fn(*args)))
    except BaseException:
        conn.send(("error", traceback.format_exc()))
    finally:
        conn.close()


def _serve(conn: Any) -> None:
    """A kept worker: each `(fn, args)` it receives run, and its answer sent back, until
    the parent closes the pipe or sends None."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        fn, args = job
        try:
            conn.send(("ok", fn(*args)))
        except BaseException:
            conn.send(("error", traceback.format_exc()))


def context(preload: Sequence[str]) -> multiprocessing.context.BaseContext:
    """A fork server that has imported `preload` (Linux, macOS); elsewhere, spawn."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    # A console script (`ackguard`) is run again as each child's main module, which
    # imports what the parent had imported, once per job (Python 3.11's fork server
    # is not given the main path to preload it). Preloading the parent's own modules
    # pays that once: `ackguard verify` took 30 s against 8 s for `python -m`.
    own = sorted(name for name in sys.modules if name.partition(".")[0] in _OWN_PACKAGES)
    ctx.set_forkserver_preload([*preload, *own])
    return ctx


#: The packages whose modules a fork server preloads for its children.
_OWN_PACKAGES = frozenset({"model", "impl", "proofs"})


class Jobs:
    """A queue of jobs run `workers` at a time; more may be submitted while it runs."""

    def __init__(self, workers: int, preload: Sequence[str] = ()) -> None:
        self.workers = max(1, workers)
        self.context = context(preload)
        self.queue: list[_Job] = []
        self.running: list[_Running] = []
        self.idle: list[_Worker] = []
        self.submitted = 0
        self.finished = 0

    def submit(
        self, key: Hashable, fn: Callable[..., Any], args: tuple[Any, ...], timeout: float
    ) -> None:
        """Queue `fn(*args)` (picklable, importable by name) under `key`."""
        self.queue.append(_Job(key, fn, args, timeout))
        self.submitted += 1

    def results(self) -> Iterator[Finished]:
        """Each job's end, as it comes. On Ctrl-C every worker is terminated before the
        KeyboardInterrupt goes on."""
        try:
            while self.queue or self.running:
                self._start()
                yield from self._collect()
        except BaseException:
            self.stop()
            raise
        self._close_idle()

    def _start(self) -> None:
        while self.queue and len(self.running) < self.workers:
            job = self.queue.pop(0)
            if job.kept:
                worker = self.idle.pop() if self.idle else self._new_worker()
                worker.conn.send((job.fn, job.args))
                self.running.append(_Running(job, worker.process, worker.conn))
                continue
            receive, send = self.context.Pipe(duplex=False)
            process = self.context.Process(target=_child, args=(send, job.fn, job.args))  # type: ignore[attr-defined]
            # Ctrl-C waits until the worker is in `running`: one that started unseen would
            # outlive the run, keeping its standard output open
            with _sigint_held():
                process.start()
                send.close()
                self.running.append(_Running(job, process, receive))

    def _new_worker(self) -> _Worker:
        here, there = self.context.Pipe(duplex=True)
        # daemonic: one left waiting for a job is ended when the parent exits
        process = self.context.Process(target=_serve, args=(there,), daemon=True)  # type: ignore[attr-defined]
        with _sigint_held():
            process.start()
            there.close()
        return _Worker(process, here)

    def _collect(self) -> Iterator[Finished]:
        if not self.running:
            return
        now = time.monotonic()
        soonest = min(r.started + r.job.timeout - now for r in self.running)
        wait = max(0.0, min(_POLL, soonest))
        ready = multiprocessing.connection.wait([r.conn for r in self.running], timeout=wait)
        now = time.monotonic()
        for run in list(self.running):
            # an answer that comes after the deadline is as late as none: the limit is
            # the same however the polling falls
            late = now - run.started > run.job.timeout
            if run.conn in ready and not late:
                try:
                    status, value = run.conn.recv()
                except EOFError:
                    status, value = "error", f"the worker ended with exit code {_ended(run)}"
                if status == "ok" and run.job.kept:
                    self.running.remove(run)
                    self.finished += 1
                    self.idle.append(_Worker(run.process, run.conn))
                else:
                    self._forget(run)
                if status == "error":
                    raise InternalError(f"a verify job failed ({run.job.key!r}):\n{value}")
                yield Finished(run.job.key, value, False, now - run.started)
            elif late:
                run.process.terminate()
                self._forget(run)
                yield Finished(run.job.key, None, True, now - run.started)

    def _forget(self, run: _Running) -> None:
        run.conn.close()
        if run.job.kept:
            run.process.terminate()
        _reap(run.process)
        self.running.remove(run)
        self.finished += 1

    def _close_idle(self) -> None:
        """Let the kept workers end (each leaves its loop on None), and wait for them."""
        for worker in self.idle:
            with contextlib.suppress(OSError):
                worker.conn.send(None)
            worker.conn.close()
        for worker in self.idle:
            _reap(worker.process)
        self.idle.clear()

    def stop(self) -> None:
        """Terminate every worker and forget what has not started."""
        self.queue.clear()
        for worker in self.idle:
            worker.process.terminate()
        self._close_idle()
        for run in self.running:
            run.process.terminate()
        for run in self.running:
            _reap(run.process)
            run.conn.close()
        self.running.clear()


@contextlib.contextmanager
def _sigint_held() -> Iterator[None]:
    """SIGINT held back (POSIX), and delivered when the block ends."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _reap(process: Any) -> None:
    """Wait a second for a worker to end, then kill it: no process outlives the pool."""
    process.join(1.0)
    if process.is_alive():
        process.kill()
        process.join()


def _ended(run: _Running) -> object:
    run.process.join(1.0)
    return run.process.exitcode
