"""Proofs that prove what holds, and the same machinery failing where the bug is."""

from __future__ import annotations

import z3
from attrs import evolve

from model import (
    ENVIRONMENTS_BY_NAME,
    SCENARIOS_BY_NAME,
    VARIANTS_BY_NAME,
    Config,
    Invariant,
    check,
)
from proofs.engines.smt.bmc import COUNTEREXAMPLE, PROVED, UNKNOWN, check_configs
from proofs.engines.smt.encoding import ENCODED, Encoding, SymState
from proofs.engines.smt.induction import Conjunct, check_inductive
from proofs.engines.smt.reachset import reachable_invariant

BASE = ENVIRONMENTS_BY_NAME["base"]
OVERLAP = SCENARIOS_BY_NAME["overlapping-push"]
NO_DELETE = Invariant.NO_UNINTENDED_DELETE


def _config(variant: str, scenario: str = "overlapping-push", environment: str = "base") -> Config:
    return Config(
        VARIANTS_BY_NAME[variant], SCENARIOS_BY_NAME[scenario], ENVIRONMENTS_BY_NAME[environment]
    )


def test_k_induction_proves_lock3_on_overlapping_push() -> None:
    results = check_configs([_config("lock3")])
    # every invariant, 3 and 4 included, holds for lock3 on this scenario
    assert {r.invariant: r.verdict for r in results} == dict.fromkeys(ENCODED, PROVED)
    for result in results:
        assert result.method == "k-induction"
        assert result.bound == "items=3 tasks=2 pool=0"
        assert result.depth is not None and result.depth > 5


def test_the_same_machinery_finds_the_bug_without_the_lock() -> None:
    results = {r.invariant: r for r in check_configs([_config("unlocked")])}
    deleted = results[NO_DELETE]
    assert deleted.verdict == COUNTEREXAMPLE and deleted.depth == 6
    assert deleted.trace is not None and deleted.violation is not None
    assert check(deleted.trace.last, deleted.config, NO_DELETE) == deleted.violation


def test_a_mutant_that_drops_one_lock_is_caught() -> None:
    lock3 = VARIANTS_BY_NAME["lock3"]
    mutant = evolve(
        lock3, name="lock3-minus-user-turn", locked_sites=lock3.locked_sites - {"user-turn"}
    )
    (result,) = check_configs([Config(mutant, OVERLAP, BASE)], [NO_DELETE])
    assert result.verdict == COUNTEREXAMPLE
    assert result.depth == 6


def test_the_reachable_set_invariant_proves_lock3_and_is_checked_by_z3() -> None:
    config = _config("lock3")
    enc = Encoding(config)
    result = check_inductive(enc, reachable_invariant(config, enc), tuple(Invariant))
    assert result.inductive and result.failure is None
    assert result.proves(NO_DELETE) and result.proves(Invariant.AGREEMENT_AT_REST)


def test_lock3s_invariant_fails_on_the_unlocked_variant_naming_conjunct_and_move() -> None:
    locked = _config("lock3")
    unlocked = _config("unlocked")
    # the same state variables: lock3's reachable states as a candidate for unlocked
    candidate = reachable_invariant(locked, Encoding(locked))
    result = check_inductive(Encoding(unlocked), candidate, (NO_DELETE,))
    assert not result.inductive
    failure = result.failure
    assert failure is not None and failure.stage == "consecution"
    assert failure.conjunct is not None and failure.move is not None
    assert failure.before is not None and failure.after is not None
    text = failure.describe()
    assert f"conjunct '{failure.conjunct}'" in text and f"move '{failure.move}'" in text
    assert "before:" in text and "after:" in text


def test_the_property_alone_is_not_inductive_and_the_failure_says_why() -> None:
    config = _config("lock5")
    enc = Encoding(config)

    def no_delete(s: SymState) -> z3.BoolRef:
        return z3.Not(enc.bad(s, NO_DELETE))

    result = check_inductive(enc, [Conjunct("no unintended delete", no_delete)], (NO_DELETE,))
    assert not result.inductive
    assert result.failure is not None
    assert result.failure.conjunct == "no unintended delete"
    assert result.failure.move is not None


def test_the_invariant_method_still_finds_counterexamples() -> None:
    results = {r.invariant: r for r in check_configs([_config("unlocked")], method="invariant")}
    assert results[NO_DELETE].verdict == COUNTEREXAMPLE
    assert results[Invariant.AGREEMENT_AT_REST].verdict == COUNTEREXAMPLE
    proved = check_configs([_config("lock5")], method="invariant")
    assert all(r.verdict == PROVED and r.method.startswith("invariant") for r in proved)


def test_a_cell_out_of_time_is_unknown_never_proved() -> None:
    for method in ("k-induction", "invariant"):
        results = check_configs([_config("lock3")], timeout=0.001, method=method)
        assert {r.verdict for r in results} == {UNKNOWN}
        assert all("time limit" in r.reason for r in results)
