"""Conformance of livekit-agents' real `_DuplexRealtimeSession` against the model.

The real class (`livekit.agents.llm.duplex_adapter`) runs over a stand-in duplex
session (`adapter.StandInDuplex`) whose appends go to the shared append-only
stand-in server; the sites above it are impl's (`agent`). The names below are
imported on first use, so this face imports without livekit installed.
"""

import typing as _typing

import proofs.lazy as _lazy

if _typing.TYPE_CHECKING:
    from proofs.adapters.duplex.adapter import DuplexFramework, duplex_adapter_factory

_WHERE = {
    "DuplexFramework": "proofs.adapters.duplex.adapter",
    "duplex_adapter_factory": "proofs.adapters.duplex.adapter",
}

__all__ = ["DuplexFramework", "duplex_adapter_factory"]

__getattr__, __dir__ = _lazy.face(__name__, _WHERE, __all__, globals())
