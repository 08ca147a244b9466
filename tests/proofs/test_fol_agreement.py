"""Invariant 2 (agreement at rest) for three-way, first-order (`fol.agreement`): the safety
formula against the model's check on the explorer's states, the two assumptions shown
necessary by the explorer, the committed certificate on the explorer's states, and two
mutants that break it on real runs of their first-order systems."""

from __future__ import annotations

import pytest

from model import (
    ENVIRONMENTS_BY_NAME,
    SITES,
    SITES_BY_NAME,
    VARIANTS_BY_NAME,
    Call,
    Config,
    Scenario,
    agreement_at_rest,
)
from proofs.engines.fol import FiniteSorts, Problem, Sample, mixes, reachable, run_to
from proofs.engines.fol import agreement as ag
from proofs.engines.fol.data import config_of
from proofs.engines.fol.queries import ActionQueries
from proofs.engines.fol.system import Cell
from proofs.engines.fol.vocab import Clause, lit, neg

BASE = ENVIRONMENTS_BY_NAME["base"]
THREE_WAY = VARIANTS_BY_NAME["three-way"]
SMALL = ("user-turn", "tool-outputs", "replacement", "cleanup")


def _cell(sites: tuple[str, ...], mutant: str | None = None) -> Cell:
    chosen = tuple(SITES_BY_NAME[s] for s in sites)
    return Cell(THREE_WAY, chosen, BASE, mutant, agreement=True)


def _all_sites(mutant: str | None = None) -> Cell:
    return Cell(THREE_WAY, tuple(SITES), BASE, mutant, agreement=True)


@pytest.fixture(scope="module")
def certificate() -> tuple[Clause, ...]:
    found = ag.committed(_all_sites())
    assert found is not None, "no committed invariant-2 certificate for three-way, base"
    return found


def test_the_at_rest_formula_is_the_models_check() -> None:
    """On every state of every mix of up to two calls of four sites (runs the assumption
    cuts included), the first-order at-rest formula over the mapped ghosts says what
    `model.invariants.agreement_at_rest` says, and some states break both."""
    cell = _cell(SMALL)
    states = broken = 0
    for scenario in mixes(cell.sites, 2, BASE):
        config = config_of(cell, scenario)
        for state, pa in ag.reachable_pa(config, assume=False):
            s = ag.agreement_structure(state, config, cell, pa)
            model_says = agreement_at_rest(state, config) is not None
            assert (ag.at_rest_violation(s) is not None) == model_says, scenario.name
            states += 1
            broken += model_says
    assert states > 500 and broken > 0


def test_a_replacement_that_drops_an_item_it_never_saw_breaks_invariant_2() -> None:
    """Why the assumption: the replacement drops the user turn's message, which its copy
    lacks (the turn adds it locally after its push), so its base has it and three-way
    deletes it; at rest the local context has it and the server does not. With the runs
    that break the assumption cut, no state of the mix breaks invariant 2."""
    cell = _cell(SMALL)
    (scenario,) = [s for s in mixes(cell.sites, 2, BASE) if s.name == "mix:user-turn+replacement"]
    config = config_of(cell, scenario)
    found = [st for st in reachable(config) if agreement_at_rest(st, config) is not None]
    assert found and "server lost" in str(agreement_at_rest(found[0], config))
    kept = [st for st, _ in ag.reachable_pa(config) if agreement_at_rest(st, config)]
    assert kept == []


def test_a_cleanup_that_adds_breaks_invariant_2_in_the_model() -> None:
    """Why the other assumption: a live-context push pushes a context that already has its
    own item in its base, so three-way never sends it."""
    scenario = Scenario(
        name="cleanup-that-adds",
        summary="a cleanup call with an item of its own",
        calls=(Call("cleanup", adds=("x1",), drops=("asst1",)),),
        server=("msg0", "asst1"),
        local=("msg0",),
    )
    config = Config(THREE_WAY, scenario, BASE)
    found = {str(agreement_at_rest(st, config)) for st in reachable(config)}
    assert any("never sent" in text for text in found)


