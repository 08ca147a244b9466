"""The lemma lock5 {replacement} needs (docs/proofs.md, "What it misses"), on the explorer's
states: no proof uses it yet, so this keeps what was found true and false about it.

`owes(t, i)` (call t means to remove i and waits for a lock) is computed from each mapped
state here; the first-order system has no such relation."""

from __future__ import annotations

import pytest

from model import ENVIRONMENTS_BY_NAME, SITES_BY_NAME, VARIANTS_BY_NAME, Call, Scenario
from proofs.engines.fol import Cell, Clause, Sample, Structure, mixes, reachable, structure
from proofs.engines.fol.data import config_of
from proofs.engines.fol.vocab import lit, neg

BASE = ENVIRONMENTS_BY_NAME["base"]
WAITING = ("wact", "wprov")


def _with_owes(s: Structure) -> Structure:
    drops = s.relations.get("drops", frozenset())
    waiting = {row[0] for pc in WAITING for row in s.relations.get(pc, frozenset())}
    owes = frozenset((t, i) for t, i in drops if t in waiting)
    extra = {"owes": owes, "some:owes": frozenset((i,) for _, i in owes)}
    return Structure(s.tasks, s.items, {**s.relations, **extra})


@pytest.fixture(scope="module")
def replacements() -> Sample:
    """Every state of every mix of up to three replacements, default and lean."""
    cell = Cell(VARIANTS_BY_NAME["lock5"], (SITES_BY_NAME["replacement"],), BASE)
    scenarios = [*mixes(cell.sites, 3, BASE), *mixes(cell.sites, 3, BASE, lean=True)]
    return Sample(
        _with_owes(structure(state, config_of(cell, scenario), cell))
        for scenario in scenarios
        for state in reachable(config_of(cell, scenario))
    )


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
