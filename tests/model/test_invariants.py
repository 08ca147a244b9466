from attrs import evolve

from model import (
    SCENARIOS_BY_NAME,
    VARIANTS_BY_NAME,
    Config,
    Event,
    EventKind,
    Invariant,
    agreement_at_rest,
    initial_state,
    no_unintended_delete,
)


def cfg(scenario: str) -> Config:
    sc = SCENARIOS_BY_NAME[scenario]
    return Config(VARIANTS_BY_NAME["lock5"], sc, sc.environment)


def test_delete_of_an_acknowledged_item_not_intended_is_a_violation() -> None:
    c = cfg("overlapping-push")
    state = evolve(initial_state(c), deletes_sent=frozenset({(1, "msg0", True)}))
    violation = no_unintended_delete(state, c)
    assert violation is not None
    assert violation.invariant is Invariant.NO_UNINTENDED_DELETE
    assert (violation.item, violation.task, violation.site) == ("msg0", 1, "user-turn")


def test_intended_or_unacknowledged_deletes_are_not_violations() -> None:
    c = cfg("cleanup-during-tool-push")
    intended = evolve(initial_state(c), deletes_sent=frozenset({(0, "asst1", True)}))
    assert no_unintended_delete(intended, c) is None
    not_acked = evolve(initial_state(c), deletes_sent=frozenset({(1, "zz", False)}))
    assert no_unintended_delete(not_acked, c) is None


def test_agreement_only_at_rest() -> None:
    c = cfg("overlapping-push")
    lost = evolve(initial_state(c), server=())
    violation = agreement_at_rest(lost, c)
    assert violation is not None and violation.item == "msg0"
    busy = evolve(lost, to_client=(Event(EventKind.ADDED, "x"),))
    assert agreement_at_rest(busy, c) is None


def test_agreement_flags_an_item_recreated_after_its_deletion() -> None:
    c = cfg("cleanup-during-tool-push")
    state = evolve(
        initial_state(c),
        removed=frozenset({"asst1"}),
        recreated=frozenset({(1, "asst1")}),
    )
    violation = agreement_at_rest(state, c)
    assert violation is not None and violation.item == "asst1" and violation.task == 1