def test_the_certificate_holds_on_the_explorers_states(certificate: tuple[Clause, ...]) -> None:
    """Every state of every mix of up to two calls of four of the six sites (and the lean
    mixes), mapped with the ghosts, satisfies every conjunct; a wrong one is caught.
    `benchmarks/bench_fol_agreement.py` does every mix of up to three calls of all six."""
    cell = _all_sites()
    sample = Sample(ag.sample(cell, 2, sites=_cell(SMALL).sites))
    assert len(sample) > 500
    assert [c.name for c in certificate if sample.violated(c)] == []
    # "no item is ever removed" is false: the replacements and cleanups delete
    assert sample.violated(Clause((neg("removed", "i"),), "wrong"))
    # "what may anchor a create is on the server" is false: its own creates are not yet
    assert sample.violated(Clause((neg("pa", "t", "i"), lit("S", "i")), "wrong"))


def _breaks_at(cell: Cell, invariant: tuple[Clause, ...], action: str) -> Clause | None:
    """The first conjunct `action` breaks from a state of `invariant` on 2 tasks and 2
    items (a counterexample to induction there is one for every size)."""
    problem = Problem(cell, FiniteSorts(2, 2))
    (index,) = [n for n, a in enumerate(problem.actions) if a.name == action]
    query = ActionQueries(problem, problem.actions[index], index, 60_000)
    for clause in invariant:
        if query.breaks_one(list(invariant), clause) is not None:
            return clause
    return None


def test_a_server_that_refuses_a_create_with_its_anchor_present_is_caught(
    certificate: tuple[Clause, ...],
) -> None:
    """`refuse-anchored`: the refusal breaks the certificate's consecution (the refused
    item is in the local context), and the mutant's first-order system has a real run of
    two steps to a local item refused and off the server; the sound system has none."""
    refuse = "server refuses a create (its anchor is not on the server)"
    broken = _breaks_at(_all_sites("refuse-anchored"), certificate, refuse)
    assert broken is not None
    target = ag.AGREEMENT[2]
    assert "refused" in target.text()
    mutant = Problem(_cell(("tool-outputs",), "refuse-anchored"), FiniteSorts(1, 2))
    run = run_to(mutant, target, 3)
    assert run is not None and run.actions == ("call tool-outputs", refuse)
    assert run_to(Problem(_cell(("tool-outputs",)), FiniteSorts(1, 2)), target, 3) is None


def test_three_way_without_its_base_loses_a_tool_output() -> None:
    """`no-base` (2 tasks, 1 item): a second tool push's snapshot lacks the first one's
    output, still in flight, and without the base the diff deletes it. `run_to` finds the
    real run to a local item that reached the server and is off it (the sound system has
    none: its certificate)."""
    target = ag.AGREEMENT[1]
    assert "reached" in target.text()
    run = run_to(Problem(_cell(("tool-outputs",), "no-base"), FiniteSorts(2, 1)), target, 4)
    assert run is not None
    # the first output reaches the server, the second push diffs before the mirror has
    # it, and its delete lands
    assert sorted(run.actions) == [
        "call tool-outputs",
        "call tool-outputs",
        "server applies a create",
        "server applies a delete",
    ]
    assert run.actions[-1] == "server applies a delete"


def test_no_base_breaks_the_certificate_at_a_step_of_its_run(
    certificate: tuple[Clause, ...],
) -> None:
    """A real run from an initial state to a broken conjunct means the certificate fails
    consecution at one of its steps: here the second push's diff (its call)."""
    assert _breaks_at(_all_sites("no-base"), certificate, "call tool-outputs") is not None


def test_the_ghosts_leave_cells_without_them_alone() -> None:
    """Cells without `agreement` have the vocabulary and actions they had."""
    plain = Cell(THREE_WAY, tuple(SITES), BASE)
    names = {r.name for r in Problem(plain, FiniteSorts(1, 1)).relations}
    assert not names & {"reached", "removed", "sent", "refused", "pa"}
    actions = {a.name for a in Problem(plain, FiniteSorts(1, 1)).actions}
    assert "server refuses a create" in actions
    assert ag.coverage(Cell(VARIANTS_BY_NAME["lock5"], tuple(SITES), BASE, agreement=True))
