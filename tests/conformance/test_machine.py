"""Hypothesis drives the lockstep: it conforms, and it finds the catalog's bugs."""

from __future__ import annotations

import re

import pytest
from hypothesis.stateful import run_state_machine_as_test

from model import SCENARIOS_BY_NAME, VARIANTS_BY_NAME, Scenario, Variant
from proofs.adapters.impl import impl_adapter
from proofs.engines.conformance.exhaustive import exhaust
from proofs.engines.conformance.machine import conformance_machine, machine_settings
from tests.conformance.conftest import CELLS, cell_id, own


@pytest.mark.parametrize("cell", CELLS, ids=cell_id)
def test_bursts_and_random_schedules_conform(cell: tuple[Variant, Scenario]) -> None:
    run_state_machine_as_test(
        conformance_machine(own(*cell), impl_adapter, scheduled=True), settings=machine_settings(15)
    )


@pytest.mark.parametrize(
    ("variant", "scenario"),
    [
        ("unlocked", "overlapping-push"),
        ("lock3", "replacement-first"),
        ("lock3", "cleanup-during-tool-push"),
        ("lock5", "stale-replacement"),
        ("lock5", "server-item-during-replacement"),
        ("lock5", "spoken-during-tool-push"),
    ],
)
def test_hypothesis_finds_the_catalogs_bug_in_the_implementation(
    variant: str, scenario: str
) -> None:
    config = own(VARIANTS_BY_NAME[variant], SCENARIOS_BY_NAME[scenario])
    machine = conformance_machine(config, impl_adapter, fail_on_violation=True)
    with pytest.raises(AssertionError, match="the implementation breaks") as caught:
        run_state_machine_as_test(machine, settings=machine_settings(300))
    notes = "\n".join(getattr(caught.value, "__notes__", []))
    steps = re.findall(r"^state\.\w+\(.*\)$", notes, flags=re.MULTILINE)
    shortest = min(len(v.steps) for v in exhaust(config, 12, impl_adapter).violations.values())
    assert shortest <= len(steps) <= shortest + 2, notes
