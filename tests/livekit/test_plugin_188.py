"""livekit-agents 1.8.8 with its own OpenAI plugin, over the gated socket, in a subprocess."""

from __future__ import annotations

from typing import Any

import pytest

from tests.livekit.conftest import _installed, _unavailable

#: The first push's create goes out before the second reply's `response.create`.
FIRST_PUSH_FIRST = ["conversation.item.create", "response.create"]

INV1 = "no-unintended-delete"
INV2 = "agreement-at-rest"


@pytest.fixture(scope="module")
def run() -> dict[str, Any]:
    """One subprocess against 1.8.8 for every test here (`_run`, below)."""
    import json

    from proofs.adapters.livekit.releases import ensure_release, installed_version, run_module

    _installed()
    target = None if installed_version() == "1.8.8" else ensure_release("1.8.8")[0]
    result = run_module(target, ["tests.livekit.test_plugin_188"])
    if result.returncode != 0:
        _unavailable(f"the 1.8.8 run failed: {result.stderr.strip()[-2000:]}")
    data: dict[str, Any] = json.loads(result.stdout)
    return data


@pytest.fixture(scope="module")
def report(run: dict[str, Any]) -> dict[str, Any]:
    """`ackguard livekit --provider plugin --no-sweep --pairs no` for two catalog rows."""
    release: dict[str, Any] = run["report"]
    assert release["release"] == "1.8.8"
    return release


@pytest.fixture(scope="module")
def pairs(run: dict[str, Any]) -> dict[str, Any]:
    rows: dict[str, Any] = run["pairs"]
    return rows


def test_the_plugin_of_1_8_8_loses_what_the_model_says(report: dict[str, Any]) -> None:
    assert report["provider"] == "plugin"
    rows = {row["scenario"]: row for row in report["scenarios"]}
    seed = rows["overlapping-push"]
    assert seed["matches"] is True
    assert seed["lost"] == ["out1"]
    assert seed["model_items"]["no-unintended-delete"] == "out1"
    assert rows["replacement-first"]["lost"] == ["note1"]
    assert rows["replacement-first"]["matches"] is True
    assert report["as_expected"]


# -- the cancel and its done on the one socket (1.8.8's two pairs) ---------------------

#: The two audited pairs of 1.8.8 that did not match while the release model ended an
#: interrupted generation at once: (first site, second site, push lines).
PAIRS = {
    "pair-797-4740": ("replacement", "interrupted-tool-outputs", (797, 4740)),
    "pair-4740-4740": ("interrupted-tool-outputs", "interrupted-tool-outputs", (4740, 4740)),
    "pair-4691-4691": ("cleanup", "cleanup", (4691, 4691)),
}
#: What the subprocess runs: (key, provider, pair, sweep, mutants). A pair whose model
#: holds is swept (every interleaving the model allows); a pair whose model breaks is
#: judged on the model's counterexamples replayed. Mutants: `at-once`, the release
#: model with the old value, which ends the interrupted generation at once;
#: `not-behind`, the pair without `Call.behind_earlier_push` (as before it), whose
#: model calls the second generation while the first push's traffic is in flight;
#: `drive-all`, every run driven, those `drivable.undrivable` names too.
RUNS: tuple[tuple[str, str, str, bool, tuple[str, ...]], ...] = (
    ("plugin-4740", "plugin", "pair-4740-4740", True, ()),
    ("plugin-797", "plugin", "pair-797-4740", False, ()),
    ("standin-4740", "standin", "pair-4740-4740", True, ()),
    ("standin-797", "standin", "pair-797-4740", False, ()),
    ("mutant-4740", "plugin", "pair-4740-4740", False, ("at-once", "not-behind", "drive-all")),
    ("not-behind-4740", "plugin", "pair-4740-4740", True, ("not-behind", "drive-all")),
    ("not-behind-named", "plugin", "pair-4740-4740", True, ("not-behind",)),
    ("plugin-4691", "plugin", "pair-4691-4691", True, ()),
)
_KEPT = (
    "matches",
    "same_broken",
    "calls_ran_as_model",
    "model_broken",
    "real_broken",
    "lost",
    "same_items",
    "sequences",
    "not_driven",
)


