"""The lemma lock5 {replacement} needs (docs/proofs.md, "What it misses"), on the explorer's
states: no proof uses it yet, so this keeps what was found true and false about it.

Two readings of "a waiting call owes an item": the first tests below compute, from each
mapped state, "call t means to remove i and waits for a lock" (`drops` and waiting); the
first-order system's ghost `owes` (`ghosts.py`) is stricter, "t removed i from the local
context at its call and has not diffed" (`drops` and `copy`), and the tests after
`GHOST` check that one, mapped by `data.structure`, on the same states."""

from __future__ import annotations

import pytest

from model import ENVIRONMENTS_BY_NAME, SITES_BY_NAME, VARIANTS_BY_NAME, Call, Scenario
from proofs.engines.fol import (
    Cell,
    Clause,
    Problem,
    Sample,
    Structure,
    fixed_conjuncts,
    ghosts,
    mixes,
    reachable,
    structure,
    unbounded_sorts,
)
from proofs.engines.fol.data import config_of
from proofs.engines.fol.queries import all_queries
from proofs.engines.fol.vocab import lit, neg

BASE = ENVIRONMENTS_BY_NAME["base"]
WAITING = ("wact", "wprov")


def _with_owes(s: Structure) -> Structure:
    drops = s.relations.get("drops", frozenset())
    waiting = {row[0] for pc in WAITING for row in s.relations.get(pc, frozenset())}
    owes = frozenset((t, i) for t, i in drops if t in waiting)
    extra = {"owes": owes, "some:owes": frozenset((i,) for _, i in owes)}
    return Structure(s.tasks, s.items, {**s.relations, **extra})


CELL = Cell(VARIANTS_BY_NAME["lock5"], (SITES_BY_NAME["replacement"],), BASE)


@pytest.fixture(scope="module")
def mapped() -> tuple[Structure, ...]:
    """Every state of every mix of up to three replacements, default and lean, mapped."""
    scenarios = [*mixes(CELL.sites, 3, BASE), *mixes(CELL.sites, 3, BASE, lean=True)]
    return tuple(
        structure(state, config_of(CELL, scenario), CELL)
        for scenario in scenarios
        for state in reachable(config_of(CELL, scenario))
    )


@pytest.fixture(scope="module")
def replacements(mapped: tuple[Structure, ...]) -> Sample:
    """The same states with `owes` read as "drops it and waits"."""
    return Sample(_with_owes(s) for s in mapped)


@pytest.fixture(scope="module")
def ghosted(mapped: tuple[Structure, ...]) -> Sample:
    """The same states with the first-order system's ghost `owes` as `structure` maps it."""
    return Sample(mapped)


OWED = Clause(
    (neg("M", "i"), lit("L", "i"), lit("some:dfl", "i"), lit("some:owes", "i")), "item-owed"
)


def test_a_mirror_item_the_local_context_lacks_is_owed_or_being_deleted(
    replacements: Sample,
) -> None:
    """An item the mirror holds and the local context lacks is one a waiting replacement
    means to remove, or one whose delete is in flight; without the delete in flight it is
    false (a done replacement's delete has not reached the mirror yet)."""
    assert len(replacements) > 500
    assert not replacements.violated(OWED)
    no_flight = Clause((neg("M", "i"), lit("L", "i"), lit("some:owes", "i")), "item-owed")
    assert replacements.violated(no_flight)


def test_an_orphan_waiting_for_the_lock_keeps_every_mirror_item_nobody_owes(
    replacements: Sample,
) -> None:
    """A replacement waiting for the activity lock whose request is no longer the live
    local context (orphaned by a later replacement) has a call waiting behind it, and its
    request holds every mirror item no waiting call owes."""
    behind = Clause((neg("wact", "t"), lit("bound", "t"), lit("any:await")), "task-owed")
    kept = Clause(
        (
            neg("M", "i"),
            neg("wact", "t"),
            lit("bound", "t"),
            lit("req", "t", "i"),
            lit("some:owes", "i"),
        ),
        "task-owed",
    )
    assert not replacements.violated(behind)
    assert not replacements.violated(kept)


def test_a_request_may_hold_what_its_call_drops_only_if_the_call_adds_it(
    replacements: Sample,
) -> None:
    """No mix has a call drop an item it adds, so on their states a request lacks what its
    call drops; but the model lets a call do both (the add wins), as the first-order
    system does, so that clause is false and needs the add as a disjunct."""
    lacks = Clause((neg("req", "t", "i"), neg("drops", "t", "i")), "task-owed")
    unless_added = Clause((*lacks.literals, lit("adds", "t", "i")), "task-owed")
    assert not replacements.violated(lacks)
    cell = Cell(VARIANTS_BY_NAME["lock5"], (SITES_BY_NAME["replacement"],), BASE)
    both = Scenario(
        name="replacement-drops-its-own",
        summary="a replacement that adds and drops one item",
        calls=(Call("replacement", adds=("new0",), drops=("msg0", "new0")),),
        server=("msg0",),
    )
    config = config_of(cell, both)
    own = Sample(structure(state, config, cell) for state in reachable(config))
    assert own.violated(lacks)
    assert not own.violated(unless_added)


