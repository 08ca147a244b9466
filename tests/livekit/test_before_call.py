"""The model's `before-call` steps, driven in livekit 1.8.9 as what they are.

A `before-call T` step makes call T's item ahead of its call (`LivekitAdapter.born`):
a tool-output push's first tool returns while its generation waits for a second
one; an interrupted generation's tool returns before the interruption; a `say()`'s
playout starts (its message is stamped with that moment). One run of each kind
steps with the model over both providers; with `born` ignored (a mutant that makes
every item at its call) the same run leaves the model where the local context's
order shows it. A started playout holds the speech turn in the model as in the
real code (the old model, whose `before-call` held none, leaves it), and an
interrupted generation's output enters the local context when its done event has
ended it, as the model now says
(with the tool returning at the call or before, not in the set-up as it did).
"""

from __future__ import annotations

from typing import Any

import pytest

from model import Config, Move
from model.scenarios import SCENARIOS_BY_NAME, Scenario
from proofs.engines.conformance.steps import parse_move

#: One driven run per kind of `before-call`, and where a mutant without it leaves.
RUNS = {
    "tool": (
        "overlapping-push",
        "before-call T0; call T1; server-apply T1 hello; client-apply T1 hello; call T0; "
        "server-apply T0 out1; client-apply T0 out1",
        "local: model [msg0, out1, hello], implementation [msg0, hello, out1]",
    ),
    "interrupted": (
        (812, 4808),
        "before-call T1; call T0; call T1; server-apply T0 note1; client-apply T0 note1; "
        "server-apply T1 response; client-apply T1 response; server-apply T1 iout2; "
        "client-apply T1 iout2",
        "local: model [msg0, iout2, note1], implementation [msg0, note1, iout2]",
    ),
    "playout": (
        (812, 3459),
        "before-call T1; call T0; call T1; server-apply T0 note1; client-apply T0 note1; "
        "server-apply T1 note1; client-apply T1 note1; server-apply T1 spoken2; "
        "client-apply T1 spoken2",
        "local: model [msg0, spoken2, note1], implementation [msg0, note1, spoken2]",
    ),
}
_PAIRS = {
    (812, 4808): ("replacement", "interrupted-tool-outputs"),
    (812, 3459): ("replacement", "spoken-message"),
}


def _scenario(which: str | tuple[int, int]) -> Scenario:
    from proofs.adapters.livekit.pairs import pair_scenario

    if isinstance(which, str):
        return SCENARIOS_BY_NAME[which]
    first, second = _PAIRS[which]
    return pair_scenario(first, second, which)


def _config(scenario: Scenario) -> Config:
    from proofs.adapters.livekit.check import release_config

    return release_config("lock5", scenario, scenario.environment)


def _moves(text: str) -> list[Move]:
    return [parse_move(label) for label in text.split("; ")]


def _deaf(base: type[Any]) -> type[Any]:
    class Deaf(base):  # type: ignore[misc,valid-type]
        """The mutant: every item is made at its call (`before-call` does nothing)."""

        def born(self, task: int) -> None:
            return None

    return Deaf


@pytest.mark.parametrize("kind", sorted(RUNS))
def test_each_kind_of_before_call_steps_and_a_mutant_without_it_leaves(
    release_189: Any, kind: str
) -> None:
    from proofs.adapters.livekit.adapter import LivekitAdapter
    from proofs.adapters.livekit.plugin import PluginAdapter, run_plugin
    from proofs.adapters.livekit.replay import run

    which, text, left = RUNS[kind]
    config = _config(_scenario(which))
    moves = _moves(text)
    assert run(config, moves).divergence is None
    assert run_plugin(config, moves).divergence is None
    for outcome in (
        run(config, moves, build=_deaf(LivekitAdapter)),
        run_plugin(config, moves, build=_deaf(PluginAdapter)),
    ):
        assert outcome.divergence is not None and left in outcome.divergence, kind


