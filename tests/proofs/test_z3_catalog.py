"""The default `verify` on the whole catalog, and z3's per-scenario engines as an
independent cross-check of the explorer on a small part of it.

One default run covers every (variant, invariant, environment) of the catalog
(variants x invariants x `model.ENVIRONMENTS`, over every scenario); the tests below
read it, and so does the check that `docs/variants.md`, generated from the same cells,
is current. The cross-check runs `--method bmc` (bounded model checking, proofs by
k-induction: a second encoding of the semantics, written apart from the explorer's)
on a few variants, scenarios and environments, and needs the same verdicts and the
same shortest depths as the explorer.
"""

from __future__ import annotations

import pytest
from attrs import evolve

from model import (
    CONFIGURATIONS,
    ENVIRONMENTS,
    ENVIRONMENTS_BY_NAME,
    SCENARIOS,
    SCENARIOS_BY_NAME,
    VARIANTS_BY_NAME,
    Config,
    Invariant,
    Verdict,
    check,
)
from proofs.adapters.impl import IMPLEMENTED_SHAPES
from proofs.adapters.registry import adapter_factory
from proofs.engines.compact import unsupported
from proofs.engines.explore import explore
from proofs.engines.fol import Cell, widest
from proofs.engines.fol.certificate import committed, key
from proofs.engines.smt.encoding import UNENCODED
from proofs.engines.trace import replay
from proofs.engines.verdicts import (
    COUNTEREXAMPLE,
    METHOD_BMC,
    PROVED,
    CellVerdict,
    catalog_sites,
    replay_in,
    run,
)
from proofs.report.pages import PAGE, render_variants
from proofs.report.verify import cell_json
from tests.proofs.test_output_schemas import _errors

#: The cross-check's part of the catalog: proofs, counterexamples at depths 3 to 11 of
#: both invariants, the model's own items, timeouts, and two variants that are the same
#: model in one scenario.
CROSS_VARIANTS = [VARIANTS_BY_NAME[name] for name in ("unlocked", "lock3", "lock5", "three-way")]
CROSS_SCENARIOS = [
    SCENARIOS_BY_NAME[name] for name in ("overlapping-push", "server-item-during-replacement")
]
CROSS_ENVIRONMENTS = [ENVIRONMENTS_BY_NAME[name] for name in ("base", "server-items", "timeouts")]


@pytest.fixture(scope="module")
def cells() -> list[CellVerdict]:
    # the defaults of `ackguard verify` and of `python -m proofs.pages`: every
    # meaningful (variant, session shape) pair
    shaped = [evolve(variant, shape=shape.name) for variant, shape in CONFIGURATIONS]
    return run(shaped, SCENARIOS, ENVIRONMENTS, impl=replay_in(adapter_factory("impl")))


@pytest.fixture(scope="module")
def cross() -> list[CellVerdict]:
    return run(CROSS_VARIANTS, CROSS_SCENARIOS, CROSS_ENVIRONMENTS, method=METHOD_BMC)


def test_every_catalog_cell_is_checked_on_every_scenario(cells: list[CellVerdict]) -> None:
    keys = {(c.variant.name, c.session, c.invariant, c.environment) for c in cells}
    assert len(keys) == len(cells) == len(CONFIGURATIONS) * len(Invariant) * len(ENVIRONMENTS)
    assert all(len(c.scenarios) == len(SCENARIOS) and c.complete for c in cells)


def test_every_verdict_is_the_catalogs_expectation(cells: list[CellVerdict]) -> None:
    wrong = [
        (c.variant.name, c.invariant.value, c.environment.name, c.verdict, c.reason)
        for c in cells
        if not c.matched or c.verdict not in (COUNTEREXAMPLE, PROVED)
    ]
    assert not wrong


def test_every_counterexample_replays_through_the_model_and_the_implementation(
    cells: list[CellVerdict],
) -> None:
    failing = [c for c in cells if c.verdict == COUNTEREXAMPLE]
    assert failing
    for cell in failing:
        witness = cell.witness
        assert witness is not None and witness.trace is not None
        trace = replay(witness.config, witness.trace.moves)
        assert trace.depth == cell.depth
        violation = check(trace.last, witness.config, cell.invariant)
        assert violation is not None and violation == witness.violation
        # impl implements the openai and three-way shapes and no reconnect: elsewhere
        # it has no counterpart, and says so rather than passing or failing (a shape
        # with no reconnect of its own, three-way, is not refused under the option)
        implemented = cell.session in IMPLEMENTED_SHAPES and not witness.config.reconnects()
        expected = "reproduced" if implemented else "no counterpart in the implementation"
        assert witness.impl.startswith(expected), (cell.variant.name, cell.session, witness.impl)


