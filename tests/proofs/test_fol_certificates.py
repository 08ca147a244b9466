"""Certificates: invariants inference found (`benchmarks/bench_fol_coverage.py --write`),
checked here for every size, cross-checked against the explorer, and broken by a mutant
on a real run. Finding lock5 {user-turn, cleanup}'s invariant takes a minute or more;
checking it takes seconds."""

from __future__ import annotations

import pytest

from model import ENVIRONMENTS_BY_NAME, SITES, SITES_BY_NAME, VARIANTS_BY_NAME
from proofs.engines.fol import (
    FAILS,
    PROVED,
    SAFETY,
    Cell,
    Clause,
    FiniteSorts,
    Problem,
    Sample,
    mixes,
    prove,
    reachable,
    run_to,
    structure,
)
from proofs.engines.fol.certificate import check, committed, dumps, loads
from proofs.engines.fol.data import config_of
from proofs.engines.fol.proving import check_invariant, shortest_counterexample
from proofs.engines.fol.vocab import lit, neg

BASE = ENVIRONMENTS_BY_NAME["base"]
USER_CLEANUP = ("user-turn", "cleanup")


def _cell(variant: str, sites: tuple[str, ...], mutant: str | None = None) -> Cell:
    return Cell(VARIANTS_BY_NAME[variant], tuple(SITES_BY_NAME[s] for s in sites), BASE, mutant)


@pytest.fixture(scope="module")
def user_cleanup() -> tuple[Clause, ...]:
    found = committed(_cell("lock5", USER_CLEANUP))
    assert found is not None, "run benchmarks/bench_fol_coverage.py --write lock5"
    return found


def test_a_certificate_reads_back_as_written(user_cleanup: tuple[Clause, ...]) -> None:
    assert loads(dumps(user_cleanup)) == user_cleanup


def test_lock5_user_turn_and_cleanup_is_proved_for_every_size(
    user_cleanup: tuple[Clause, ...],
) -> None:
    """Initiation, consecution per (action, conjunct) and enabledness with the sorts
    unbounded (`certificate.check`, which `prove` runs on a committed certificate): every
    number of user turns and cleanups. The invariant says why a cleanup
    never deletes the user turn's message: the mirror is inside the local context and the
    never-played items, except the items of the call that holds the lock."""
    cell = _cell("lock5", USER_CLEANUP)
    outcome = prove(cell)  # the committed certificate's check stands in for inference
    assert outcome.status == PROVED and set(outcome.seconds) == {"certificate"}
    assert outcome.invariant == user_cleanup
    assert "call cleanup" not in outcome.disabled and "call user-turn" not in outcome.disabled
    texts = {c.text() for c in user_cleanup}
    assert any(t.startswith("forall i. M(i) -> L(i)") and "np(i)" in t for t in texts)


def test_a_certificate_lacking_safety_is_refused(user_cleanup: tuple[Clause, ...]) -> None:
    with pytest.raises(AssertionError, match="no unintended delete"):
        check(_cell("lock5", USER_CLEANUP), [c for c in user_cleanup if c != SAFETY])


def test_a_wrong_conjunct_fails_the_check(user_cleanup: tuple[Clause, ...]) -> None:
    """A conjunct false initially makes the check fail (one the system breaks later does
    too: the mutant below)."""
    wrong = Clause((lit("L", "i"),), "everything is local")
    with pytest.raises(AssertionError, match="initiation"):
        check(_cell("lock5", USER_CLEANUP), [wrong, *user_cleanup])


def test_the_certificate_holds_on_every_state_of_three_calls(
    user_cleanup: tuple[Clause, ...],
) -> None:
    """The explorer's states of every mix of up to three calls, mapped to the relations,
    satisfy each conjunct (found on mixes of up to two)."""
    cell = _cell("lock5", USER_CLEANUP)
    sample = Sample(
        structure(state, config_of(cell, scenario), cell)
        for scenario in mixes(cell.sites, 3, BASE)
        for state in reachable(config_of(cell, scenario))
    )
    assert len(sample) > 200
    assert not [c.text() for c in user_cleanup if sample.violated(c)]


