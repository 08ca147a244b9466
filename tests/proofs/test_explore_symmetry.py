"""Symmetry reduction keeps every verdict and every shortest depth: compared with
and without it over every catalog cell and every mix of up to three calls."""

from collections.abc import Iterable, Iterator

import pytest

import proofs.engines.symmetry as symmetry
from model import (
    ENVIRONMENTS,
    SCENARIOS,
    SITES,
    VARIANTS,
    VARIANTS_BY_NAME,
    Config,
    Environment,
    RequestSource,
    Variant,
    check,
)
from proofs.engines.compact import CompactModel, unsupported
from proofs.engines.explore import Exploration, explore
from proofs.engines.sweep import mixes, scenario, shapes
from proofs.engines.trace import replay
from proofs.errors import InternalError

MIXES = list(mixes(shapes(SITES), 3))


#: Explorations already made here, by (config, reduced); a reduced one only while
#: `symmetry.groups` is the real one (a test below swaps in a mutant).
_EXPLORED: dict[tuple[Config, bool], Exploration] = {}
_GROUPS = symmetry.groups


def _explored(config: Config, reduced: bool) -> Exploration:
    """`explore(config, symmetry=reduced)`, made once per module: the tests below ask
    for the same cells again (the mutant's baseline, the replays)."""
    key = (config, reduced)
    if reduced and symmetry.groups is not _GROUPS:
        return explore(config)
    if key not in _EXPLORED:
        _EXPLORED[key] = explore(config, symmetry=reduced)
    return _EXPLORED[key]


def disagreements(configs: Iterable[Config]) -> list[str]:
    """Cells whose verdicts or shortest depths change with symmetry reduction."""
    return list(_disagreeing(configs))


def _disagreeing(configs: Iterable[Config]) -> Iterator[str]:
    for config in configs:
        plain = _explored(config, reduced=False)
        try:
            reduced = _explored(config, reduced=True)
        except InternalError:  # a reduced trace the readable model does not confirm
            yield f"{config.variant.name}/{config.scenario.name}: trace not confirmed"
            continue
        if [(f.verdict, f.depth) for f in plain.findings] != [
            (f.verdict, f.depth) for f in reduced.findings
        ]:
            yield f"{config.variant.name}/{config.scenario.name}/{config.environment.name}"
        if reduced.states > plain.states:  # a reduction never adds states
            yield f"{config.variant.name}/{config.scenario.name}: more states reduced"


def mix_cells(variant: Variant, environment: Environment) -> list[Config]:
    return [Config(variant, scenario(mix), environment) for mix in MIXES]


def symmetric_cells(variant: Variant, environment: Environment) -> list[Config]:
    """The mixes the reduction acts on: interchangeable calls (`symmetry.groups`). On
    any other mix the reduced search is the plain one, so comparing them shows nothing."""
    return [
        config
        for config in mix_cells(variant, environment)
        if unsupported(config) is None and symmetry.groups(CompactModel(config))
    ]


def test_there_are_mixes_with_interchangeable_calls() -> None:
    assert len(MIXES) == 119
    configs = mix_cells(VARIANTS_BY_NAME["lock5"], Environment())
    assert sum(bool(symmetry.groups(CompactModel(config))) for config in configs) > 40


def test_every_catalog_cell_keeps_its_verdicts_and_depths() -> None:
    configs = [Config(v, s, e) for v in VARIANTS for s in SCENARIOS for e in ENVIRONMENTS]
    # symmetry works on the compact encoding; the readable fallback has none to compare
    assert disagreements([c for c in configs if unsupported(c) is None]) == []


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_every_mix_of_up_to_three_calls_keeps_its_verdicts_and_depths(variant: Variant) -> None:
    cells = symmetric_cells(variant, Environment())
    assert cells and disagreements(cells) == []


@pytest.mark.parametrize(
    ("variant", "environment"),
    [
        ("unlocked", Environment(stale_copies=True)),
        ("lock5", Environment(timeouts=True)),
        ("three-way", Environment(rejections=True)),
    ],
    ids=lambda x: x if isinstance(x, str) else x.name,
)
def test_the_mixes_keep_them_under_environment_options(
    variant: str, environment: Environment
) -> None:
    cells = symmetric_cells(VARIANTS_BY_NAME[variant], environment)
    assert cells and disagreements(cells) == []


def test_reduced_counterexamples_replay_through_the_readable_model() -> None:
    for config in mix_cells(VARIANTS_BY_NAME["unlocked"], Environment(stale_copies=True)):
        for found in _explored(config, reduced=True).findings:
            if found.trace is not None:
                assert check(replay(config, found.trace.moves).last, config, found.invariant)


def test_the_comparison_catches_a_reduction_that_merges_different_sites(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the mutant treats every two mirror-snapshot calls as interchangeable, whatever
    # their local-update timing: a tool output and a user turn become one orbit
    def by_shape(model: CompactModel) -> tuple[tuple[int, ...], ...]:
        snapshot = RequestSource.MIRROR_SNAPSHOT
        same = [t for t in range(model.n_tasks) if model.source[t] is snapshot]
        return (tuple(same),) if len(same) > 1 else ()

    configs = mix_cells(VARIANTS_BY_NAME["lock3"], Environment())
    assert disagreements(configs) == []
    monkeypatch.setattr(symmetry, "groups", by_shape)
    # one disagreement is the catch: the search stops at the first
    assert next(_disagreeing(configs), None) is not None


def test_the_command_line_can_turn_it_off(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from proofs.cli import main

    argv = ["explore", "--scenario", "two-replacements-during-user-turn", "--json"]
    assert main([*argv, "--variant", "lock5"]) == 0
    reduced = json.loads(capsys.readouterr().out)
    assert main([*argv, "--variant", "lock5", "--no-symmetry"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert [(r["verdict"], r["depth"]) for r in reduced] == [
        (r["verdict"], r["depth"]) for r in plain
    ]
    assert reduced[0]["states"] < plain[0]["states"]
