"""`cleanup-during-tool-push` under ack timeouts, read as one generation's two pushes.

The release's generation task pushes its cleanup and then, once its running tool
has returned, its tool outputs (1.8.9 `agent_activity.py:4758`, `:4808`). A cleanup
whose acks time out returns with its delete in flight; the tool push that follows
creates the output after the deleted message, and the server refuses it: the
output is lost (`docs/livekit.md`, "One generation's two pushes"). The scenario
read as two generations has runs the real code cannot take (`drivable.BEHIND`),
counted and left out.
"""

from __future__ import annotations

from typing import Any

import pytest

from model import Invariant
from model.scenarios import SCENARIOS

CASE = {s.name: s for s in SCENARIOS}["cleanup-during-tool-push"]


def _configs() -> tuple[Any, Any]:
    """The two readings of the case under timeouts, for 1.8.9's variant."""
    from proofs.adapters.livekit.check import release_config, set_ups, with_options

    environment = with_options(CASE.environment, ("timeouts",))
    readings = set_ups(release_config("lock5", CASE, environment))
    assert len(readings) == 2
    return readings[0], readings[1]


def test_the_row_over_the_plugin_has_the_loss_of_the_one_generation(
    release_189: Any,
) -> None:
    """The row's verdict is both readings': the model's one-generation counterexample
    is replayed over the real plugin, which loses `out1` as the model does, from the
    generation's cleanup and tool push (lines 4758 and 4808). Before, the row had
    only the two-generation reading, whose model holds (and 18 of its 27 runs left
    the model over the plugin)."""
    from proofs.adapters.livekit.check import check_scenario

    row = check_scenario(
        release_189,
        CASE,
        options=("timeouts",),
        provider="plugin",
        sweep=False,
    )
    assert row["readings"] == ["as called", "one generation"]
    assert row["model_broken"] == row["real_broken"] == [Invariant.AGREEMENT_AT_REST.value]
    assert row["model_items"] == {"agreement-at-rest": "out1"}
    assert row["real_items"] == {"agreement-at-rest": ["out1"]}
    assert row["matches"] is True
    (replay,) = [r for r in row["replays"] if r["reading"] == "one generation"]
    assert replay["divergence"] is None and replay["ran_as_model"]
    assert replay["stimuli"][4:6] == ["timeout T0", "call T1"]
    assert {4758, 4808} <= set(row["push_lines"])


def test_the_row_over_the_stand_in_sweeps_both_readings(release_189: Any) -> None:
    """Every run of both readings is driven or left out by name: the one-generation
    reading's 35 and the two-generation reading's 9 step with the model; the 18 runs
    of the latter whose later generation is called behind the earlier one's traffic
    are counted (`not_driven`), none dropped unseen."""
    from proofs.adapters.livekit.check import check_scenario
    from proofs.adapters.livekit.drivable import BEHIND

    row = check_scenario(release_189, CASE, options=("timeouts",), provider="standin")
    by_reading: dict[str, int] = {}
    for run in row["sweep"]:
        by_reading[run["reading"]] = by_reading.get(run["reading"], 0) + 1
    assert by_reading == {"as called": 9, "one generation": 35}
    assert row["stepped_with_model"] == row["sequences"] == 44
    assert row["not_driven"] == 18 and row["not_driven_why"] == {BEHIND: 18}
    assert row["matches"] is True
    assert row["real_broken"] == [Invariant.AGREEMENT_AT_REST.value]


def test_a_run_behind_the_earlier_generation_is_left_out_and_leaves_the_model(
    release_189: Any,
) -> None:
    """`undrivable` names the two-generation runs whose later call comes while the
    earlier push's delete is in flight, and only those; driving one anyway over the
    plugin leaves the model: the later generation's reply waits behind that delete
    on the socket, so its push has not started where the model's has."""
    from model import MoveKind
    from proofs.adapters.livekit.check import drivable_sequences
    from proofs.adapters.livekit.drivable import BEHIND, undrivable
    from proofs.adapters.livekit.plugin import run_plugin
    from proofs.engines.conformance.follow import sequences

    two, one = _configs()
    driven, left = drivable_sequences(two)
    assert len(driven) == 9 and left == {BEHIND: 18}
    assert drivable_sequences(one)[1] == {}
    behind = [m for m in sequences(two) if undrivable(two, m) is not None]
    for moves in behind:
        kinds = [m.kind for m in moves]
        # the earlier push timed out before the later call: its traffic can be in flight
        assert kinds.index(MoveKind.TIMEOUT) < kinds.index(MoveKind.CALL, 1)
    outcome = run_plugin(two, behind[0])
    assert outcome.divergence is not None
    assert "T1.pc: model ended, implementation idle" in outcome.divergence


def test_the_set_up_needs_the_message_read_before_the_tool_starts(
    release_189: Any,
) -> None:
    """Written one event at a time, the tool starts (its function call becomes the
    local context's last item) before the message's "added" event is read, and the
    placeholder handler adds the message locally: the set-up's check refuses that
    start, which is not the scenario's. The adapter writes them in one go."""
    from proofs.adapters.livekit.one_generation_adapters import OneGenerationPlugin
    from proofs.adapters.livekit.plugin import run_plugin
    from proofs.errors import SetupError

    _, one = _configs()

    class OneAtATime(OneGenerationPlugin):
        def _together(self, events: list[dict[str, Any]]) -> int:
            return 1

    with pytest.raises(SetupError, match="local context starts as"):
        run_plugin(one, (), build=OneAtATime)


def test_with_the_message_first_the_model_anchors_the_output_wrongly(
    release_189: Any,
) -> None:
    """A fact the model does not have: where the response's message comes before its
    function call, the real output's create names the function call, still on the
    server, and the output is kept; the model, which holds no function call, anchors
    it at the deleted message and refuses it. So the one-generation reading is
    driven with the call first, the order in which the model's anchor is the real
    one (docs/livekit.md, "One generation's two pushes")."""
    from proofs.adapters.livekit.one_generation_adapters import OneGenerationPlugin
    from proofs.adapters.livekit.plugin import run_plugin
    from proofs.engines.explore import explore

    _, one = _configs()
    (finding,) = [f for f in explore(one).findings if f.trace is not None]
    assert finding.trace is not None

    class MessageFirst(OneGenerationPlugin):
        call_first = False

    outcome = run_plugin(one, finding.trace.moves, build=MessageFirst)
    assert not outcome.broken
    assert outcome.divergence is not None and "'out1 added' (T1)" in outcome.divergence
