"""Case 3 (livekit/agents #6964) judged by the explorer: every cell matches its record,
the configuration before the fix loses what the report says, and each mechanism
switched back brings its failure back."""

from __future__ import annotations

import attrs
import pytest

from model import Environment, Invariant, Verdict
from model.cases import CASES_BY_NAME, Case, Fix
from model.move_table import MoveKind
from model.shapes import DuplicateRejection, UnknownAnchor
from model.state import OpKind
from proofs.engines.casebook import CaseVerdict, config_of, judge
from proofs.engines.compact import CompactModel, unsupported
from proofs.engines.explore import explore

CASE = CASES_BY_NAME["livekit-agents-6964"]
REPORT = Environment(server_items=True, stale_anchors=True)
TIMEOUTS = Environment(server_items=True, stale_anchors=True, timeouts=True)
BOTH = (Invariant.MIRROR_TRUE_AT_REST, Invariant.NO_WAIT_ON_SETTLED)


@pytest.fixture(scope="module")
def rows() -> tuple[CaseVerdict, ...]:
    return judge(CASE)


def _fix(name: str) -> Fix:
    return next(fix for fix in CASE.configurations if fix.name == name)


def _failing(fix: Fix, environment: Environment, case: Case = CASE) -> set[Invariant]:
    exploration = explore(config_of(case, fix, environment), BOTH)
    return {f.invariant for f in exploration.findings if f.verdict is Verdict.COUNTEREXAMPLE}


def test_every_cell_matches_its_record(rows: tuple[CaseVerdict, ...]) -> None:
    cells = len(CASE.configurations) * len(CASE.invariants) * len(CASE.environments)
    assert len(rows) == cells
    assert [row for row in rows if not row.matches] == []
    # the record expects failures, and the fix closes them all
    assert any(row.verdict is Verdict.COUNTEREXAMPLE for row in rows if row.fix == "before")
    assert all(row.verdict is Verdict.HOLDS for row in rows if row.fix == "pr-6964")


def test_before_loses_what_the_report_says(rows: tuple[CaseVerdict, ...]) -> None:
    def cell(invariant: Invariant) -> CaseVerdict:
        return next(
            row
            for row in rows
            if row.fix == "before" and row.invariant is invariant and row.environment == REPORT
        )

    dropped = cell(Invariant.MIRROR_TRUE_AT_REST)
    assert dropped.violation is not None and dropped.trace is not None
    assert dropped.violation.item == "asst1"
    assert "the server holds it and the mirror does not" in dropped.violation.reason
    moves = [step.move for step in dropped.trace.steps]
    announce = next(m for m in moves if m.kind is MoveKind.MODEL_ANCHORS_ON_DELETED)
    assert announce.item == "asst1"
    stall = cell(Invariant.NO_WAIT_ON_SETTLED)
    assert stall.violation is not None and stall.trace is not None
    # the second replacement re-created asst1; the duplicate refusal reached it, and it waits
    assert (stall.violation.item, stall.violation.task) == ("asst1", 1)
    last = stall.trace.last
    assert (OpKind.CREATE, "asst1") in last.tasks[1].pending
    assert "asst1" in last.server and "asst1" not in last.mirror


def test_each_mechanism_switched_back_brings_its_failure_back() -> None:
    fixed = _fix("pr-6964")
    assert _failing(fixed, REPORT) == set()
    dropped = attrs.evolve(
        fixed, shape=attrs.evolve(fixed.shape, unknown_anchor=UnknownAnchor.DROPPED)
    )
    assert _failing(dropped, REPORT) == {Invariant.MIRROR_TRUE_AT_REST}
    left = attrs.evolve(
        dropped,
        shape=attrs.evolve(dropped.shape, duplicate_rejection=DuplicateRejection.LEFT_WAITING),
    )
    assert _failing(left, REPORT) == set(BOTH)
    # and without the stale anchor, nothing is lost at all
    assert _failing(left, Environment(server_items=True)) == set()


def test_the_tail_alone_closes_the_stall_here() -> None:
    """With the tail placement, no push re-creates an item the server holds in this
    scenario, so leaving a duplicate refusal waiting costs nothing, even under timeouts."""
    fixed = _fix("pr-6964")
    tail_only = attrs.evolve(
        fixed,
        shape=attrs.evolve(fixed.shape, duplicate_rejection=DuplicateRejection.LEFT_WAITING),
    )
    assert _failing(tail_only, TIMEOUTS) == set()


def test_the_compact_encoding_keeps_the_stall_bit() -> None:
    """Invariant 6 on the fast path: a readable state with a stall encodes to a compact
    state the compact check flags; the shapes that can stall run on the readable model."""
    before = _fix("before")
    assert unsupported(config_of(CASE, before, REPORT)) is not None
    fixed_config = config_of(CASE, _fix("pr-6964"), REPORT)
    assert unsupported(fixed_config) is None
    stall = explore(config_of(CASE, before, REPORT), (Invariant.NO_WAIT_ON_SETTLED,))
    trace = stall.finding(Invariant.NO_WAIT_ON_SETTLED).trace
    assert trace is not None
    model = CompactModel(fixed_config)
    assert model.waited_on_settled(model.encode(trace.last))
    assert not model.waited_on_settled(model.encode(trace.steps[-2].state))


def test_the_z3_encoding_refuses_invariant_6_and_the_shapes_that_drop() -> None:
    from proofs.engines.smt.encoding import Encoding
    from proofs.errors import UnsupportedConfig

    with pytest.raises(UnsupportedConfig, match="session shapes"):
        Encoding(config_of(CASE, _fix("before"), REPORT))
    fixed = Encoding(config_of(CASE, _fix("pr-6964"), REPORT))  # the option is inert there
    with pytest.raises(UnsupportedConfig, match="no-wait-on-settled"):
        fixed.bad(fixed.state("@0"), Invariant.NO_WAIT_ON_SETTLED)


def test_a_stale_anchor_changes_nothing_where_the_item_goes_to_the_tail(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Why `stale-anchors` is inert for the tail placement (docs/model.md): with the
    move forced on for the fixed configuration, every state at rest has the mirror
    equal to the server conversation in order, and every verdict is as without it."""
    from model import SessionShape, initial_state, successors
    from proofs.engines.explore_readable import explore_readable

    config = config_of(CASE, _fix("pr-6964"), TIMEOUTS)
    assert "stale-anchors" in config.inert_options()
    inert = {f.invariant: f.verdict for f in explore_readable(config, tuple(Invariant)).findings}
    original = SessionShape.inert_options

    def forced(shape: SessionShape) -> tuple[tuple[str, str], ...]:
        return tuple(row for row in original(shape) if row[0] != "stale-anchors")

    monkeypatch.setattr(SessionShape, "inert_options", forced)
    assert config.stale_anchors()
    start = initial_state(config)
    seen, todo, announced = {start}, [start], 0
    while todo:
        state = todo.pop()
        if state.at_rest():
            assert state.mirror == state.server
        for move, successor in successors(state, config):
            announced += move.kind is MoveKind.MODEL_ANCHORS_ON_DELETED
            if successor not in seen:
                seen.add(successor)
                todo.append(successor)
    assert announced  # the forced move did happen
    forced_verdicts = explore_readable(config, tuple(Invariant)).findings
    assert {f.invariant: f.verdict for f in forced_verdicts} == inert
