"""The local context's order against the mirror's: where "the request agrees with the
mirror in order" fails, the explorer breaks invariant 1, and the default mixes hide it.

A replacement's request is a copy of the local context, in livekit's creation order
(`model/local_order.py`). Two tool pushes whose outputs were made in one order and pushed
in the other leave the mirror and the local context in different orders; a replacement
that keeps both outputs then diffs them out of order, and the order-aware diff deletes and
re-creates an acknowledged output. `data.mixes` makes each replacement after another call
drop that call's item, so its sweep never has a replacement diff both outputs;
`mixes(lean=True)` has the replacement drop the start item only.
"""

from __future__ import annotations

import pytest

from model import (
    ENVIRONMENTS_BY_NAME,
    SITES_BY_NAME,
    VARIANTS_BY_NAME,
    Config,
    Invariant,
    Pc,
    RequestSource,
    Scenario,
    Verdict,
)
from proofs.engines.explore import explore
from proofs.engines.fol import (
    Cell,
    FiniteSorts,
    Problem,
    Structure,
    mixes,
    order,
    order_z3,
    structure,
)
from proofs.engines.fol.data import config_of
from proofs.engines.fol.proving import shortest_counterexample
from proofs.engines.fol.simulate import joining
from proofs.engines.trace import Trace

BASE = ENVIRONMENTS_BY_NAME["base"]
SITES = ("tool-outputs", "interrupted-tool-outputs", "replacement")


def _cell(variant: str, names: tuple[str, ...]) -> Cell:
    return Cell(VARIANTS_BY_NAME[variant], tuple(SITES_BY_NAME[n] for n in names), BASE)


def _failing(cell: Cell, lean: bool) -> dict[str, int]:
    """The mixes of exactly three calls that break invariant 1, with their shortest depth."""
    out: dict[str, int] = {}
    for scenario in mixes(cell.sites, 3, BASE, lean=lean):
        if len(scenario.calls) != 3:
            continue
        finding = explore(config_of(cell, scenario), (Invariant.NO_UNINTENDED_DELETE,)).finding(
            Invariant.NO_UNINTENDED_DELETE
        )
        if finding.verdict is Verdict.COUNTEREXAMPLE and finding.trace is not None:
            out[scenario.name] = finding.trace.depth
    return out


def _lean_counterexample(cell: Cell) -> tuple[Scenario, Config, Trace]:
    """The lean mix of two tool pushes and a replacement, on `cell`, and the explorer's
    shortest run to its unintended delete."""
    scenario = next(
        s
        for s in mixes(cell.sites, 3, BASE, lean=True)
        if s.name == "mix:tool-outputs+tool-outputs+replacement:lean"
    )
    config = config_of(cell, scenario)
    finding = explore(config, (Invariant.NO_UNINTENDED_DELETE,)).finding(
        Invariant.NO_UNINTENDED_DELETE
    )
    assert finding.trace is not None
    return scenario, config, finding.trace


def test_a_replacement_after_two_tool_pushes_deletes_an_output() -> None:
    """lock5 {tool-outputs, interrupted-tool-outputs, replacement}: every default mix of
    three calls holds (what the sweep saw), and the lean ones fail, 10 moves."""
    cell = _cell("lock5", SITES)
    assert _failing(cell, lean=False) == {}
    found = _failing(cell, lean=True)
    assert found["mix:tool-outputs+tool-outputs+replacement:lean"] == 10
    assert found["mix:tool-outputs+interrupted-tool-outputs+replacement:lean"] == 10
    # lock5-hoisted, with or without the user turn, the same
    hoisted = _failing(_cell("lock5-hoisted", ("user-turn", *SITES)), lean=True)
    assert hoisted["mix:tool-outputs+tool-outputs+replacement:lean"] == 10


def test_the_engines_shortest_counterexample_searches_the_lean_mixes_too() -> None:
    """`shortest_counterexample` (the trace `prove` names when a sample breaks safety)
    finds the 10-move loss on these cells only in the lean mixes; without them it found
    none in three calls."""
    for variant, names in (("lock5", SITES), ("lock5-hoisted", ("user-turn", *SITES))):
        found = shortest_counterexample(_cell(variant, names), 3)
        assert found is not None and found.scenario.endswith(":lean"), variant
        assert found.trace.depth == 10


def test_at_the_deleting_diff_the_request_disagrees_with_the_mirror_in_order() -> None:
    """The counterexample breaks the lemma, not the membership diff: the replacement's
    request holds both outputs in the local context's order, the mirror in push order."""
    cell = _cell("lock5", SITES)
    _, config, trace = _lean_counterexample(cell)
    before = trace.steps[-2].state
    last = trace.steps[-1]
    task = last.move.task
    assert task is not None and config.site(task).request is RequestSource.CALLER_COPY
    assert before.tasks[task].pc is Pc.IDLE and last.state.tasks[task].pc is Pc.WAIT_ACKS
    request = last.state.tasks[task].request or ()
    common = [i for i in request if i in before.mirror]
    assert common == ["new0", "new1"]
    assert [i for i in before.mirror if i in common] == ["new1", "new0"]
    # and the diff deletes an acknowledged output it does not mean to remove
    assert (task, "new1", True) in last.state.deletes_sent
    assert "new1" not in config.call(task).drops


# -- the order relations in the first-order system -------------------------------------


@pytest.fixture(scope="module")
def lean_run() -> tuple[Problem, list[Structure], list[str]]:
    """The lean counterexample's states as relations of the ordered cell, and its moves."""
    cell = Cell(
        VARIANTS_BY_NAME["lock5"],
        (SITES_BY_NAME["tool-outputs"], SITES_BY_NAME["replacement"]),
        BASE,
        ordered=True,
    )
    scenario, config, trace = _lean_counterexample(cell)
    states = [
        order.order_structure(structure(state, config, cell), state, config, born)
        for state, born in order.along(config, trace)
    ]
    moves = [f"{step.move.kind.value} {step.move.task} {step.move.item}" for step in trace.steps]
    problem = Problem(cell, FiniteSorts(len(scenario.calls), len(scenario.items())))
    return problem, states, moves


def test_the_ordered_system_puts_an_added_item_after_its_anchor(
    lean_run: tuple[Problem, list[Structure], list[str]],
) -> None:
    """The move that puts the first tool output behind the second in the mirror is a step
    of the ordered first-order system (after its anchor, the mirror's last item), and the
    mirror is out of creation order after it; the tail and the head do not join it."""
    problem, states, moves = lean_run
    n = moves.index("client-apply 0 new0")
    after, tail, head = (f"client applies an added event ({p})" for p in order_z3.PLACES)
    found = joining(problem, states[n], states[n + 1], among=(after, tail, head))
    assert found == (after,)
    assert states[n].satisfies(order.MIRROR_BY_CREATION_SETTLED)
    assert not states[n + 1].satisfies(order.MIRROR_BY_CREATION_SETTLED)
    # the first output's before-call step is the ordered system's make action
    assert joining(problem, states[0], states[1], among=("make tool-outputs's items",))


def test_the_ordered_system_has_no_step_for_the_out_of_order_diff(
    lean_run: tuple[Problem, list[Structure], list[str]],
) -> None:
    """The replacement's order-aware diff deletes and re-creates an acknowledged output;
    the first-order system's diff by membership has no such step. That is the assumption
    failing, seen one move at a time: where the request disagrees with the mirror in
    order, the first-order system is not the model."""
    problem, states, moves = lean_run
    assert moves[-1] == "call 2 None"
    assert joining(problem, states[-2], states[-1], among=("call replacement",)) == ()
