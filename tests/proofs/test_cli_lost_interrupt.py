"""A Ctrl-C that Python swallows (raised inside a weakref callback) is raised again
while a command runs (`proofs.cli.main.interrupts_not_lost`)."""

from __future__ import annotations

import gc
import signal
import time
import weakref
from collections.abc import Iterator

import pytest

from proofs.cli.main import interrupts_not_lost


class _Thing:
    pass


@pytest.fixture
def default_ctrl_c() -> Iterator[None]:
    """Ctrl-C raising KeyboardInterrupt, as in a terminal (a test worker may ignore it)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def _lose_an_interrupt() -> None:
    """A KeyboardInterrupt inside a weakref callback: Python reports it as unraisable
    and goes on, as when Ctrl-C lands there; then a second of ordinary work."""
    thing = _Thing()

    def callback(_: object) -> None:
        raise KeyboardInterrupt

    kept = weakref.ref(thing, callback)
    del thing
    gc.collect()
    assert kept() is None
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        time.sleep(0.005)


def test_a_swallowed_interrupt_is_raised_again(default_ctrl_c: None) -> None:
    with pytest.raises(KeyboardInterrupt), interrupts_not_lost():
        _lose_an_interrupt()


def test_without_it_the_interrupt_is_lost(
    default_ctrl_c: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check above can fail: without the hook the work runs to its end, and the
    interrupt is only reported as unraisable."""
    seen: list[type[BaseException] | None] = []
    monkeypatch.setattr("sys.unraisablehook", lambda u: seen.append(u.exc_type))
    _lose_an_interrupt()
    assert seen == [KeyboardInterrupt]


def test_other_unraisable_errors_go_to_the_hook_before(
    default_ctrl_c: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[type[BaseException] | None] = []
    monkeypatch.setattr("sys.unraisablehook", lambda u: seen.append(u.exc_type))
    thing = _Thing()

    def callback(_: object) -> None:
        raise ValueError("not an interrupt")

    with interrupts_not_lost():
        kept = weakref.ref(thing, callback)
        del thing
        gc.collect()
    assert kept() is None and seen == [ValueError]
