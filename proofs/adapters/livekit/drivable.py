"""Which of the model's runs the released livekit code can take, and why not the rest.

Every `before-call` step is driven as what it is in livekit (`LivekitAdapter.born`):
a tool returning ahead of its push, or a `say()` whose playout starts ahead of the
push of its message. A speech started at its `before-call` holds the speech turn
in the model too (`model.moves.speech_held`), so none of those runs is left out.

One kind of run is (`BEHIND`, docs/livekit.md "Runs the real code cannot take"):
in a scenario of two interrupted generations read as two (the catalog's
`cleanup-during-tool-push` under its own records), the model lets the later one
be called once the earlier one's push has returned, with that push's ops or their
answers still in flight (a push whose acks timed out). The real later generation
cannot be there: its `response.create` is sent when the earlier generation is
marked done, behind whatever that one sent on the one socket, so the server
answers it, and the session learns its function call or message, only after
those (`Call.behind_earlier_push`, which the audited pairs set). The runs where
the tool push does follow a timed-out cleanup with its delete in flight are the
scenario's other reading, one generation's two pushes
(`one_generation.one_generation`), which drives them.

The sweeps, the replayed counterexamples and the Hypothesis draws ask
`undrivable`; `check` counts what it names (`not_driven`), by reason.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from attrs import evolve

from model import INTERNAL_MOVES, Config, Move, MoveKind, State, initial_state
from model.moves import behind_earlier_push
from proofs.engines.conformance.lockstep import ModelSide, model_side

__all__ = ["BEHIND", "given", "own_generations", "settled", "undrivable"]

#: Why a run is left out: the later generation called with the earlier one's
#: traffic in flight (the module's docstring).
BEHIND = (
    "the later of two interrupted generations is called with the earlier one's ops "
    "or answers in flight: its reply is behind them on the one socket"
)


def own_generations(config: Config) -> list[int]:
    """The calls that start a generation of their own, not queued behind an earlier
    push: with fewer than two, every run is drivable."""
    return [
        index
        for index, call in enumerate(config.scenario.calls)
        if config.site(index).speech.from_start and not call.behind_earlier_push
    ]


def undrivable(config: Config, moves: Iterable[Move]) -> str | None:
    """Why the real code cannot take `moves`, or None (the module's docstring).

    A Hypothesis draw asks about the run so far and one move more, every step: the
    settled states after each run asked about are kept (`_Runs`), so an answer is
    one step from the run one move shorter, not a replay of the whole run."""
    moves = tuple(moves)
    generations = own_generations(config)
    if len(generations) < 2:
        return None
    runs = _Runs.of(config, generations)
    after = runs.after(moves)
    return after if isinstance(after, str) else None


#: The settled states a run may be in, or the reason it is left out (`BEHIND`).
_After = frozenset[State] | str


class _Runs:
    """What `undrivable` knows of one config's runs: the settled states after each
    run asked about, by its moves. One config at a time (the last one asked about,
    by identity), and at most `LIMIT` runs, so that it stays small."""

    LIMIT = 4096
    _last: _Runs | None = None

    def __init__(self, config: Config, generations: list[int]) -> None:
        calls = tuple(evolve(call, behind_earlier_push=True) for call in config.scenario.calls)
        self.config = config
        self.generations = generations
        self.behind = evolve(config, scenario=evolve(config.scenario, calls=calls))
        self.side = model_side(config)
        self.known: dict[tuple[Move, ...], _After] = {
            (): frozenset(settled(self.side, initial_state(config)))
        }

    @classmethod
    def of(cls, config: Config, generations: list[int]) -> _Runs:
        last = cls._last
        if last is None or last.config is not config or len(last.known) > cls.LIMIT:
            last = cls._last = cls(config, generations)
        return last

    def after(self, moves: tuple[Move, ...]) -> _After:
        """The settled states after `moves`, from the longest run already known."""
        start = len(moves)
        while moves[:start] not in self.known:
            start -= 1
        now = self.known[moves[:start]]
        for end in range(start, len(moves)):
            if isinstance(now, frozenset):
                now = self._step(now, moves[end])
            self.known[moves[: end + 1]] = now
        return now

    def _step(self, states: frozenset[State], move: Move) -> _After:
        if move.kind in INTERNAL_MOVES:
            return states
        if _called_behind(move, self.generations, self.behind, states):
            return BEHIND
        return frozenset(end for state in states for end in given(self.side, state, move))


def _called_behind(
    move: Move, generations: list[int], behind: Config, states: Collection[State]
) -> bool:
    """Whether `move` calls one of `generations` while, in some state the run may be
    in, an earlier one's traffic is in flight (`behind_earlier_push` under `behind`,
    the config with every call marked so)."""
    task = move.task
    if move.kind is not MoveKind.CALL or task is None or task not in generations:
        return False
    return any(behind_earlier_push(state, behind, task) for state in states)


def settled(side: ModelSide, state: State) -> set[State]:
    """The states `state` settles in once every internal move has run."""
    return {end for end in side.closure(state) if not side.internal(end)}


def given(side: ModelSide, state: State, move: Move) -> set[State]:
    """The settled states after the stimulus `move` (by position, for a delivery, as
    the harness gives it); none where the model does not allow it."""
    stimulus = side.stimulus(state, move)
    return set() if stimulus is None else settled(side, side.after(state, stimulus))
