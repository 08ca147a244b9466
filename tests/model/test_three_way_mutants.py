"""The three-way variant holds only because of its parts: remove one and the
explorer finds the bug it prevents."""

import pytest

import model.moves
from model import VARIANTS_BY_NAME, Call, Config, Environment, Invariant, Scenario, Verdict
from model.environment import ALL
from proofs.engines.explore import explore

THREE_WAY = VARIANTS_BY_NAME["three-way"]

#: Two application replacements with stale copies: one drops msg0, the other's
#: older copy still holds it.
CONFLICTING_REPLACEMENTS = Scenario(
    "conflicting-replacements",
    "x",
    (Call("replacement", adds=("note0",)), Call("replacement", drops=("msg0",))),
)


def verdict(scenario: Scenario, invariant: Invariant, env: Environment = ALL) -> Verdict:
    return explore(Config(THREE_WAY, scenario, env)).finding(invariant).verdict


def test_three_way_holds_on_conflicting_replacements() -> None:
    env = Environment(stale_copies=True)
    assert verdict(CONFLICTING_REPLACEMENTS, Invariant.AGREEMENT_AT_REST, env) is Verdict.HOLDS


def test_without_the_merge_a_stale_copy_keeps_an_item_deleted_on_purpose(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(model.moves, "tombstones", lambda state: frozenset())
    env = Environment(stale_copies=True)
    found = explore(Config(THREE_WAY, CONFLICTING_REPLACEMENTS, env)).finding(
        Invariant.AGREEMENT_AT_REST
    )
    assert found.verdict is Verdict.COUNTEREXAMPLE
    assert found.violation is not None and found.violation.item == "msg0"


def test_without_the_base_the_overlapping_push_deletes_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from model import SCENARIOS_BY_NAME
    from model.diff import three_way_diff

    def no_base(expected, base, request, task):  # type: ignore[no-untyped-def]
        return three_way_diff(expected, set(expected), request, task)

    monkeypatch.setattr(model.moves, "three_way_diff", no_base)
    scenario = SCENARIOS_BY_NAME["overlapping-push"]
    # the user turn deletes the tool output while its create is still pending: not
    # yet acknowledged, so invariant 1 is silent, and invariant 2 sees the loss
    assert verdict(scenario, Invariant.NO_UNINTENDED_DELETE) is Verdict.HOLDS
    found = explore(Config(THREE_WAY, scenario, ALL)).finding(Invariant.AGREEMENT_AT_REST)
    assert found.violation is not None and found.violation.item == "out1"


def test_diffing_against_the_mirror_instead_of_the_expected_view_breaks_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from model import SCENARIOS_BY_NAME

    monkeypatch.setattr(model.moves, "expected_view", lambda mirror, outstanding: mirror)
    # the cleanup's delete of asst1 is in flight; the tool push's snapshot still has
    # asst1, the merge drops it, and a diff against the mirror deletes it again,
    # a delete the tool push never meant
    scenario = SCENARIOS_BY_NAME["cleanup-during-tool-push"]
    found = explore(Config(THREE_WAY, scenario, Environment())).finding(
        Invariant.NO_UNINTENDED_DELETE
    )
    assert found.violation is not None
    assert (found.violation.item, found.violation.site) == ("asst1", "interrupted-tool-outputs")