def test_a_counterexample_has_the_fewest_calls_any_catalog_scenario_needs(
    cells: list[CellVerdict],
) -> None:
    for cell in cells:
        if cell.verdict != COUNTEREXAMPLE:
            continue
        assert cell.witness is not None
        calls = len(cell.witness.config.scenario.calls)
        fewest = min(
            len(SCENARIOS_BY_NAME[s.scenario].calls)
            for s in cell.scenarios
            if s.verdict == COUNTEREXAMPLE
        )
        assert calls <= fewest
        assert cell.scope.startswith(f"{calls} call")
        # mixes of fewer calls are searched where the compact explorer runs (not on
        # other session shapes or with a reconnect: docs/proofs.md)
        config = cell.witness.config
        if calls > 1 and unsupported(config) is None and not config.reconnects():
            assert cell.scope.endswith("(no fewer calls fail)"), (cell.variant.name, cell.session)


def test_a_proof_says_its_scope_and_every_size_only_from_the_first_order_engine(
    cells: list[CellVerdict],
) -> None:
    proved = [c for c in cells if c.verdict == PROVED]
    assert proved
    for cell in proved:
        if cell.bound == "every size":
            assert cell.method == "fol" and cell.scope.startswith("every number of calls")
            assert cell.assumptions and not cell.reason
        else:
            assert cell.method == "explore" and "every number" not in cell.scope
            assert cell.scope.startswith("the catalog's scenarios: 3 calls at most")
            assert cell.reason  # why not every size


#: three-way's columns of invariant 1, every one proved by the check of the `all`
#: column's certificate, whose first-order system contains each one's (`fol.cover`).
CERTIFIED = ("base", "stale-copies", "server-items", "timeouts", "rejections", "reconnects")
CERTIFIED += ("stale-anchors", "all")


def test_the_default_run_proves_three_way_for_every_size_from_its_certificates(
    cells: list[CellVerdict],
) -> None:
    """Issue 13's "ackguard verify runs this by default": with no options, one committed
    certificate is checked, the `all` column's, and three-way's cells of invariant 1 are
    proved for every number of calls and items from it; every proof for every size is a
    certificate that checked, each column but `all` saying whose and why it covers it,
    and every holding cell of invariant 1 that is not one says why."""
    first = Invariant.NO_UNINTENDED_DELETE
    three_way = {
        c.environment.name: c
        for c in cells
        if c.variant.name == "three-way" and c.invariant is first
    }
    assert {name for name in CERTIFIED if three_way[name].bound == "every size"} == set(CERTIFIED)
    for cell in cells:
        job = cell.first_order
        if cell.bound == "every size":
            assert job is not None and job.status == PROVED and job.certificate
            fol_cell = widest(Cell(cell.variant, catalog_sites(SCENARIOS), cell.environment))
            assert job.certificate == key(fol_cell) and committed(fol_cell) is not None
            assert job.checked_on == "all"
            assert bool(job.cover) == (cell.environment.name != "all")
            assert job.cover in cell.scope
        elif cell.invariant is first and cell.verdict == PROVED:
            assert cell.reason.startswith("the first-order engine"), cell.reason
    assert not _errors("verify", [cell_json(c) for c in three_way.values()])


def test_the_variants_page_is_what_verify_produces_now(cells: list[CellVerdict]) -> None:
    """docs/variants.md is generated (`python -m proofs.pages`); a change to the
    model, the engines or the catalog that changes a verdict, a scope or a trace must
    regenerate it."""
    page = render_variants([cell_json(cell, with_mermaid=True) for cell in cells])
    committed = PAGE.read_text()
    if page != committed:
        changed = [
            f"  line {number}: committed {old!r}, now {new!r}"
            for number, (old, new) in enumerate(
                zip(committed.splitlines(), page.splitlines(), strict=False), start=1
            )
            if old != new
        ][:5] or [f"  {len(committed.splitlines())} lines committed, {len(page.splitlines())} now"]
        pytest.fail(
            f"{PAGE} is out of date; regenerate it with `python -m proofs.pages`. "
            "First differences:\n" + "\n".join(changed)
        )