#: The ghost's definition: what the actions maintain (`ghosts.at_call`, `ghosts.at_diff`).
GHOST = (
    Clause((neg("owes", "t", "i"), lit("drops", "t", "i")), "ghost"),
    Clause((neg("owes", "t", "i"), lit("copy", "t", "i")), "ghost"),
    Clause((neg("owes", "t", "i"), lit("wact", "t"), lit("wprov", "t")), "ghost"),
    *(
        Clause(
            (neg("copy", "t", "i"), neg("drops", "t", "i"), neg(pc, "t"), lit("owes", "t", "i")),
            "ghost",
        )
        for pc in WAITING
    ),
)


def test_the_ghost_is_maintained_as_defined_for_every_size() -> None:
    """The actions keep `owes` equal to its definition: the definition with the fixed
    structure is inductive with the sorts unbounded, and holds initially (every task idle,
    no ghost), so in every reachable state of the first-order system `owes(t, i)` is
    `drops(t, i) & copy(t, i)` while t waits for a lock. No action reads the ghost, so it
    adds and removes no behaviour."""
    problem = Problem(CELL, unbounded_sorts())
    invariant = [*fixed_conjuncts(CELL), *GHOST]
    for queries in all_queries(problem, 60_000):
        for clause in GHOST:
            assert queries.breaks_one(invariant, clause) is None, (queries.action.name, clause)


def test_a_ghost_the_diff_forgets_to_clear_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: with the diff's clearing left out, a call that has diffed
    still owes, and consecution of "owes only while waiting" breaks at a wake."""
    monkeypatch.setattr(ghosts, "at_diff", lambda run, t: None)
    problem = Problem(CELL, unbounded_sorts())
    invariant = [*fixed_conjuncts(CELL), *GHOST]
    broken = {
        queries.action.name
        for queries in all_queries(problem, 60_000)
        if queries.breaks_one(invariant, GHOST[2]) is not None
    }
    assert "wake replacement (activity lock)" in broken


def test_the_mapping_gives_the_ghost_its_definition_and_a_wrong_one_is_caught(
    ghosted: Sample, replacements: Sample
) -> None:
    """On every explorer state the mapped ghost meets the definition the first-order actions
    keep; "drops it and waits" (the reading above) is not that ghost: it breaks `owes ->
    copy` (a replacement drops the previous call's item before that call added it)."""
    assert sum(1 for s in ghosted.structures if s.relations["owes"]) > 50
    for clause in GHOST:
        assert not ghosted.violated(clause), clause.text()
    assert replacements.violated(GHOST[1])


#: The lemmas a proof of lock5 {replacement} would rest on (docs/proofs.md, "Ghosts"),
#: over the ghost: each holds on every state of every mix of up to three calls.
LEMMAS = (
    Clause(
        (neg("M", "i"), lit("L", "i"), lit("some:dfl", "i"), lit("some:owes", "i")), "item-owed"
    ),
    Clause((neg("L", "i"), neg("owes", "t", "i")), "task-item"),
    Clause(
        (neg("M", "i"), neg("aq", "t", "u"), neg("owes", "u", "i"), lit("req", "t", "i")),
        "queue-owed",
    ),
    Clause(
        (
            neg("M", "i"),
            neg("aown", "t"),
            neg("owes", "u", "i"),
            neg("wact", "t"),
            lit("=", "t", "u"),
            lit("req", "t", "i"),
        ),
        "queue-owed",
    ),
    Clause(
        (
            neg("M", "i"),
            neg("wact", "t"),
            lit("bound", "t"),
            lit("req", "t", "i"),
            lit("some:dfl", "i"),
            lit("some:owes", "i"),
        ),
        "row-owed",
    ),
    Clause(
        (
            neg("copy", "t", "i"),
            neg("wact", "t"),
            lit("bound", "t"),
            lit("drops", "t", "i"),
            lit("req", "t", "i"),
        ),
        "task-rows",
    ),
)


def test_the_lemmas_over_the_ghost_hold_on_every_state_and_weaker_ones_do_not(
    ghosted: Sample,
) -> None:
    """Each lemma holds on every state; without the delete in flight the first and the
    last but one fail (a done replacement's delete has not reached the mirror yet)."""
    for clause in LEMMAS:
        assert not ghosted.violated(clause), clause.text()
    for clause in (LEMMAS[0], LEMMAS[4]):
        weaker = Clause(tuple(x for x in clause.literals if x.atom.name != "some:dfl"), "x")
        assert ghosted.violated(weaker), weaker.text()
