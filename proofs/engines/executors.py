"""Where a sweep's jobs run: a local process pool, or a Dask cluster.

Both are `concurrent.futures.Executor`s: the pool is the standard library's, and
a Dask cluster is reached through Dask's own executor interface
(`distributed.Client.get_executor()`), so the sweep has one code path and no
protocol of its own. Dask is an optional extra (`ackguard[dask]`).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager

from proofs.errors import UsageError


@contextmanager
def local_pool(workers: int | None = None) -> Iterator[Executor]:
    """A process pool of `workers` processes (default: one per core)."""
    count = workers or os.cpu_count() or 1
    # forkserver: no copy of the parent's threads or state in the workers
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(max_workers=count, mp_context=context) as pool:
        yield pool


@contextmanager
def dask_executor(address: str, timeout: float = 10.0) -> Iterator[Executor]:
    """An executor on the Dask scheduler at `address` (e.g. `tcp://10.0.0.5:8786`).

    Its workers must be able to import ackguard (the same release as here): the
    jobs are `proofs.engines.sweep.run_job` and its picklable arguments.
    """
    try:
        from distributed import Client
    except ImportError:
        raise UsageError(
            "--scheduler needs Dask's distributed package: pip install 'ackguard[dask]'"
        ) from None
    try:
        client = Client(address, timeout=timeout)  # type: ignore[no-untyped-call]
    except OSError as error:
        raise UsageError(f"cannot reach the Dask scheduler at {address}: {error}") from None
    try:
        with client.get_executor() as executor:  # type: ignore[no-untyped-call]
            yield executor
    finally:
        client.close()  # type: ignore[no-untyped-call]