def test_bmc_and_the_explorer_agree_on_verdict_and_shortest_depth(
    cross: list[CellVerdict],
) -> None:
    disagreements = []
    # z3 claims nothing about an invariant it has no property for: the explorer decides it
    unencoded = [c for c in cross if c.invariant in UNENCODED]
    assert unencoded and all(s.method == "explore" for c in unencoded for s in c.scenarios)
    for cell in cross:
        for check_ in cell.scenarios:
            config = Config(cell.variant, SCENARIOS_BY_NAME[check_.scenario], cell.environment)
            finding = explore(config, (cell.invariant,)).finding(cell.invariant)
            explorer = COUNTEREXAMPLE if finding.verdict is Verdict.COUNTEREXAMPLE else PROVED
            z3_depth = check_.depth if check_.verdict == COUNTEREXAMPLE else None
            if (check_.verdict, z3_depth) != (explorer, finding.depth):
                disagreements.append(
                    f"{cell.variant.name} / {check_.scenario} / {cell.environment.name} / "
                    f"{cell.invariant.value}: z3 {check_.verdict} {z3_depth}, explorer "
                    f"{explorer} {finding.depth}"
                )
    assert not disagreements, "\n".join(disagreements)
    assert {c.verdict for c in cross} == {COUNTEREXAMPLE, PROVED}


def test_bmc_proofs_name_their_method_and_bound(cross: list[CellVerdict]) -> None:
    for cell in (c for c in cross if c.invariant not in UNENCODED):
        for check_ in cell.scenarios:
            scenario = SCENARIOS_BY_NAME[check_.scenario]
            if check_.verdict == PROVED:
                assert check_.method == "k-induction" and check_.depth is not None
                assert check_.bound.startswith(f"items={len(scenario.items())} ")
                assert f"tasks={len(scenario.calls)}" in check_.bound
            else:
                assert check_.method == "bmc"


def test_bmc_checks_variants_that_are_the_same_model_once(cross: list[CellVerdict]) -> None:
    shared = {
        (cell.variant.name, check_.scenario, check_.same_model_as)
        for cell in cross
        for check_ in cell.scenarios
        if check_.same_model_as
    }
    assert ("lock5", "overlapping-push", "lock3") in shared
    by_key = {
        (cell.variant.name, check_.scenario, cell.environment, cell.invariant): check_
        for cell in cross
        for check_ in cell.scenarios
    }
    for variant, scenario, original in shared:
        for environment in CROSS_ENVIRONMENTS:
            for invariant in Invariant:
                mine = by_key[(variant, scenario, environment, invariant)]
                theirs = by_key[(original, scenario, environment, invariant)]
                assert (mine.verdict, mine.depth) == (theirs.verdict, theirs.depth)
                assert not theirs.same_model_as


def test_a_shared_bmc_verdict_is_the_one_its_own_check_finds(cross: list[CellVerdict]) -> None:
    """In `cross` (sharing on) lock5 takes lock3's check on overlapping-push; checked on
    its own (sharing off) it finds the same verdicts, depths and traces there."""
    lock5 = VARIANTS_BY_NAME["lock5"]
    scenario = SCENARIOS_BY_NAME["overlapping-push"]
    environments = [ENVIRONMENTS_BY_NAME["base"], ENVIRONMENTS_BY_NAME["timeouts"]]

    def verdicts(cells: list[CellVerdict]) -> dict[object, tuple[object, ...]]:
        return {
            (c.invariant, c.environment, s.scenario): (
                s.verdict,
                s.depth,
                None
                if c.witness is None or c.witness.trace is None or c.scenario != scenario.name
                else c.witness.trace.moves,
                s.same_model_as,
            )
            for c in cells
            if c.variant.name == lock5.name and c.environment in environments
            for s in c.scenarios
            if s.scenario == scenario.name
        }

    alone = verdicts(run([lock5], [scenario], environments, method=METHOD_BMC, share=False))
    shared = verdicts(cross)
    # 2 environments x every invariant
    assert len(alone) == len(shared) == 2 * len(Invariant)
    assert {k: v[:3] for k, v in alone.items()} == {k: v[:3] for k, v in shared.items()}
    assert {v[3] for v in alone.values()} == {""}
    assert {v[3] for v in shared.values()} == {"lock3"}
