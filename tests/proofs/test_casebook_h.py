"""Case 5 of the casebook (agents-js #1843): the rebuild after a reconnect leaves out
function calls and outputs, and what the proposed fix does with an orphaned output."""

from __future__ import annotations

import attrs
import pytest

from model import Config, Environment, Invariant, Move, MoveKind, State, Verdict, step
from model.cases import CASES_BY_NAME, Case, Fix
from model.moves import initial_state
from proofs.engines.casebook import config_of, judge

CASE: Case = CASES_BY_NAME["agents-js-1843"]
RECONNECTS = Environment(reconnects=True)


def _fix(name: str) -> Fix:
    return next(fix for fix in CASE.configurations if fix.name == name)


def _run(fix: str, moves: list[Move]) -> tuple[Config, State]:
    config = config_of(CASE, _fix(fix), RECONNECTS)
    state = initial_state(config)
    for move in moves:
        state = step(state, config, move)
    return config, state


#: The report's path: the connection drops and comes back, the rebuild (msg0 only)
#: reaches the mirror, then the tool returns and pushes its output.
_ORPHAN = [
    Move(MoveKind.DISCONNECT),
    Move(MoveKind.CONNECT),
    Move(MoveKind.CLIENT_APPLY, None, "msg0"),
    Move(MoveKind.CALL, 0),
]


def test_every_cell_of_the_case_is_as_its_record_says() -> None:
    from model.scenarios import validate

    validate(CASE.scenario)
    assert [fix.name for fix in CASE.configurations] == ["before", "pr-1843", "python"]
    rows = judge(CASE)
    assert rows and all(row.matches for row in rows), [r for r in rows if not r.matches]
    lost = {
        row.fix: row.violation.item
        for row in rows
        if row.violation is not None and row.invariant is Invariant.AGREEMENT_AT_REST
    }
    # the rebuild without function items loses the function call, fix or no fix;
    # the Python rebuild loses only what a second drop inside the rebuild window costs
    assert lost == {"before": "call1", "pr-1843": "call1", "python": "msg0"}


def test_before_the_fix_the_orphaned_output_is_sent_and_refused() -> None:
    config, state = _run("before", _ORPHAN)
    assert state.server == ("msg0",) and "call1" not in state.mirror
    assert [(op.item, op.after) for op in state.to_server] == [("out1", "msg0")]
    state = step(state, config, Move(MoveKind.SERVER_APPLY, 0, "out1"))
    assert "out1" in state.refused and state.server == ("msg0",)


def test_with_pr_1843_the_orphaned_output_is_dropped_and_never_in_the_local_context() -> None:
    config, state = _run("pr-1843", _ORPHAN)
    assert not state.to_server and state.tasks[0].dropped == frozenset({"out1"})
    assert "out1" not in state.local and "out1" not in state.sent
    # at rest the function call is still missing: 2(a) fails on call1, not on out1
    from model import check

    violation = check(state, config, Invariant.AGREEMENT_AT_REST)
    assert violation is not None and violation.item == "call1"


def test_the_mutant_that_rebuilds_everything_keeps_the_call_and_the_output() -> None:
    """The check catches the rebuild's omission: with the function items rebuilt the
    same path loses nothing."""
    from model.shapes import Rebuilds
    from proofs.engines.explore import explore

    whole = attrs.evolve(_fix("before").shape, rebuilds=Rebuilds.EVERYTHING)
    config = attrs.evolve(config_of(CASE, _fix("before"), RECONNECTS), shape=whole)
    state = initial_state(config)
    for move in _ORPHAN:
        state = step(state, config, move)
    assert state.server == ("msg0", "call1")
    assert [(op.item, op.after) for op in state.to_server] == [("out1", "msg0")]
    # explored: the only loss left is the second drop inside the rebuild window
    found = explore(config, (Invariant.AGREEMENT_AT_REST,)).findings[0]
    assert found.verdict is Verdict.COUNTEREXAMPLE and found.violation is not None
    assert found.violation.item == "msg0"


def test_the_z3_and_first_order_sides_refuse_the_reconnect_shapes() -> None:
    """They model neither the released reconnect nor an orphan check: each says so
    rather than claiming a proof."""
    from model import SHAPES_BY_NAME, SITES_BY_NAME, VARIANTS_BY_NAME
    from proofs.engines.fol.modelled import coverage, covers
    from proofs.engines.fol.system import Cell
    from proofs.engines.smt.encoding import refuse_unmodelled
    from proofs.errors import UnsupportedConfig

    shapes = [fix.shape for fix in CASE.configurations] + [SHAPES_BY_NAME["openai-reconnect"]]
    for shape in shapes:
        config = config_of(CASE, _fix("before"), Environment())
        with pytest.raises(UnsupportedConfig):
            refuse_unmodelled(attrs.evolve(config, shape=shape))
        cell = Cell(
            VARIANTS_BY_NAME["lock5"], (SITES_BY_NAME["tool-outputs"],), Environment(), shape=shape
        )
        assert not covers(cell) and "does not model session shape" in coverage(cell)