def test_releasing_the_lock_before_the_acks_breaks_the_certificate_for_real(
    user_cleanup: tuple[Clause, ...],
) -> None:
    """With the locks released when the push sends, the certificate is not inductive (a
    counterexample to induction on 2 tasks and 1 item), and a run of the mutant's
    first-order system from an initial state reaches an unintended delete (the cleanup
    pushes the local context before the user turn adds its acknowledged message); the
    sound cell has no such run."""
    mutant = Problem(_cell("lock5", USER_CLEANUP, "early-release"), FiniteSorts(2, 1))
    result = check_invariant(mutant, list(user_cleanup), 60_000)
    assert result.conjunct is not None and result.transition is not None
    run = run_to(mutant, SAFETY, 4)
    assert run is not None and not run.states[-1].satisfies(SAFETY)
    # the sound cell's check is the proof above; its system has no such run
    assert run_to(Problem(_cell("lock5", USER_CLEANUP), FiniteSorts(2, 1)), SAFETY, 4) is None


@pytest.mark.parametrize(
    ("sites", "scenario"),
    [
        (("user-turn", "tool-outputs", "cleanup"), "mix:user-turn+tool-outputs+cleanup"),
        (("user-turn", "replacement"), "mix:user-turn+replacement+replacement"),
    ],
)
def test_lock5_site_sets_that_hold_for_two_calls_fail_with_three(
    sites: tuple[str, ...], scenario: str
) -> None:
    """Every mix of two calls holds; three calls break it (why `prove` looks for a
    counterexample with more calls than its sample when safety leaves inference, and why
    the coverage sweep uses four)."""
    cell = _cell("lock5", sites)
    assert shortest_counterexample(cell, 2) is None
    found = shortest_counterexample(cell, 3)
    assert found is not None and found.scenario == scenario


@pytest.mark.parametrize(
    ("variant", "sites", "mutant", "faulty"),
    [
        # no site of this set deletes under the lock, so releasing it early changes
        # nothing the invariant says; dropping the lock altogether does
        ("lock5", ("user-turn", "tool-outputs", "interrupted-tool-outputs"), None, "unlocked"),
        ("lock5-hoisted", ("user-turn", "cleanup"), "early-release", None),
        (
            "lock5-hoisted",
            ("user-turn", "tool-outputs", "interrupted-tool-outputs"),
            None,
            "unlocked",
        ),
    ],
)
def test_each_proved_site_set_has_a_mutant_that_breaks_its_certificate_for_real(
    variant: str, sites: tuple[str, ...], mutant: str | None, faulty: str | None
) -> None:
    """The certificate (checked for every size by `benchmarks/bench_fol_certificates.py`)
    is not inductive for the mutant (a counterexample to induction on 2 tasks and 1 item),
    and a run of the mutant's first-order system from an initial state breaks the same
    conjunct; the sound cell has no such run."""
    sound = _cell(variant, sites)
    found = committed(sound)
    assert found is not None, "run benchmarks/bench_fol_coverage.py --write lock5 lock5-hoisted"
    bad = _cell(faulty or variant, sites, mutant)
    result = check_invariant(Problem(bad, FiniteSorts(2, 1)), list(found), 60_000)
    assert result.conjunct is not None and result.transition is not None
    run = run_to(Problem(bad, FiniteSorts(2, 1)), result.conjunct, 4)
    assert run is not None and not run.states[-1].satisfies(result.conjunct)
    assert run_to(Problem(sound, FiniteSorts(2, 1)), result.conjunct, run.depth) is None


def test_prove_fails_a_cell_whose_counterexample_needs_more_calls_than_its_sample() -> None:
    """Inference on lock5 {user-turn, replacement} (sampled on two calls) gets stuck on
    safety; the explorer then finds the three-call counterexample, so the cell fails
    instead of staying unknown."""
    outcome = prove(_cell("lock5", ("user-turn", "replacement")))
    assert outcome.status == FAILS, outcome.reason
    found = outcome.counterexample
    assert found is not None and found.scenario == "mix:user-turn+replacement+replacement"
    assert outcome.cti is not None and outcome.cti.conjunct == SAFETY


def _three_way(environment: str, mutant: str | None = None) -> Cell:
    return Cell(VARIANTS_BY_NAME["three-way"], SITES, ENVIRONMENTS_BY_NAME[environment], mutant)


#: The environments with the model's own items, whose certificates are tested here.
WITH_SERVER_ITEMS = ("server-items", "all")


