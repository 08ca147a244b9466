"""The example agent with its discipline broken, made from its own source text.

Each mutant is `examples/callback_session/agent.py` with one edit a real
regression could make, so the same text can be fed both to the conformance
harness (as a class) and to `ackguard audit` (as a file).
"""

from __future__ import annotations

import types
from pathlib import Path

from attrs import frozen

import examples.callback_session.agent as shipped
from examples.callback_session.agent import VoiceAgent

SOURCE = Path(shipped.__file__).read_text()

_GATE = "        async with self.sync_gate:\n"
_UNGATED = "        if True:  # mutant: the gate is gone\n"


@frozen
class Mutant:
    name: str
    source: str

    def agent_class(self) -> type[VoiceAgent]:
        module = types.ModuleType(f"examples.callback_session.agent_{self.name}")
        module.__file__ = f"agent_{self.name}.py"
        exec(compile(self.source, module.__file__, "exec"), module.__dict__)
        agent: type[VoiceAgent] = module.VoiceAgent
        return agent


def _edit(name: str, old: str, new: str, count: int = 1) -> Mutant:
    assert SOURCE.count(old) >= count, f"{name}: the example no longer contains {old!r}"
    return Mutant(name, SOURCE.replace(old, new, count))


#: The user turn syncs without the gate (the seed's original bug).
USER_TURN_UNGATED = _edit("user_turn_ungated", _GATE, _UNGATED)

#: The tool results snapshot the mirror before they wait for the gate.
SNAPSHOT_BEFORE_GATE = _edit(
    "snapshot_before_gate",
    "        async with self.sync_gate:\n"
    "            request = self._session.conversation\n"
    "            for result in results:\n",
    "        request = self._session.conversation\n"
    "        async with self.sync_gate:\n"
    "            for result in results:\n",
)

#: No place takes the gate at all: livekit-agents up to 1.8.8.
NO_GATE = _edit("no_gate", _GATE, _UNGATED, count=SOURCE.count(_GATE))
