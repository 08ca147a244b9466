"""Every check that claims to catch a bug is shown to catch it."""

from __future__ import annotations

import pytest
from hypothesis.stateful import run_state_machine_as_test

from model import SCENARIOS, SCENARIOS_BY_NAME, VARIANTS_BY_NAME
from proofs.adapters.impl import impl_adapter
from proofs.engines.conformance.exhaustive import exhaust
from proofs.engines.conformance.lockstep import Lockstep, Mismatch
from proofs.engines.conformance.machine import conformance_machine, machine_settings
from proofs.engines.conformance.steps import parse_steps
from tests.conformance.conftest import own
from tests.conformance.mutants import APPENDING_LOCAL, AWAIT_BEFORE_SEND, MUTANTS, Mutant


@pytest.mark.parametrize(
    ("mutant", "variant"),
    [(mutant, variant) for mutant in MUTANTS for variant in mutant.variants],
    ids=lambda value: value if isinstance(value, str) else value.name,
)
def test_each_mutant_is_caught_in_each_variant_it_breaks(mutant: Mutant, variant: str) -> None:
    caught = []
    for scenario in SCENARIOS:
        result = exhaust(own(VARIANTS_BY_NAME[variant], scenario), 12, mutant.factory())
        expected = {
            inv
            for inv in result.violations
            if VARIANTS_BY_NAME[variant].expected(scenario.name, scenario.environment, inv).value
            == "counterexample"
        }
        if result.mismatches or set(result.violations) - expected:
            caught.append(scenario.name)
    assert caught, f"{mutant.name} passed conformance in {variant}"


def test_an_await_the_model_lacks_passes_single_step_lockstep() -> None:
    """One stimulus at a time, nothing else is ready at the extra await: invisible."""
    factory = AWAIT_BEFORE_SEND.factory()
    for scenario in SCENARIOS:
        result = exhaust(own(VARIANTS_BY_NAME["three-way"], scenario), 12, factory)
        assert not result.mismatches


def test_an_await_the_model_lacks_is_caught_by_a_burst_and_a_schedule() -> None:
    config = own(VARIANTS_BY_NAME["three-way"], SCENARIOS_BY_NAME["cleanup-during-tool-push"])
    factory = AWAIT_BEFORE_SEND.factory()
    # both calls arrive in one iteration; asyncio's own order happens to be fine
    Lockstep.replay(config, parse_steps("call T1 + call T0"), factory).close()
    # the second choice point reorders the two continuations after the extra await:
    # T0 sends the delete T1 diffed without seeing
    with pytest.raises(Mismatch, match="to_server"):
        Lockstep.replay(config, parse_steps("call T1 + call T0 @0.1"), factory)
    # the real implementation has no such await: every order conforms
    for schedule in ("", "1", "0.1", "1.1"):
        Lockstep.replay(config, parse_steps(f"call T1 + call T0 @{schedule}"), impl_adapter).close()


def test_hypothesis_in_scheduler_mode_finds_it_and_prints_runnable_steps() -> None:
    config = own(VARIANTS_BY_NAME["three-way"], SCENARIOS_BY_NAME["cleanup-during-tool-push"])
    machine = conformance_machine(config, AWAIT_BEFORE_SEND.factory(), scheduled=True)
    with pytest.raises(Mismatch) as caught:
        run_state_machine_as_test(machine, settings=machine_settings(200, steps=10))
    notes = "\n".join(getattr(caught.value, "__notes__", []))
    code = notes[
        notes.index("state = ") : notes.index("state.teardown()") + len("state.teardown()")
    ]
    assert "together=True" in code
    # the printed steps are runnable and fail the same way
    with pytest.raises(Mismatch) as again:
        exec(code, {machine.__name__: machine})
    assert again.value.detail == caught.value.detail


#: Two runs of overlapping-push where livekit's insert and an append differ: a tool
#: output made before the user turn enters after its message (before it, by creation
#: time), and a user message made before a tool output enters after it.
LOCAL_ORDER_TRACES = (
    "before-call T0; call T1; server-apply T1 hello; client-apply T1 hello; call T0",
    "call T1; call T0; server-apply T1 hello; client-apply T1 hello",
)


@pytest.mark.parametrize("variant", ["unlocked", "lock3"])
@pytest.mark.parametrize("trace", LOCAL_ORDER_TRACES)
def test_an_appending_local_context_is_caught_on_the_local_order(variant: str, trace: str) -> None:
    config = own(VARIANTS_BY_NAME[variant], SCENARIOS_BY_NAME["overlapping-push"])
    Lockstep.replay(config, parse_steps(trace), impl_adapter).close()
    with pytest.raises(Mismatch, match=r"local: model \[msg0, (out1, hello|hello, out1)\]"):
        Lockstep.replay(config, parse_steps(trace), APPENDING_LOCAL)
