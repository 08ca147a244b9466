"""Conformance of livekit-plugins-google's real Gemini Live session against the model.

The real `RealtimeSession` runs with its `genai` client replaced by a stand-in
transport (`adapter.StandInClient`) whose sends go to the shared append-only
stand-in server; the sites above it are impl's. The names below are imported
on first use, so this face imports without the plugin installed.
"""

import typing as _typing

import proofs.lazy as _lazy

if _typing.TYPE_CHECKING:
    from proofs.adapters.gemini.adapter import GeminiFramework, gemini_adapter_factory

_WHERE = {
    "GeminiFramework": "proofs.adapters.gemini.adapter",
    "gemini_adapter_factory": "proofs.adapters.gemini.adapter",
}

__all__ = ["GeminiFramework", "gemini_adapter_factory"]

__getattr__, __dir__ = _lazy.face(__name__, _WHERE, __all__, globals())
