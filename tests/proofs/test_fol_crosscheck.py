"""The first-order model against `model/`: every state the explorer reaches, mapped to the
relations, keeps the structure the proofs assume, and a wrong conjunct is caught."""

from __future__ import annotations

from model import SCENARIOS, SITES, VARIANTS_BY_NAME, Config, Variant
from proofs.engines.fol import SAFETY, Cell, Clause, Sample, fixed_conjuncts, reachable, structure
from proofs.engines.fol.vocab import lit, neg

#: Catalog scenarios that meet the engine's assumptions (all of them do today).
CATALOG = SCENARIOS


def _sample(variant: Variant) -> tuple[Sample, int]:
    structures = []
    for scenario in CATALOG:
        config = Config(variant, scenario, scenario.environment)
        cell = Cell(variant, SITES, scenario.environment)
        structures += [structure(state, config, cell) for state in reachable(config)]
    return Sample(structures), len(structures)


def test_every_reachable_catalog_state_keeps_the_fixed_structure() -> None:
    for name in ("three-way", "lock5", "lock5-hoisted", "unlocked"):
        sample, states = _sample(VARIANTS_BY_NAME[name])
        assert states > 50
        for clause in fixed_conjuncts(Cell(VARIANTS_BY_NAME[name], SITES, CATALOG[0].environment)):
            assert not sample.violated(clause), (name, clause.name)


def test_safety_on_mapped_states_agrees_with_the_model_check() -> None:
    three_way, _ = _sample(VARIANTS_BY_NAME["three-way"])
    assert not three_way.violated(SAFETY)
    # the same check fails where the model has the bug: unlocked, overlapping pushes
    unlocked, _ = _sample(VARIANTS_BY_NAME["unlocked"])
    assert unlocked.violated(SAFETY)


def test_a_wrong_conjunct_is_caught() -> None:
    sample, _ = _sample(VARIANTS_BY_NAME["three-way"])
    mirror_is_server = Clause((neg("S", "i"), lit("M", "i")), "the mirror is the server")
    assert sample.violated(mirror_is_server)
    one_batch = Clause(
        (neg("tsc", "t", "i"), neg("evc", "u", "j"), lit("=", "t", "u")), "one batch in flight"
    )
    assert sample.violated(one_batch)
    # and a true one is not: an op at the server was sent by a task that waits or has waited
    sent = Clause((neg("tsc", "t", "i"), lit("idle", "t", positive=False)), "sent, not idle")
    assert not sample.violated(sent)
