"""One certificate for every column: `fol.cover` checks on the formulas that a column's
first-order system is the widest cell's with fewer actions and the model's relations
empty, refuses where an option changes a shared action, and a refused column falls
back to its own certificate instead of passing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from model import ENVIRONMENTS_BY_NAME, SITES, VARIANTS_BY_NAME
from proofs.engines.fol import SAFETY, UNKNOWN, Cell, FiniteSorts, Problem, actions, fixed_conjuncts
from proofs.engines.fol import certificate as certificates
from proofs.engines.fol.certificate import committed, dumps, key
from proofs.engines.fol.cover import (
    _empty,
    containments,
    cover_words,
    extras,
    prove_covered,
    widest,
)
from proofs.engines.fol.proving import check_each
from proofs.engines.fol.queries import InitQueries, all_queries

#: three-way's columns of invariant 1 with distinct first-order systems (reconnects and
#: stale-anchors are inert there, so their cells are base's).
COLUMNS = ("base", "stale-copies", "server-items", "timeouts", "rejections", "all")
WITHOUT_ITEMS = ("pool", "created", "learned", "evm")


def _cell(environment: str, mutant: str | None = None) -> Cell:
    return Cell(VARIANTS_BY_NAME["three-way"], SITES, ENVIRONMENTS_BY_NAME[environment], mutant)


def test_every_three_way_column_is_contained_in_the_widest_cell() -> None:
    """Each option only adds actions (stale-copies' call from idle included), so every
    column is the `all` cell's system with actions removed; those without the model's
    items lack exactly its four relations, which the check takes as empty."""
    cells = [_cell(name) for name in COLUMNS]
    wide = widest(cells[0])
    assert key(wide) == key(_cell("all"))
    assert containments(cells, wide) == [""] * len(cells)
    assert extras(_cell("timeouts"), wide) == WITHOUT_ITEMS
    assert extras(_cell("server-items"), wide) == ()


def test_an_option_that_changes_a_shared_action_is_refused() -> None:
    """`copy-first`: under stale-copies a caller-copy call must follow a copy, so the
    option changes `call` instead of adding an action. A column without stale-copies then
    has a call the wider cell does not have, and the check says which; a column with it
    has the same call and stays contained."""
    base, stale = _cell("base", "copy-first"), _cell("stale-copies", "copy-first")
    wide = widest(base)
    refused, kept = containments([base, stale], wide)
    assert refused == "call replacement has another guard in the wider cell"
    assert kept == ""
    # the sound cells differ from the mutant's in the same call, and only there
    assert containments([_cell("base")], wide) == ["the cells differ in mutant"]


def test_an_option_that_changes_an_environment_action_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fake twist of timeouts: with the option on, the client applies an added event
    only when some task is idle. The rejections column, without timeouts, then has an
    event action the wider cell does not have, and is refused by name."""
    original = actions._client_apply

    def twisted(cell: Cell, sorts: Any, kind: str, run: Any, p: dict[str, Any]) -> Any:
        out = original(cell, sorts, kind, run, p)
        if cell.environment.timeouts:
            out.require(run["idle"](p["t"]))
        return out

    monkeypatch.setattr(actions, "_client_apply", twisted)
    (refused,) = containments([_cell("rejections")], widest(_cell("base")))
    assert refused == "client applies an added event has another guard in the wider cell"


def test_a_refused_column_falls_back_to_its_own_certificate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the mutant, the `all` certificate (committed under the mutant's key) covers
    nothing the mutant's base column has: the column is not proved from it. It falls back
    to its own certificate, which here is the fixed structure and safety alone, and that
    check breaks: `unknown`, naming both, never `proved`."""
    column, wide = _cell("base", "copy-first"), widest(_cell("base", "copy-first"))
    found = committed(_cell("all"))
    assert found is not None
    (tmp_path / key(wide)).write_text(dumps(found))
    (tmp_path / key(column)).write_text(dumps([*fixed_conjuncts(column), SAFETY]))
    monkeypatch.setattr(certificates, "DIRECTORY", tmp_path)
    (outcome,) = prove_covered([column])
    assert outcome.status == UNKNOWN and outcome.cover == ""
    assert f"the committed certificate {key(column)} no longer checks" in outcome.reason
    assert f"{key(wide)} does not cover it: call replacement has another guard" in outcome.reason
    assert outcome.certificate == key(column)  # the claim that failed: `verify` flags it
    # with no certificate of its own, the claim that failed is the widest one's
    (tmp_path / key(column)).unlink()
    (outcome,) = prove_covered([column])
    assert outcome.status == UNKNOWN and outcome.certificate == key(wide)
    assert outcome.reason.startswith(f"no certificate: {key(column)} is not committed; ")


def test_the_widest_check_asks_enabledness_in_the_states_of_the_narrower_columns() -> None:
    """Enabledness for a column without the model's items is asked with those relations
    empty: a state found there is one of the column's. On one task and one item (a
    model there is one of the unbounded query too, and the certificate, inductive for
    every size, is inductive there), exactly the three actions of the model's items are
    enabled only with them; every action is enabled in some state of the invariant. The
    unbounded check of the same is the default `verify`'s (`tests/proofs/test_z3_catalog.py`)."""
    problem = Problem(_cell("all"), FiniteSorts(1, 1))
    invariant = committed(_cell("all"))
    assert invariant is not None
    result = check_each(
        problem,
        list(invariant),
        InitQueries(problem, 60_000),
        all_queries(problem, 60_000),
        where=_empty(problem, WITHOUT_ITEMS),
    )
    assert result.breaks is None and result.disabled == ()
    assert set(result.disabled_where) == {
        "model creates an item",
        "client applies the model's item",
        "local context learns an item",
    }
    assert cover_words("K", WITHOUT_ITEMS).endswith("with pool, created, learned, evm empty)")
