"""Shared settings: the implementation logs timeouts and rejections by design."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from model import SCENARIOS, VARIANTS, Config, Scenario, Variant


@pytest.fixture(autouse=True)
def _quiet_impl() -> Iterator[None]:
    logger = logging.getLogger("impl")
    level = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(level)


CELLS: list[tuple[Variant, Scenario]] = [(v, s) for v in VARIANTS for s in SCENARIOS]


def cell_id(cell: tuple[Variant, Scenario]) -> str:
    return f"{cell[0].name}/{cell[1].name}"


def own(variant: Variant, scenario: Scenario) -> Config:
    """The cell under the scenario's own environment (as `ackguard explore` runs it)."""
    return Config(variant, scenario, scenario.environment)
