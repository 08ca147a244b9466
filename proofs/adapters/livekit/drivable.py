"""Which of the model's runs the released livekit code can take, and why not the rest.

Every `before-call` step is driven as what it is in livekit (`LivekitAdapter.born`):
a tool returning ahead of its push, or a `say()` whose playout starts ahead of the
push of its message. Two kinds of the model's runs have no real counterpart,
because the model lets a call or a tool move where livekit's speech scheduler
does not (`docs/livekit.md`, "Runs the real code cannot take"):

* `SPEECH_HOLDS_TURN`: the `before-call` step of a speech starts it, and a
  started speech is the current one until its push: a `say()` whose playout has
  started (1.8.9 `agent_activity.py`, `_tts_task_impl` marks its generation done
  only after playout, `:3453`), or of two interrupted generations either of
  which may be current at the start, the one whose tool has returned (it ran).
  The model's `before-call` holds no turn, so it lets a call that waits for the
  turn (the tool-output push's `while self._current_speech or self._speech_q`,
  `:4879`; a reply, whose interruption would cancel the running generation
  instead) be made during that speech, or starts a playout while another speech
  holds the turn.
* `GENERATION_NOT_STARTED`: the later of two interrupted generations is a reply
  sent once the earlier one is marked done, behind its push on the one socket
  (`Call.behind_earlier_push`); its tool cannot return before its function call
  has arrived, while the model's `before-call` of it is bounded by nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from model import Config, Move, MoveKind, State, initial_state
from model.moves import behind_earlier_push, speech_held
from model.sites import SpeechTurn
from proofs.engines.conformance.lockstep import model_side

__all__ = ["GENERATION_NOT_STARTED", "SPEECH_HOLDS_TURN", "undrivable"]

SPEECH_HOLDS_TURN = "a speech started at its before-call holds the speech turn"
GENERATION_NOT_STARTED = "a later generation's tool returns before its reply can start"


def _plays(config: Config, task: int) -> bool:
    """Whether call `task`'s `before-call` happens inside a speech of its own, which
    is current from then (a `say()`'s playout, an interrupted generation's run)."""
    speech = config.site(task).speech
    return speech is SpeechTurn.WAITS_THEN_YIELDS or speech.from_start


def undrivable(config: Config, moves: Iterable[Move]) -> str | None:
    """Why the real code cannot take `moves` (one of the kinds above), or None.

    The model's states are followed along the stimuli (each stimulus may end in
    any state of its closure, as `Follow.sequences` branches); a run is left out
    only when every state the model may be in says so."""
    side = model_side(config)
    states: set[State] = {side.canonical(initial_state(config))}
    playing: set[int] = set()
    for move in moves:
        if move.kind is MoveKind.BEFORE_CALL and move.task is not None:
            task = move.task
            if config.call(task).behind_earlier_push and all(
                behind_earlier_push(s, config, task) for s in states
            ):
                return GENERATION_NOT_STARTED
            if _plays(config, task):
                if all(speech_held(s, config, task) for s in states):
                    return SPEECH_HOLDS_TURN
                playing.add(task)
        elif move.kind is MoveKind.CALL and move.task is not None:
            if move.task in playing:
                playing.discard(move.task)
            elif playing and config.site(move.task).speech.waits:
                return SPEECH_HOLDS_TURN
        states = {
            successor
            for state in states
            if move in side.stimuli(state)
            for successor in side.closure(side.after(state, move))
            if not side.internal(successor)
        }
    return None
