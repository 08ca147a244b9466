"""z3 against the explorer on the whole catalog, and every counterexample replayed.

One run of `proofs.engines.smt.verify.run` covers every (variant, scenario, environment,
invariant) of the catalog (variants x scenarios x `model.ENVIRONMENTS`); the tests
below read it, and so does the check that `docs/variants.md`, generated from the
same cells, is current.
"""

from __future__ import annotations

import pytest

from model import (
    ENVIRONMENTS,
    ENVIRONMENTS_BY_NAME,
    SCENARIOS,
    SCENARIOS_BY_NAME,
    VARIANTS,
    VARIANTS_BY_NAME,
    Config,
    Invariant,
    Verdict,
    check,
)
from proofs.engines.explore import explore
from proofs.engines.smt.bmc import COUNTEREXAMPLE, PROVED, CellResult
from proofs.engines.smt.verify import Cell, run
from proofs.engines.trace import replay
from proofs.report.pages import PAGE, render_variants
from proofs.report.verify import cell_json


@pytest.fixture(scope="module")
def cells() -> list[Cell]:
    # the defaults of `ackguard verify` and of `python -m proofs.pages`
    return run(VARIANTS, SCENARIOS, ENVIRONMENTS, tuple(Invariant))


@pytest.fixture(scope="module")
def results(cells: list[Cell]) -> list[CellResult]:
    return [verdict.result for cell in cells for verdict in cell.scenarios]


def test_every_catalog_cell_is_checked(results: list[CellResult]) -> None:
    keys = {
        (r.config.variant.name, r.config.scenario.name, r.config.environment, r.invariant)
        for r in results
    }
    assert (
        len(keys)
        == len(results)
        == (len(VARIANTS) * len(SCENARIOS) * len(ENVIRONMENTS) * len(Invariant))
    )


def test_z3_and_the_explorer_agree_on_verdict_and_shortest_depth(
    results: list[CellResult],
) -> None:
    explorations: dict[Config, object] = {}
    disagreements = []
    for result in results:
        config = result.config
        if config not in explorations:
            explorations[config] = explore(config)
        finding = explorations[config].finding(result.invariant)  # type: ignore[attr-defined]
        explorer = COUNTEREXAMPLE if finding.verdict is Verdict.COUNTEREXAMPLE else PROVED
        depth = finding.depth
        z3_depth = result.depth if result.verdict == COUNTEREXAMPLE else None
        if (result.verdict, z3_depth) != (explorer, depth):
            disagreements.append(
                f"{config.variant.name} / {config.scenario.name} / {config.environment.name} / "
                f"{result.invariant.value}: z3 {result.verdict} {z3_depth} {result.reason}, "
                f"explorer {explorer} {depth}"
            )
    assert not disagreements, "\n".join(disagreements)


def test_every_counterexample_replays_through_the_model(results: list[CellResult]) -> None:
    counterexamples = [r for r in results if r.verdict == COUNTEREXAMPLE]
    assert counterexamples
    for result in counterexamples:
        assert result.trace is not None
        trace = replay(result.config, result.trace.moves)
        assert trace.depth == result.depth
        violation = check(trace.last, result.config, result.invariant)
        assert violation is not None, result.config
        assert violation == result.violation


def test_every_verdict_is_the_catalogs_expectation(results: list[CellResult]) -> None:
    wrong = [
        (
            r.config.variant.name,
            r.config.scenario.name,
            r.config.environment.name,
            r.invariant.value,
            r.verdict,
        )
        for r in results
        if (r.verdict == COUNTEREXAMPLE)
        != (
            r.config.variant.expected(r.config.scenario.name, r.config.environment, r.invariant)
            is Verdict.COUNTEREXAMPLE
        )
        or r.verdict not in (COUNTEREXAMPLE, PROVED)
    ]
    assert not wrong


def test_proofs_name_their_method_and_bound(results: list[CellResult]) -> None:
    for result in results:
        if result.verdict == PROVED:
            assert result.method == "k-induction"
            assert result.depth is not None and result.depth >= 1
            calls = len(result.config.scenario.calls)
            assert result.bound.startswith(f"items={len(result.config.scenario.items())} ")
            assert f"tasks={calls}" in result.bound
        else:
            assert result.method == "bmc"


def test_the_variants_page_is_what_verify_produces_now(cells: list[Cell]) -> None:
    """docs/variants.md is generated (`python -m proofs.pages`); a change to the
    model, the encoding or the catalog that changes a verdict or a trace must
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


def test_variants_that_are_the_same_model_share_one_check(results: list[CellResult]) -> None:
    by_key = {
        (r.config.variant.name, r.config.scenario.name, r.config.environment, r.invariant): r
        for r in results
    }
    shared = [r for r in results if r.same_as]
    # lock3 and lock5 on overlapping-push, and six more (variant, scenario) pairs
    pairs = {(r.config.variant.name, r.config.scenario.name, r.same_as) for r in shared}
    assert ("lock5", "overlapping-push", "lock3") in pairs and len(pairs) == 7
    for result in shared:
        config = result.config
        original = by_key[
            (result.same_as, config.scenario.name, config.environment, result.invariant)
        ]
        assert not original.same_as and original.cpu_seconds > 0 == result.cpu_seconds
        assert config.behaviour() == original.config.behaviour()
        assert (result.verdict, result.depth) == (original.verdict, original.depth)
        if result.trace is not None:
            assert original.trace is not None and result.trace.moves == original.trace.moves


def test_a_shared_verdict_is_the_one_its_own_check_finds() -> None:
    variants = [VARIANTS_BY_NAME["lock3"], VARIANTS_BY_NAME["lock5"]]
    scenarios = [
        SCENARIOS_BY_NAME["overlapping-push"],
        SCENARIOS_BY_NAME["spoken-during-tool-push"],
    ]
    environments = [ENVIRONMENTS_BY_NAME["base"], ENVIRONMENTS_BY_NAME["timeouts"]]

    def verdicts(share: bool) -> dict[object, object]:
        cells = run(variants, scenarios, environments, share=share)
        return {
            (v.result.config, v.result.invariant): (
                v.result.verdict,
                v.result.depth,
                None if v.result.trace is None else v.result.trace.moves,
                v.result.same_as,
            )
            for cell in cells
            for v in cell.scenarios
        }

    alone, shared = verdicts(share=False), verdicts(share=True)
    assert {key: value[:3] for key, value in alone.items()} == {
        key: value[:3] for key, value in shared.items()
    }
    assert {value[3] for value in alone.values()} == {""}
    assert sum(value[3] == "lock3" for value in shared.values()) == 8  # 2 scenarios x 2 x 2