def test_a_started_playout_holds_the_turn_in_the_model_as_in_livekit(
    release_189: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`say()`'s playout started, then the tool-output push is called. The real push
    waits for the current speech (the say's): with the old rule (a `before-call`
    holds no turn) the model pushes and the run leaves it; now the model does not
    offer the call, and calling it after the say's own call steps."""
    from model import moves as model_moves
    from proofs.adapters.livekit.replay import run
    from proofs.engines.conformance import lockstep

    config = _config(SCENARIOS_BY_NAME["spoken-during-tool-push"])
    early = _moves("before-call T1; call T0; server-apply T0 out1")
    with monkeypatch.context() as patch:
        patch.setattr(model_moves, "_started", lambda *_: False)
        patch.setattr(lockstep, "_MODEL_SIDES", {})
        old = run(config, early, drain=False).divergence
    assert old is not None and old.startswith("after call T0")
    assert "T0.pc: model wait-acks, implementation idle" in old
    monkeypatch.setattr(lockstep, "_MODEL_SIDES", {})
    now = run(config, early, drain=False).divergence
    assert now == "after call T0: the model does not allow this stimulus here"
    assert run(config, _moves("before-call T1; call T1; call T0")).divergence is None


def test_an_interrupted_output_enters_when_the_done_event_ends_its_generation(
    release_189: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every interleaving of a replacement beside interrupted tool outputs steps over
    the stand-in (3 of 12 before): the output, made before the interruption, enters
    the local context once the done event has ended the generation, by its creation
    time, so before a replacement's item made later. With the model's old rule (its
    items entered at the call) the rows stop stepping."""
    from model import local_order
    from model.sites import LocalUpdate
    from model.state import Pc
    from proofs.adapters.livekit.check import check_scenario
    from proofs.engines.conformance import lockstep

    pair = _scenario((812, 4808))

    def at_the_call(self: Any, pc: Pc) -> bool:
        if self.update is LocalUpdate.AFTER_PUSH:
            return pc in (Pc.DONE, Pc.FAILED)
        return self.update is LocalUpdate.NONE or pc not in (Pc.IDLE, Pc.COPIED)

    # the model's successors are memoised per config: each rule gets fresh memos
    with monkeypatch.context() as patch:
        patch.setattr(local_order.Plan, "entered", at_the_call)
        patch.setattr(local_order, "_PLANS", {})
        patch.setattr(lockstep, "_MODEL_SIDES", {})
        old = check_scenario(release_189, pair, sweep=True)
    assert old["stepped_with_model"] < old["sequences"]
    monkeypatch.setattr(local_order, "_PLANS", {})
    monkeypatch.setattr(lockstep, "_MODEL_SIDES", {})
    row = check_scenario(release_189, pair, sweep=True)
    assert row["matches"] is True and row["not_driven"] == 0
    assert row["stepped_with_model"] == row["sequences"] == 24


def test_an_interrupted_tool_that_returned_in_the_set_up_leaves_the_model(release_189: Any) -> None:
    """The adapter's old start (the interrupted generation's tool returned in the
    set-up, its output older than every scenario item) leaves the model once a
    replacement's item is made before the interruption; the tool returning at the
    call, as now, steps."""
    from proofs.adapters.livekit.adapter import LivekitAdapter
    from proofs.adapters.livekit.replay import run

    class AtSetUp(LivekitAdapter):
        def _prepare(self, index: int, site: str) -> None:
            super()._prepare(index, site)
            if site == "interrupted-tool-outputs":
                self._open_gate(f"call_{self.config.call(index).adds[0]}")

    config = _config(_scenario((812, 4808)))
    moves = _moves(
        "call T0; server-apply T0 note1; client-apply T0 note1; call T1; "
        "server-apply T1 response; client-apply T1 response; server-apply T1 iout2; "
        "client-apply T1 iout2"
    )
    assert run(config, moves).divergence is None
    old = run(config, moves, build=AtSetUp).divergence
    assert old is not None and old.startswith("after client-apply T1 response")
    assert "local: model [msg0, note1, iout2], implementation [msg0, iout2, note1]" in old


def _turn_cells() -> list[Config]:
    """Every variant on the catalog's scenarios and two pairs with a started speech,
    on the site records with livekit's speech turn, where the compact encoding runs."""
    from model import SCENARIOS, VARIANTS
    from model.sites import with_speech_turn
    from proofs.adapters.livekit.pairs import pair_scenario
    from proofs.engines.compact import unsupported

    scenarios = [
        *SCENARIOS,
        pair_scenario("spoken-message", "interrupted-tool-outputs", (3459, 4808)),
        pair_scenario("interrupted-tool-outputs", "interrupted-tool-outputs", (4808, 4808)),
    ]
    cells = [
        Config(variant, scenario, scenario.environment, extra_sites=with_speech_turn())
        for variant in VARIANTS
        for scenario in scenarios
    ]
    return [cell for cell in cells if unsupported(cell) is None]


def test_the_compact_encoding_holds_a_started_speech_s_turn_as_the_model_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The catalog's graph comparison runs the records without a speech turn; here
    the two graphs are compared with it, and a compact twin without the rule (no
    task's `before-call` starts a speech) differs."""
    from proofs.engines import compact
    from tests.proofs.test_explore_compact import compact_graph, readable_graph

    cells = _turn_cells()
    assert [c.scenario.name for c in cells if readable_graph(c) != compact_graph(c)] == []
    built = compact.CompactModel.__init__

    def without_rule(self: Any, config: Config) -> None:
        built(self, config)
        self.plays = tuple(False for _ in self.plays)

    monkeypatch.setattr(compact.CompactModel, "__init__", without_rule)
    differ = {c.scenario.name for c in cells if readable_graph(c) != compact_graph(c)}
    assert {"spoken-during-tool-push", "pair-3459-4808"} <= differ