def _run() -> dict[str, Any]:
    """What the subprocess prints: the two catalog rows as the command reports them,
    and `RUNS` on the installed release."""
    from attrs import evolve

    from model import SCENARIOS_BY_NAME
    from model.shapes import InterruptionEnd
    from proofs.adapters.livekit import check
    from proofs.adapters.livekit.pairs import pair_scenario
    from proofs.adapters.livekit.releases import RELEASES_BY_VERSION, installed_version

    release = RELEASES_BY_VERSION[str(installed_version())]
    report = check.check_release(
        [SCENARIOS_BY_NAME[name] for name in ("overlapping-push", "replacement-first")],
        sweep=False,
        provider="plugin",
        pairs=False,
    )
    released = check.release_shape
    named = check.undrivable
    rows: dict[str, Any] = {}
    for key, provider, name, sweep, mutants in RUNS:
        first, second, lines = PAIRS[name]
        if "at-once" in mutants:
            check.release_shape = lambda variant: evolve(  # type: ignore[assignment]
                released(variant), interruption_end=InterruptionEnd.AT_ONCE
            )
        pair = pair_scenario(first, second, lines)
        if "not-behind" in mutants:
            calls = tuple(evolve(call, behind_earlier_push=False) for call in pair.calls)
            pair = evolve(pair, calls=calls)
        if "drive-all" in mutants:
            check.undrivable = lambda config, moves: None
        try:
            row = check.check_scenario(release, pair, sweep=sweep, provider=provider)
        finally:
            check.release_shape = released  # type: ignore[assignment]
            check.undrivable = named
        rows[key] = {field: row[field] for field in _KEPT} | {
            "push_lines": row["push_lines"],
            "stepped": row["stepped_with_model"],
            "errors": row["errors"],
        }
    assert release.version == "1.8.8", release.version
    return {"report": report, "pairs": rows, "order": second_reply_order()}


def second_reply_order() -> list[str]:
    """The client events on their way to the server once the first of two interrupted
    generations has read its `response.done`, with the second reply queued before
    the first was interrupted (so the scheduler authorizes it when the first is
    marked done) and only the current speech interrupted, as a user's speech does."""
    from model import Move, MoveKind
    from proofs.adapters.livekit.check import release_config
    from proofs.adapters.livekit.pairs import pair_scenario
    from proofs.adapters.livekit.plugin import PluginAdapter, PluginFollow
    from proofs.adapters.livekit.releases import RELEASES_BY_VERSION, installed_version

    class Queued(PluginAdapter):
        def _set_up(self) -> None:
            super()._set_up()
            self.deferred = frozenset()
            for index in (0, 1):
                with self.loop.running():
                    self._prepare(index, "interrupted-tool-outputs")
                    # its tool has returned: the generation is under way
                    self._open_gate(f"call_{self.config.call(index).adds[0]}")
                self.loop.run_until_blocked()
                while self._release_background():
                    self.loop.run_until_blocked()
            assert self.activity._current_speech is self.handles[0]

        def call(self, task: int) -> None:
            assert task == 0
            self.called.add(task)
            self.rt.interrupting = task
            self.activity._current_speech.interrupt()
            self.rt.interrupt()

    release = RELEASES_BY_VERSION[str(installed_version())]
    scenario = pair_scenario("interrupted-tool-outputs", "interrupted-tool-outputs", (1, 1))
    session = PluginFollow(release_config(release.variant, scenario, scenario.environment), Queued)
    try:
        for kind in (MoveKind.CALL, MoveKind.SERVER_APPLY, MoveKind.CLIENT_APPLY):
            session.give(Move(kind, 0))
        return [str(event.get("type")) for event in session.adapter.conn.to_server]
    finally:
        session.close()


