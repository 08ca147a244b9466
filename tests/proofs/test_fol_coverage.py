"""The first-order engine answers only for what it models: an option, a session kind or a
record field it does not read makes the cell `unknown` with a reason, never `proved`."""

from __future__ import annotations

import attrs
from attrs import frozen

from model import ENVIRONMENTS_BY_NAME, SITES_BY_NAME, VARIANTS_BY_NAME, Environment, Site, Variant
from proofs.engines.fol import UNKNOWN, Cell, coverage, covers, prove

TOOL = (SITES_BY_NAME["tool-outputs"],)


@frozen
class WithReconnects(Environment):
    """An environment with one more option, as another branch may add to `model/`."""

    reconnects: bool = False


@frozen
class WithShape(Variant):
    """A variant with a session-shape field the first-order model does not read."""

    shape: str = "ack-driven"


def test_every_catalog_environment_is_covered() -> None:
    variant = VARIANTS_BY_NAME["three-way"]
    for environment in ENVIRONMENTS_BY_NAME.values():
        assert covers(Cell(variant, TOOL, environment)), environment.name


def test_an_option_it_does_not_model_makes_the_cell_unknown() -> None:
    cell = Cell(VARIANTS_BY_NAME["three-way"], TOOL, WithReconnects(reconnects=True))
    assert not covers(cell)
    assert "reconnects" in coverage(cell)
    outcome = prove(cell)
    assert outcome.status == UNKNOWN
    assert "reconnects" in outcome.reason and "\n" not in outcome.reason
    # off, the extra field changes nothing, and the cell is covered
    assert covers(Cell(VARIANTS_BY_NAME["three-way"], TOOL, WithReconnects()))


def test_a_session_kind_or_field_it_does_not_model_makes_the_cell_unknown() -> None:
    three_way = VARIANTS_BY_NAME["three-way"]
    other_kind = attrs.evolve(three_way, session="duplex")
    assert "session kind" in coverage(Cell(other_kind, TOOL, Environment()))
    assert prove(Cell(other_kind, TOOL, Environment())).status == UNKNOWN
    fields = {f.name: getattr(three_way, f.name) for f in attrs.fields(Variant)}
    shaped = WithShape(**fields, shape="gemini-live")
    assert "shape" in coverage(Cell(shaped, TOOL, Environment()))
    assert covers(Cell(WithShape(**fields), TOOL, Environment()))


def test_a_site_field_or_mutant_it_does_not_know_makes_the_cell_unknown() -> None:
    site = SITES_BY_NAME["tool-outputs"]

    @frozen
    class Timed(Site):
        delay: float = 0.0

    fields = {f.name: getattr(site, f.name) for f in attrs.fields(Site)}
    cell = Cell(VARIANTS_BY_NAME["lock5"], (Timed(**fields, delay=1.0),), Environment())
    assert "delay" in coverage(cell)
    assert "mutant" in coverage(Cell(VARIANTS_BY_NAME["lock5"], TOOL, Environment(), "nope"))


def test_a_cell_past_its_time_limit_is_unknown_never_proved() -> None:
    cell = Cell(VARIANTS_BY_NAME["three-way"], TOOL, Environment())
    outcome = prove(cell, seconds_limit=0.0)
    assert outcome.status == UNKNOWN
    assert "time" in outcome.reason
