"""Parameterized proofs: one cell proved for every size, mutants breaking its invariant's
consecution, and a failing cell falling back to the explorer's trace."""

from __future__ import annotations

import pytest

from model import (
    ENVIRONMENTS_BY_NAME,
    SITES_BY_NAME,
    VARIANTS_BY_NAME,
    Invariant,
    check,
)
from proofs.engines.fol import (
    FAILS,
    PROVED,
    SAFETY,
    Cell,
    FiniteSorts,
    Outcome,
    Problem,
    Sample,
    mixes,
    prove,
    reachable,
    state_lines,
    structure,
)
from proofs.engines.fol.data import config_of
from proofs.engines.fol.proving import check_invariant
from proofs.engines.trace import replay

BASE = ENVIRONMENTS_BY_NAME["base"]


def _cell(variant: str, sites: tuple[str, ...], mutant: str | None = None) -> Cell:
    return Cell(VARIANTS_BY_NAME[variant], tuple(SITES_BY_NAME[s] for s in sites), BASE, mutant)


@pytest.fixture(scope="module")
def tool_outputs() -> Outcome:
    return prove(_cell("three-way", ("tool-outputs",)), finite=(2, 2))


def test_three_way_tool_outputs_is_proved_for_every_size(tool_outputs: Outcome) -> None:
    assert tool_outputs.status == PROVED
    assert SAFETY in tool_outputs.invariant
    assert tool_outputs.scope.startswith(
        "every number of calls of sites {tool-outputs} and every number of items"
    )
    assert "each call pushes once" in tool_outputs.assumptions
    # the three-way session diffs by membership in the model too: no order assumption
    assert not any("agrees with the mirror" in a for a in tool_outputs.assumptions)
    # snapshot sites never delete, so no state enables the delete actions; the outcome
    # says so instead of counting them as checked
    assert set(tool_outputs.disabled) == {
        "server applies a delete",
        "client applies a deleted event",
        "client applies a rejected delete",
    }


def test_the_invariant_holds_on_larger_mixes_than_it_was_found_on(tool_outputs: Outcome) -> None:
    cell = tool_outputs.cell
    structures = [
        structure(state, config_of(cell, scenario), cell)
        for scenario in mixes(cell.sites, 3, cell.environment)
        for state in reachable(config_of(cell, scenario))
    ]
    sample = Sample(structures)
    assert len(sample) > 100
    assert not [c.text() for c in tool_outputs.invariant if sample.violated(c)]


def test_a_mutant_breaks_the_proved_invariant(tool_outputs: Outcome) -> None:
    """The invariant proved for the cell is not inductive once the session diffs without
    the base: consecution fails on a finite instance (a model there is one for every
    size). `events-out-of-order` does not break it: in this cell nothing is deleted, and
    no conjunct found depends on the order of the added events."""
    cell = _cell("three-way", ("tool-outputs",), "no-base")
    problem = Problem(cell, FiniteSorts(2, 2))
    result = check_invariant(problem, list(tool_outputs.invariant), 60_000)
    assert result.breaks is not None
    broken = [c for c in tool_outputs.invariant if not result.breaks.satisfies(c)]
    assert broken
    assert state_lines(result.breaks)[0].startswith("server: {")
    # the same check on the cell without the fault finds nothing
    sound = check_invariant(
        Problem(tool_outputs.cell, FiniteSorts(2, 2)), list(tool_outputs.invariant), 60_000
    )
    assert sound.breaks is None


def test_a_failing_cell_gets_the_explorers_shortest_trace_over_the_smallest_mix() -> None:
    outcome = prove(_cell("unlocked", ("tool-outputs", "user-turn")))
    assert outcome.status == FAILS
    found = outcome.counterexample
    assert found is not None
    assert found.scenario.count("+") == 1  # two calls: one call alone cannot break it
    config = config_of(
        outcome.cell,
        next(s for s in mixes(outcome.cell.sites, 2, BASE) if s.name == found.scenario),
    )
    trace = replay(config, found.trace.moves)
    assert check(trace.last, config, Invariant.NO_UNINTENDED_DELETE) is not None
