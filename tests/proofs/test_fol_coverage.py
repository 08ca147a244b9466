"""The first-order engine answers only for what it models: an option, a session shape or
a record field it does not read makes the cell `unknown` with a reason, never `proved`."""

from __future__ import annotations

import attrs
from attrs import frozen

from model import (
    ENVIRONMENTS_BY_NAME,
    SHAPES_BY_NAME,
    SITES_BY_NAME,
    VARIANTS_BY_NAME,
    Environment,
    Site,
    Variant,
)
from proofs.engines.fol import UNKNOWN, Cell, coverage, covers, prove

TOOL = (SITES_BY_NAME["tool-outputs"],)


@frozen
class WithTeleports(Environment):
    """An environment with one more option than the first-order model knows, as a later
    change to `model/` may add."""

    teleports: bool = False


@frozen
class WithColour(Variant):
    """A variant with a field the first-order model does not read."""

    colour: str = ""


def test_every_catalog_environment_but_a_reconnect_is_covered() -> None:
    """A reconnect is modelled out only where the shape has none (three-way): there the
    model gives the option no move. lock5's session rebuilds on reconnect: unknown.
    Both shapes put an item announced after a deleted one at the tail, so the
    stale-anchors option gives no move either and is modelled out too."""
    for environment in ENVIRONMENTS_BY_NAME.values():
        assert covers(Cell(VARIANTS_BY_NAME["three-way"], TOOL, environment)), environment.name
        cell = Cell(VARIANTS_BY_NAME["lock5"], TOOL, environment)
        assert covers(cell) is not environment.reconnects, environment.name


def test_an_option_it_does_not_model_makes_the_cell_unknown() -> None:
    for variant, environment in (
        ("lock5", Environment(reconnects=True)),
        ("three-way", WithTeleports(teleports=True)),
    ):
        cell = Cell(VARIANTS_BY_NAME[variant], TOOL, environment)
        assert not covers(cell)
        reason = coverage(cell)
        assert ("reconnects" in reason) or ("teleports" in reason), reason
        outcome = prove(cell)
        assert outcome.status == UNKNOWN
        assert outcome.reason == reason and "\n" not in outcome.reason
    # off, the extra field changes nothing, and the cell is covered
    assert covers(Cell(VARIANTS_BY_NAME["three-way"], TOOL, WithTeleports()))


def test_a_session_shape_or_field_it_does_not_model_makes_the_cell_unknown() -> None:
    lock5 = VARIANTS_BY_NAME["lock5"]
    for name in ("duplex", "duplex-await", "gemini"):
        cell = Cell(lock5, TOOL, Environment(), shape=SHAPES_BY_NAME[name])
        assert f"session shape {name}" in coverage(cell)
        assert prove(cell).status == UNKNOWN
    # compared by fields, not name: a renamed openai shape is covered, a changed one not
    openai = SHAPES_BY_NAME["openai"]
    renamed = attrs.evolve(openai, name="mine", summary="ours", source="here")
    assert covers(Cell(lock5, TOOL, Environment(), shape=renamed))
    changed = attrs.evolve(openai, name="mine", sends=SHAPES_BY_NAME["duplex"].sends)
    assert not covers(Cell(lock5, TOOL, Environment(), shape=changed))
    fields = {f.name: getattr(lock5, f.name) for f in attrs.fields(Variant)}
    assert "colour" in coverage(Cell(WithColour(**fields, colour="red"), TOOL, Environment()))
    assert covers(Cell(WithColour(**fields), TOOL, Environment()))


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


def _lock5(*names: str) -> Cell:
    return Cell(
        VARIANTS_BY_NAME["lock5"],
        tuple(SITES_BY_NAME[n] for n in names),
        ENVIRONMENTS_BY_NAME["base"],
    )


def test_a_mirror_diff_cell_whose_local_order_can_disagree_with_the_mirror_is_unknown() -> None:
    """The mirror-diff session diffs in order, the first-order model by membership: exact
    only while the request agrees with the mirror in order. A tool output is made before
    its call and placed by creation time, so a live-context (cleanup) or copied
    (replacement) request can disagree, and the cell is left unknown
    (`tests/proofs/test_fol_crosscheck.py` shows the explorer's states where it does).
    Without such a request, or with no tool output, the cell stays covered."""
    for names in (("tool-outputs", "cleanup"), ("interrupted-tool-outputs", "replacement")):
        cell = _lock5(*names)
        assert "out of the mirror's order" in coverage(cell), names
        assert prove(cell).status == UNKNOWN
    for names in (("user-turn", "cleanup"), ("user-turn", "tool-outputs")):
        assert covers(_lock5(*names)), names
    three_way = Cell(
        VARIANTS_BY_NAME["three-way"], (SITES_BY_NAME["tool-outputs"],) * 1, Environment()
    )
    assert covers(attrs.evolve(three_way, sites=(*three_way.sites, SITES_BY_NAME["cleanup"])))
