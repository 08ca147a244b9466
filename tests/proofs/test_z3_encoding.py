"""The z3 encoding, step by step, against the model.

- On every reachable state of the catalog cells below, each move instance that
  z3 enables is a move the model makes (and the other way round), and the state
  it leads to means the model's successor (`proofs.engines.smt.simulation`).
- On every reachable state of the whole catalog, the order-aware LCS diff of the
  model equals the membership diff the encoding computes (the abstraction
  `docs/proofs.md` describes), so the LCS exactness guard is never needed.
"""

from __future__ import annotations

import pytest

from model import (
    ENVIRONMENTS,
    ENVIRONMENTS_BY_NAME,
    SCENARIOS,
    VARIANTS,
    VARIANTS_BY_NAME,
    Config,
    MoveKind,
    Pc,
    State,
    successors,
)
from model.diff import longest_common_subsequence, mirror_diff
from proofs.engines.smt.encoding import Encoding
from proofs.engines.smt.simulation import Evaluator, disagreements, reachable
from tests.proofs.z3_scope import modelled, refused

#: Scenarios that, between them, exercise every site kind, local update and
#: environment move: a caller copy that replaces the local context, the live local
#: context, a mirror snapshot, and the model's own items.
_EVERY_MOVE = ("replacement-first", "cleanup-during-tool-push", "server-item-during-replacement")


def _catalog_cells() -> list[Config]:
    """Every variant and scenario under the scenario's own environment, and the
    environment with every option the encoding models (`z3_scope.modelled`: a
    reconnect only where it is inert) for a locked and the three-way variant."""
    cells = [Config(v, s, s.environment) for v in VARIANTS for s in SCENARIOS]
    everything = ENVIRONMENTS_BY_NAME["all"]
    for name in ("lock3", "three-way"):
        for scenario in SCENARIOS:
            if scenario.name in _EVERY_MOVE:
                cells.append(modelled(Config(VARIANTS_BY_NAME[name], scenario, everything)))
    assert not any(map(refused, cells))
    return cells


@pytest.mark.parametrize(
    "config",
    _catalog_cells(),
    ids=lambda c: f"{c.variant.name}-{c.scenario.name}-{c.environment.name}",
)
def test_every_reachable_step_of_the_model_is_a_step_of_the_encoding(config: Config) -> None:
    enc = Encoding(config, specialize=True, symmetry=False)
    problems = list(disagreements(config, enc, Evaluator(enc)))
    assert not problems, "\n".join(problems[:5])


def _diffs(config: Config) -> list[tuple[State, int, tuple[str, ...]]]:
    """(state before, task, request) for every diff a mirror-diff session makes."""
    found = []
    for state in reachable(config):
        for move, after in successors(state, config):
            if move.kind not in (MoveKind.CALL, MoveKind.WAKE) or move.task is None:
                continue
            task = after.tasks[move.task]
            if task.pc in (Pc.WAIT_ACKS, Pc.DONE) and state.tasks[move.task].pc not in (
                Pc.WAIT_ACKS,
                Pc.DONE,
            ):
                assert task.request is not None
                found.append((state, move.task, task.request))
    return found


def test_the_lcs_diff_is_the_membership_diff_wherever_the_catalog_diffs() -> None:
    checked = 0
    for variant in VARIANTS:
        if variant.session.value != "mirror-diff":
            continue
        for scenario in SCENARIOS:
            for environment in ENVIRONMENTS:
                # where the encoding runs: `all` without the reconnect it refuses
                config = modelled(Config(variant, scenario, environment))
                if config.environment != environment and config.environment in ENVIRONMENTS:
                    continue  # the reconnect column alone: base again
                for state, task, request in _diffs(config):
                    mirror = state.mirror
                    common = set(mirror) & set(request)
                    assert set(longest_common_subsequence(mirror, request)) == common
                    ops = mirror_diff(mirror, request, task)
                    deletes = {op.item for op in ops if op.kind.value == "delete"}
                    creates = {op.item for op in ops if op.kind.value == "create"}
                    assert deletes == set(mirror) - set(request)
                    assert creates == set(request) - set(mirror)
                    checked += 1
    assert checked > 1000


def test_the_encoding_is_generated_from_data_for_any_config() -> None:
    """A variant built on the fly (no lock at all on the user turn) gets an encoding
    without code of its own, and its instances name the model's moves."""
    lock3 = VARIANTS_BY_NAME["lock3"]
    mutant = type(lock3)(
        name="lock3-without-user-turn",
        summary="mutant",
        locked_sites=lock3.locked_sites - {"user-turn"},
    )
    scenario = next(s for s in SCENARIOS if s.name == "overlapping-push")
    enc = Encoding(Config(mutant, scenario, ENVIRONMENTS[0]))
    kinds = {inst.move.kind for inst in enc.instances}
    assert {MoveKind.CALL, MoveKind.WAKE, MoveKind.RESUME, MoveKind.SERVER_APPLY} <= kinds
    # the user turn (task 1) no longer waits for the activity lock
    assert not any(inst.move.task == 1 and "activity lock" in inst.name for inst in enc.instances)


def test_the_encoding_reads_no_option_the_model_calls_idle() -> None:
    """`Config.options_read` (the model's word, used by `verify` to share work and by
    `explore` for its notes) covers every option the z3 relation reads."""
    everything = ENVIRONMENTS_BY_NAME["all"]
    for variant in VARIANTS:
        for scenario in SCENARIOS:
            config = modelled(Config(variant, scenario, everything))
            assert Encoding(config).relevant_options <= config.options_read(), config