def test_two_interrupted_tool_outputs_keep_both_over_the_plugin(pairs: dict[str, Any]) -> None:
    # the second generation is a reply sent behind the first push on the socket, so
    # it is interrupted only once that push's traffic is done (`behind_earlier_push`):
    # both break nothing, and both calls push in every interleaving, stepping with
    # the model (docs/livekit.md, "Calls that never ran")
    row = pairs["plugin-4740"]
    assert row["same_broken"] is True and row["errors"] == []
    assert row["model_broken"] == [] and row["real_broken"] == [] and row["lost"] == []
    assert row["calls_ran_as_model"] is True and row["matches"] is True
    # 2 orders with each tool returning at its call, 2 with the first one's earlier
    assert row["sequences"] == row["stepped"] == 4 and row["push_lines"] == [4740]


def test_a_model_that_calls_the_second_generation_early_does_not_match(
    pairs: dict[str, Any],
) -> None:
    # as before `behind_earlier_push`: in 16 of the 20 interleavings (8 of 10 with the
    # tools returning at their calls) the model's second call pushes while the real
    # second reply, behind the first push, never runs
    row = pairs["not-behind-4740"]
    assert row["same_broken"] is True and row["calls_ran_as_model"] is False
    assert row["matches"] is False
    assert row["sequences"] == 20 and row["stepped"] == 4


def test_the_runs_behind_the_first_push_are_named_and_left_out(pairs: dict[str, Any]) -> None:
    # the same model, with the harness's own rule (`drivable.BEHIND`): the 16 runs
    # whose second call comes while the first push's traffic is in flight are
    # counted, not run, and the 4 the real code can take match
    row = pairs["not-behind-named"]
    assert row["not_driven"] == 16 and row["sequences"] == row["stepped"] == 4
    assert row["matches"] is True


def test_two_cleanups_are_driven_over_the_plugin(pairs: dict[str, Any]) -> None:
    # refused before: the second cleanup's generation now runs at its call and makes
    # its message then (`Call.made_at_call`), as the speech scheduler runs them
    row = pairs["plugin-4691"]
    assert row["matches"] is True and row["errors"] == [] and row["real_broken"] == []
    assert row["sequences"] == row["stepped"] == 1 and row["push_lines"] == [4691]


def test_a_replacement_beside_interrupted_tool_outputs_loses_note1_over_the_plugin(
    pairs: dict[str, Any],
) -> None:
    # the model still loses the replacement's item where it is called after the
    # interruption, and the real code loses the same item on that trace
    row = pairs["plugin-797"]
    assert row["matches"] is True and row["same_items"] is True and row["errors"] == []
    assert row["model_broken"] == [INV2, INV1] and row["lost"] == ["note1"]
    assert row["push_lines"] == [797, 4740]


def test_the_stand_in_agrees_on_both_pairs(pairs: dict[str, Any]) -> None:
    assert pairs["standin-4740"]["matches"] is True
    assert pairs["standin-4740"]["real_broken"] == []
    # the second generation set up at its call, as over the plugin: both orders step
    assert pairs["standin-4740"]["stepped"] == pairs["standin-4740"]["sequences"] == 4
    assert pairs["standin-797"]["matches"] is True
    assert pairs["standin-797"]["lost"] == ["note1"]


def test_a_model_that_ends_the_generation_at_once_does_not_match(pairs: dict[str, Any]) -> None:
    # the mutant loses an output the real code keeps: its shortest trace interrupts
    # the second generation before the first push's acks are in (without
    # `behind_earlier_push`, which rules that order out by itself)
    row = pairs["mutant-4740"]
    assert row["matches"] is False
    assert row["model_broken"] == [INV2, INV1]
    assert row["real_broken"] == [] and row["lost"] == []


def test_the_second_reply_follows_the_first_push_on_the_socket(run: dict[str, Any]) -> None:
    # so its generation, its tool call and its cancel come behind the push's ack
    assert run["order"] == FIRST_PUSH_FIRST


if __name__ == "__main__":
    import json
    import sys

    # `--order`: only `second_reply_order` on the installed release (1.8.9 by hand:
    # the subprocess above is 1.8.8's, and a plugin run in-process costs seconds)
    json.dump(second_reply_order() if "--order" in sys.argv else _run(), sys.stdout)
