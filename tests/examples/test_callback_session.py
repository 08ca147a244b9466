"""The callback-session example conforms to lock5, and its broken copies are caught.

The example's own test file (every mode, as a team runs it) is run by
`tests/test_porting_doc.py`, through the command `docs/porting.md` gives.
"""

from __future__ import annotations

import logging
import unittest
from collections.abc import Iterator

import pytest

from examples.callback_session.adapter import SITES, acme_adapter, acme_factory
from model import SCENARIOS_BY_NAME, VARIANTS_BY_NAME, Config, Invariant
from proofs.engines.conformance import Mismatch, conformance_test_case, exhaust
from proofs.engines.conformance.testing import MODES
from tests.examples.mutants import NO_GATE, SNAPSHOT_BEFORE_GATE, USER_TURN_UNGATED, Mutant

#: The shipped example, exhaustively and by replay, under each scenario's own environment.
TestExampleLock5 = conformance_test_case(
    acme_adapter,
    appends_locally=True,
    variant="lock5",
    sites=SITES,
    modes=("exhaustive", "replay"),
)

#: Timeouts: lock5's own loss (a timed-out cleanup lets the tool push anchor on a
#: deleted item) must happen in the example too, and the explorer's trace reproduce it.
TestExampleLock5Timeouts = conformance_test_case(
    acme_adapter,
    appends_locally=True,
    variant="lock5",
    scenarios=["cleanup-during-tool-push"],
    environments=["timeouts"],
    modes=("exhaustive", "replay"),
)

#: Every environment option at once, on the cell with server-assigned keys.
TestExampleLock5AllOptions = conformance_test_case(
    acme_adapter,
    appends_locally=True,
    variant="lock5",
    scenarios=["server-item-during-replacement"],
    environments=["all"],
    modes=("exhaustive", "replay"),
)


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    """Timeouts and rejections are logged by design."""
    logger = logging.getLogger("acme")
    level = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(level)


def _run(case: type[unittest.TestCase]) -> dict[str, str]:
    """Run a generated TestCase; the failure text of each failing test, by test name."""
    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(case).run(result)
    assert not result.errors, result.errors[0][1]
    return {test.id().rsplit(".", 1)[1]: text for test, text in result.failures}


def _lock5_on(mutant: Mutant, scenario: str, modes: tuple[str, ...] = MODES) -> dict[str, str]:
    case = conformance_test_case(
        acme_factory(mutant.agent_class()),
        appends_locally=True,
        variant="lock5",
        scenarios=[scenario],
        examples=10,
        modes=modes,
    )
    return _run(case)


def test_a_user_turn_without_the_gate_is_caught_in_both_modes_that_drive_it() -> None:
    failures = _lock5_on(USER_TURN_UNGATED, "overlapping-push")
    # the model has no counterexample in this lock5 cell, so there is nothing to replay
    assert set(failures) == {
        "test_exhaustive__overlapping_push__base",
        "test_hypothesis__overlapping_push__base",
    }
    exhaustive = failures["test_exhaustive__overlapping_push__base"]
    assert "MISMATCH after call T1" in exhaustive
    assert "activity_lock: model T1, implementation free" in exhaustive
    assert "state.call_T1(" in failures["test_hypothesis__overlapping_push__base"]
    # the lines that replay it run, and raise the same mismatch
    replay = exhaustive[exhaustive.index("    from model import") :]
    code = "\n".join(line.removeprefix("    ") for line in replay.splitlines())
    factory = acme_factory(USER_TURN_UNGATED.agent_class())
    with pytest.raises(Mismatch, match="activity_lock: model T1, implementation free"):
        exec(code, {"factory": factory})


def test_a_snapshot_before_the_gate_is_caught_while_it_waits() -> None:
    failures = _lock5_on(SNAPSHOT_BEFORE_GATE, "overlapping-push", ("exhaustive",))
    exhaustive = failures["test_exhaustive__overlapping_push__base"]
    # the tool push (T0) holds a request the model's T0 has not built yet
    assert "MISMATCH after call T1; call T0" in exhaustive
    assert "T0.request: model none, implementation [msg0]" in exhaustive


def test_with_no_gate_anywhere_it_is_the_unlocked_variant_and_loses_the_tool_output() -> None:
    agent = NO_GATE.agent_class()
    failures = _lock5_on(NO_GATE, "overlapping-push", ("exhaustive",))
    assert "test_exhaustive__overlapping_push__base" in failures
    # against the variant it really is, it conforms, and breaks what unlocked breaks
    as_unlocked = conformance_test_case(
        acme_factory(agent),
        appends_locally=True,
        variant="unlocked",
        scenarios=["overlapping-push", "replacement-first"],
        modes=("exhaustive", "replay"),
    )
    assert _run(as_unlocked) == {}
    scenario = SCENARIOS_BY_NAME["overlapping-push"]
    result = exhaust(
        Config(VARIANTS_BY_NAME["unlocked"], scenario, scenario.environment, appends_locally=True),
        12,
        acme_factory(agent),
    )
    found = result.violations[Invariant.NO_UNINTENDED_DELETE]
    assert found.reason == "T1 (user-turn) sent a delete for acknowledged out1"


def test_a_scenario_the_agent_cannot_run_says_how_to_leave_it_out() -> None:
    case = conformance_test_case(
        acme_adapter,
        appends_locally=True,
        variant="lock5",
        scenarios=["spoken-during-tool-push"],
        modes=("exhaustive",),
    )
    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(case).run(result)
    (error,) = result.errors
    assert "spoken-message, which the example agent does not have" in error[1]
    assert "sites=" in error[1]
