"""Which of the model's runs the released livekit code can take, and why not the rest.

Every `before-call` step is driven as what it is in livekit (`LivekitAdapter.born`):
a tool returning ahead of its push, or a `say()` whose playout starts ahead of the
push of its message. A speech started at its `before-call` holds the speech turn in
the model as in livekit (`model.moves.speech_held`): a `say()` whose playout has
started (1.8.9 `agent_activity.py`, `_tts_task_impl` marks its generation done only
after playout, `:3453`), or, of two interrupted generations either of which may be
current at the start, the one whose tool has returned, is the current speech until
its call, so no call that waits for the turn (the tool-output push's `while
self._current_speech or self._speech_q`, `:4879`) is made in between.

One kind of the model's runs still has no real counterpart (`docs/livekit.md`,
"Runs the real code cannot take"): `SPEECH_HOLDS_TURN`, the model's `before-call`
of such a speech taken while another speech holds the turn. A `say()` waits for
its turn before its playout starts, and an interrupted generation's tool runs only
in the generation that is current; the model offers the step whatever the turn.

The later of two interrupted generations (`Call.behind_earlier_push`) starts only
once the earlier one's traffic is done. The model offers a `before-call` only while
another call can still make an item, so in a two-call scenario without server
items it comes before the earlier call, and the adapters start the later
generation there (`LivekitAdapter._start_later`).
"""

from __future__ import annotations

from collections.abc import Iterable

from model import Config, Move, MoveKind, State, initial_state
from model.moves import speech_held
from model.sites import SpeechTurn
from proofs.engines.conformance.lockstep import model_side

__all__ = ["SPEECH_HOLDS_TURN", "undrivable"]

SPEECH_HOLDS_TURN = "a speech started at its before-call while another holds the speech turn"


def _plays(config: Config, task: int) -> bool:
    """Whether call `task`'s `before-call` happens inside a speech of its own, which
    is current from then (a `say()`'s playout, an interrupted generation's run)."""
    speech = config.site(task).speech
    return speech is SpeechTurn.WAITS_THEN_YIELDS or speech.from_start


def _starts_while_held(config: Config, move: Move, states: set[State]) -> bool:
    """Whether `move` starts a speech at its `before-call` while, in every state the
    model may be in, another speech holds the turn."""
    task = move.task
    if move.kind is not MoveKind.BEFORE_CALL or task is None or not _plays(config, task):
        return False
    return all(speech_held(s, config, task) for s in states)


def undrivable(config: Config, moves: Iterable[Move]) -> str | None:
    """Why the real code cannot take `moves` (`SPEECH_HOLDS_TURN`), or None.

    The model's states are followed along the stimuli (each stimulus may end in
    any state of its closure, as `Follow.sequences` branches); a run is left out
    only when every state the model may be in says so."""
    side = model_side(config)
    states: set[State] = {side.canonical(initial_state(config))}
    for move in moves:
        if _starts_while_held(config, move, states):
            return SPEECH_HOLDS_TURN
        states = {
            successor
            for state in states
            if move in side.stimuli(state)
            for successor in side.closure(side.after(state, move))
            if not side.internal(successor)
        }
    return None