@pytest.fixture(scope="module", params=WITH_SERVER_ITEMS)
def server_items(request: pytest.FixtureRequest) -> tuple[str, tuple[Clause, ...]]:
    found = committed(_three_way(request.param))
    assert found is not None, "run benchmarks/bench_fol_coverage.py --write three-way"
    return request.param, found


def test_three_way_with_server_items_is_proved_for_every_size(
    server_items: tuple[str, tuple[Clause, ...]],
) -> None:
    """Every number of calls of all six sites and every number of items the model creates
    on its own (alone, and with every other option three-way has): the certificate passes
    initiation, consecution per (action, conjunct) and enabledness, and every action the
    model's items add runs. Among its conjuncts, the `slot-item` family's: a delete in
    flight of an item the model may create is of one it has created, so the model never
    announces an item a delete has already removed."""
    environment, invariant = server_items
    result = check(_three_way(environment), invariant)
    assert result.breaks is None
    assert not [a for a in result.disabled if "model" in a or "learns" in a]
    assert any(c.name == "slot-item" for c in invariant)


def test_the_server_items_certificate_holds_on_the_explorers_states(
    server_items: tuple[str, tuple[Clause, ...]],
) -> None:
    """Every state of every mix of up to two calls of the sites that push the live local
    context and a copy of it, with the model creating an item (a replacement also drops
    it, so some states have deleted it), mapped into the six-site cell; with every option
    on, every mix of one call of each of the six sites (two calls of two sites are more
    states than 6 GB hold). All six sites on two calls, server items alone, is
    `benchmarks/bench_fol_certificates.py` (10,000 states)."""
    environment, invariant = server_items
    cell = _three_way(environment)
    names, calls = (("replacement", "cleanup"), 2) if environment == "server-items" else ((), 1)
    sites = tuple(SITES_BY_NAME[s] for s in names) or cell.sites
    sample = Sample(
        structure(state, config_of(cell, scenario), cell)
        for scenario in mixes(sites, calls, cell.environment, server_drops=True)
        for state in reachable(config_of(cell, scenario))
    )
    assert len(sample) > 200
    assert not [c.text() for c in invariant if sample.violated(c)]
    if calls == 2:
        # a wrong conjunct is caught: the model's item is deleted on some of these states
        # (before replacements dropped it in `mixes`, no sampled state did, and this false
        # conjunct stayed among the candidates)
        assert sample.violated(Clause((neg("pool", "i"), neg("gone", "i")), "never deleted"))


def test_three_way_without_the_base_breaks_the_server_items_certificate_for_real(
    server_items: tuple[str, tuple[Clause, ...]],
) -> None:
    """Without the base, a cleanup deletes an item the model created that the local context
    has not learned yet: the certificate is not inductive for the mutant, and a run of its
    first-order system on 1 task and 1 item breaks the same conjunct; the sound cell has no
    such run."""
    environment, invariant = server_items
    bad = Problem(_three_way(environment, "no-base"), FiniteSorts(1, 1))
    result = check_invariant(bad, list(invariant), 60_000)
    assert result.conjunct is not None and result.transition is not None
    run = run_to(bad, result.conjunct, 4)
    assert run is not None and not run.states[-1].satisfies(result.conjunct)
    sound = Problem(_three_way(environment), FiniteSorts(1, 1))
    assert run_to(sound, result.conjunct, run.depth) is None


def test_a_stale_certificate_names_a_real_break_for_every_size(
    user_cleanup: tuple[Clause, ...],
) -> None:
    """With the sorts unbounded (the check `verify` runs), the mutant that releases the
    locks early breaks the certificate, and what the check reads back is a real
    counterexample to induction: every conjunct holds on the pre state, and the conjunct
    it names fails on the post state. A premise literal that stopped carrying the
    invariant (`ActionQueries._premise`) fails here: the pre state breaks a conjunct. A
    post conjunct shared between actions that change different relations
    (`queries.Shared`, keyed by the clause alone) fails the sound cells' proofs above."""
    result = check(_cell("lock5", USER_CLEANUP, "early-release"), user_cleanup)
    assert result.conjunct is not None and result.transition is not None
    assert all(result.transition.pre.satisfies(c) for c in user_cleanup)
    assert not result.transition.post.satisfies(result.conjunct)
    assert result.queries > len(user_cleanup)  # one query per (action, conjunct)
