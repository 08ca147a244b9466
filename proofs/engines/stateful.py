"""Hypothesis stateful testing of the model: one rule per move, invariants as
`@invariant`, so Hypothesis searches interleavings at random and shrinks a
violation to a short list of moves.

`model_machine(config)` returns a `RuleBasedStateMachine` subclass for one
configuration; its `TestCase` runs under pytest.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from model import Config, Invariant, Move, MoveKind, State, check, initial_state, successors


def model_machine(config: Config) -> type[RuleBasedStateMachine]:
    """A state machine over `config`'s model; each rule is one kind of move.

    A rule runs only when a move of its kind is enabled, and draws which one
    (which task, which item), so shrinking works on the choice of move.
    """

    class ModelMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.state = initial_state(config)
            self.moves: list[Move] = []
            self._successors: dict[MoveKind, list[tuple[Move, State]]] | None = None

        def enabled(self, kind: MoveKind) -> list[tuple[Move, State]]:
            # every rule's precondition asks; compute the successors once a state
            if self._successors is None:
                self._successors = {}
                for move, successor in successors(self.state, config):
                    self._successors.setdefault(move.kind, []).append((move, successor))
            return self._successors.get(kind, [])

        def take(self, kind: MoveKind, data: st.DataObject) -> None:
            enabled = dict(self.enabled(kind))
            move = data.draw(st.sampled_from(sorted(enabled)), label=kind.value)
            self.state = enabled[move]
            self._successors = None
            self.moves.append(move)

        @precondition(lambda self: not any(True for _ in successors(self.state, config)))
        @rule()
        def finished(self) -> None:
            """Every task is done and nothing is in flight: nothing left to do."""

        @invariant()
        def no_unintended_delete(self) -> None:
            self._check(Invariant.NO_UNINTENDED_DELETE)

        @invariant()
        def agreement_at_rest(self) -> None:
            self._check(Invariant.AGREEMENT_AT_REST)

        @invariant()
        def mirror_true_at_rest(self) -> None:
            self._check(Invariant.MIRROR_TRUE_AT_REST)

        @invariant()
        def nothing_twice(self) -> None:
            self._check(Invariant.NOTHING_TWICE)

        def _check(self, which: Invariant) -> None:
            violation = check(self.state, config, which)
            if violation is not None:
                labels = ", ".join(move.label() for move in self.moves)
                raise AssertionError(f"{violation.describe()} after: {labels}")

    for kind in MoveKind:
        setattr(ModelMachine, kind.name.lower(), _rule_for(kind))

    ModelMachine.__name__ = (
        (
            f"Model_{config.variant.name}_{config.shape.name}_{config.scenario.name}_"
            f"{config.environment.name}"
        )
        .replace("-", "_")
        .replace("+", "_")
    )
    return ModelMachine


def _rule_for(kind: MoveKind) -> Callable[..., None]:
    """One rule per kind of move, run only when such a move is enabled."""

    def enabled(machine: Any) -> bool:
        return bool(machine.enabled(kind))

    def take(machine: Any, data: st.DataObject) -> None:
        machine.take(kind, data)

    take.__name__ = take.__qualname__ = kind.name.lower()
    return precondition(enabled)(rule(data=st.data())(take))
