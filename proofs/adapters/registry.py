"""Adapters by name, imported only when asked for.

An engine takes an `AdapterFactory` and never imports a concrete adapter; the
command line and the tests ask this registry for one by name. Importing an
adapter can be expensive (livekit-agents) or impossible (an extra that is not
installed), so each entry names its module and factory as strings, and
`adapter_factory` imports them on first use and says what to install when the
import fails.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, cast

from attrs import frozen

from proofs.errors import UsageError

if TYPE_CHECKING:  # the conformance engine imports Hypothesis: only for the type
    from proofs.engines.conformance import AdapterFactory


@frozen
class AdapterEntry:
    """Where an adapter lives and what it drives."""

    name: str
    module: str
    factory: str
    summary: str
    #: What to install when the module does not import (None: nothing beyond the core).
    install: str | None = None
    #: The session shapes (`model.SHAPES`) it drives, for `ackguard conform --session`
    #: (empty: only when named).
    shapes: tuple[str, ...] = ()
    #: Whether it drives the `reconnects` option (a `Reconnecting` framework).
    reconnects: bool = False


ADAPTERS: dict[str, AdapterEntry] = {
    entry.name: entry
    for entry in (
        AdapterEntry(
            "impl",
            "proofs.adapters.impl.adapter",
            "impl_adapter",
            "ackguard's own asyncio implementation (impl/) over its fake server",
            shapes=("openai", "three-way"),
        ),
        AdapterEntry(
            "duplex",
            "proofs.adapters.duplex.adapter",
            "duplex_adapter_factory",
            "livekit-agents' real _DuplexRealtimeSession (llm/duplex_adapter.py) over a "
            "stand-in duplex session, under impl's sites",
            install="pip install -e '.[livekit]'",
            shapes=("duplex", "duplex-await"),
        ),
        AdapterEntry(
            "gemini",
            "proofs.adapters.gemini.adapter",
            "gemini_adapter_factory",
            "livekit-plugins-google's real Gemini Live RealtimeSession over a stand-in "
            "transport, under impl's sites",
            install="pip install -e '.[livekit]'",
            shapes=("gemini",),
            reconnects=True,
        ),
        AdapterEntry(
            "livekit",
            "proofs.adapters.livekit.adapter",
            "livekit_adapter",
            "the installed livekit-agents release over the stand-in realtime model",
            install="pip install -e '.[livekit]'",
        ),
        AdapterEntry(
            "livekit-plugin",
            "proofs.adapters.livekit.plugin",
            "plugin_adapter",
            "the installed livekit-agents release over its own OpenAI plugin and the gated "
            "websocket (needs a SocketLoop: `ackguard livekit --provider plugin` runs it)",
            install="pip install -e '.[livekit]'",
        ),
        AdapterEntry(
            "example",
            "examples.callback_session.adapter",
            "acme_adapter",
            "the callback-session example of docs/porting.md (from a clone's root)",
            install="run from the root of a clone of ackguard (the example is not installed)",
        ),
    )
}


def adapter_for(shape: str) -> AdapterEntry | None:
    """The first adapter that drives session shape `shape` (None: none does)."""
    for entry in ADAPTERS.values():
        if shape in entry.shapes:
            return entry
    return None


def adapter_factory(name: str) -> AdapterFactory:
    """The factory of adapter `name`, imported now; `UsageError` for an unknown name."""
    entry = ADAPTERS.get(name)
    if entry is None:
        raise UsageError(f"unknown adapter {name!r}; choose from: {', '.join(ADAPTERS)}")
    try:
        module = importlib.import_module(entry.module)
    except ImportError as error:
        hint = f"; {entry.install}" if entry.install else ""
        raise UsageError(f"adapter {name!r} cannot be imported ({error}){hint}") from None
    return cast("AdapterFactory", getattr(module, entry.factory))
