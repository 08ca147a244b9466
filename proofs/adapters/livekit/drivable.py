"""Which of the model's runs the released livekit code can take, and why not the rest.

Every `before-call` step is driven as what it is in livekit (`LivekitAdapter.born`):
a tool returning ahead of its push, or a `say()` whose playout starts ahead of the
push of its message. Every run of the model is one the real code can take, so
`undrivable` names no reason today; the sweeps, the replayed counterexamples and
the Hypothesis draws ask it, so a kind found later has one place to be named and
counted (`not_driven`).

The one kind there was (`docs/livekit.md`, "Runs the real code cannot take"): a
speech started at its `before-call` (a `say()`'s playout, 1.8.9
`agent_activity.py:3453`; an interrupted generation whose tool has returned) is
the current one until its call, and a `say()` starts its playout only with the
turn free. The model now says both (`model.moves.speech_held`,
`model.moves._may_start`), so it no longer lets a call that waits for the turn
(the tool-output push's `while self._current_speech ...`, `:4879`) go during such
a speech, nor starts one while another holds the turn.

The later of two interrupted generations (`Call.behind_earlier_push`) starts only
once the earlier one's traffic is done. The model offers a `before-call` only while
another call can still make an item, so in a two-call scenario without server
items it comes before the earlier call, and the adapters start the later
generation there (`LivekitAdapter._start_later`).
"""

from __future__ import annotations

from collections.abc import Iterable

from model import Config, Move

__all__ = ["undrivable"]


def undrivable(config: Config, moves: Iterable[Move]) -> str | None:
    """Why the real code cannot take `moves`, or None: None for every run of the
    model today (the module's docstring says why)."""
    del config, moves
    return None
