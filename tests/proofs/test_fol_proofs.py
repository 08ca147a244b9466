"""Parameterized proofs: cells proved for every size, mutants breaking the proved
invariant's consecution and reaching a break from an initial state, and a failing cell
falling back to the explorer's trace."""

from __future__ import annotations

import concurrent.futures
import multiprocessing

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
    Clause,
    FiniteSorts,
    Outcome,
    Problem,
    Sample,
    mixes,
    prove,
    reachable,
    run_to,
    state_lines,
    structure,
)
from proofs.engines.fol.data import config_of
from proofs.engines.fol.proving import check_invariant
from proofs.engines.fol.vocab import neg
from proofs.engines.trace import replay

BASE = ENVIRONMENTS_BY_NAME["base"]


def _cell(variant: str, sites: tuple[str, ...], mutant: str | None = None) -> Cell:
    return Cell(VARIANTS_BY_NAME[variant], tuple(SITES_BY_NAME[s] for s in sites), BASE, mutant)


@pytest.fixture(scope="module")
def tool_outputs() -> Outcome:
    return prove(_cell("three-way", ("tool-outputs",)))


@pytest.fixture(scope="module")
def cleanup() -> Outcome:
    """A cell whose calls delete (the cleanup drops the never-played item) and whose user
    turn adds its message locally only after its push."""
    return prove(_cell("three-way", ("cleanup", "user-turn")))


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


def test_a_seed_speeds_a_proof_and_changes_nothing_else(tool_outputs: Outcome) -> None:
    """Seeded with its own invariant, inference meets no counterexample to induction;
    the same checks decide, so the verdict is the same; a seed conjunct of relations the
    cell lacks is left out."""
    assert tool_outputs.ctis > 0
    foreign = Clause((neg("pown", "t"),), "no provider lock owner")  # three-way has no locks
    seeded = prove(tool_outputs.cell, seed=(*tool_outputs.invariant, foreign))
    assert seeded.status == PROVED and seeded.ctis == 0
    assert foreign not in seeded.invariant
    assert SAFETY in seeded.invariant


def test_a_cell_that_deletes_is_proved_and_every_action_runs(cleanup: Outcome) -> None:
    assert cleanup.status == PROVED, cleanup.reason
    assert SAFETY in cleanup.invariant
    # deletes are sent and answered; only a rejected delete never happens, since without
    # the rejections option the server refuses only a delete of an item it lacks
    assert set(cleanup.disabled) <= {"client applies a rejected delete"}
    assert cleanup.queries > len(cleanup.invariant)  # per (action, conjunct)


@pytest.mark.parametrize("which", ["tool_outputs", "cleanup"])
def test_the_invariant_holds_on_larger_mixes_than_it_was_found_on(
    which: str, request: pytest.FixtureRequest
) -> None:
    outcome: Outcome = request.getfixturevalue(which)
    cell = outcome.cell
    structures = [
        structure(state, config_of(cell, scenario), cell)
        for scenario in mixes(cell.sites, 3, cell.environment)
        for state in reachable(config_of(cell, scenario))
    ]
    sample = Sample(structures)
    assert len(sample) > 100
    assert not [c.text() for c in outcome.invariant if sample.violated(c)]


@pytest.mark.parametrize("mutant", ["no-base", "diff-mirror"])
def test_a_mutant_breaks_the_proved_invariant_and_safety_for_real(
    mutant: str, cleanup: Outcome
) -> None:
    """The invariant proved for the sound cell is not inductive for the mutant: a
    counterexample to induction on a finite instance (a model there is one for every
    size), in trace words. And the break is real: a run of the mutant's first-order
    system from an initial state ends in an unintended delete."""
    problem = Problem(_cell("three-way", ("cleanup", "user-turn"), mutant), FiniteSorts(2, 2))
    result = check_invariant(problem, list(cleanup.invariant), 60_000)
    assert result.breaks is not None and result.conjunct is not None
    assert result.transition is not None
    assert state_lines(result.transition.pre)[0].startswith("server: {")
    run = run_to(problem, SAFETY, 8)
    assert run is not None
    assert not run.states[-1].satisfies(SAFETY)
    assert run.states[0].satisfies(SAFETY)
    # the same checks on the sound cell find nothing
    sound = Problem(cleanup.cell, FiniteSorts(2, 2))
    assert check_invariant(sound, list(cleanup.invariant), 60_000).breaks is None
    assert run_to(sound, SAFETY, run.depth) is None


def _prove_lock5() -> Outcome:
    return prove(_cell("lock5", ("user-turn", "tool-outputs")))


@pytest.fixture(scope="module")
def locked(tool_outputs: Outcome) -> Outcome:
    """lock5 with a user turn and tool outputs, proved in this process after another
    proof (`tool_outputs`), so the z3 state that proof left behind is there."""
    return _prove_lock5()


def test_a_proof_finds_the_same_invariant_after_another_proof(locked: Outcome) -> None:
    """Each proof builds its terms and solvers in z3 contexts of its own, so what it finds
    is a function of the cell: the same invariant in a fresh interpreter as here, after
    another proof. (With one shared context the two differed: z3's answers depended on
    the terms earlier proofs had made.)"""
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
        fresh = pool.submit(_prove_lock5).result()
    assert fresh.status == locked.status == PROVED
    assert [c.text() for c in fresh.invariant] == [c.text() for c in locked.invariant]


def test_events_out_of_order_reach_an_unintended_delete() -> None:
    """Applied out of order, a replacement's deleted event can come before the added event
    of the item it deletes (another replacement's): the mirror then holds a tombstoned
    item, and the next push's three-way merge deletes it although that push never dropped
    it. A run of the mutant's first-order system from an initial state (3 calls, 1 item)
    reaches that delete; every invariant that holds initially and contains safety
    therefore fails consecution at some step of it. (The sound cell is proved for every
    size with all six sites, `benchmarks/fol_speed.py`; a bounded search of its system
    here took 40 s, too long for the suite.)"""
    sites = ("replacement", "tool-outputs")
    problem = Problem(_cell("three-way", sites, "events-out-of-order"), FiniteSorts(3, 1))
    run = run_to(problem, SAFETY, 7)
    assert run is not None
    assert run.states[0].satisfies(SAFETY) and not run.states[-1].satisfies(SAFETY)
    events = [a for a in run.actions if a.startswith("client applies")]
    assert events == ["client applies a deleted event", "client applies an added event"]


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
