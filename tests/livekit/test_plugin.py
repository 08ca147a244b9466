"""The released livekit-agents over the real OpenAI plugin and the gated socket (1.8.9)."""

from __future__ import annotations

from typing import Any

import pytest

from model import Config, MoveKind
from model.scenarios import SCENARIOS_BY_NAME
from model.variants import VARIANTS_BY_NAME


@pytest.fixture(scope="module")
def plugin(livekit_version: str) -> Any:
    if livekit_version != "1.8.9":
        pytest.skip("this module checks the installed 1.8.9; 1.8.8 runs in test_plugin_188")
    from proofs.adapters.livekit import plugin

    return plugin


def _config(scenario: str, variant: str = "lock5", *options: str) -> Config:
    from proofs.adapters.livekit.check import with_options

    found = SCENARIOS_BY_NAME[scenario]
    return Config(VARIANTS_BY_NAME[variant], found, with_options(found.environment, options))


def _counterexample(config: Config) -> list[Any]:
    from proofs.engines.explore import explore

    for finding in explore(config).findings:
        if finding.trace is not None:
            return list(finding.trace.moves)
    raise AssertionError("the model finds no counterexample here")


def _unlocked(plugin: Any) -> type[Any]:
    """A mutant: 1.8.9 with its activity lock taken away (as 1.8.8 has none)."""

    class NoLock:
        def locked(self) -> bool:
            return False

        async def __aenter__(self) -> None:
            return None

        async def __aexit__(self, *exc: object) -> None:
            return None

    class Unlocked(plugin.PluginAdapter):  # type: ignore[misc, name-defined]
        def _set_up(self) -> None:
            super()._set_up()
            self.activity._rt_chat_ctx_lock = NoLock()

    return Unlocked


def test_the_seed_interleaving_keeps_the_tool_output_and_the_mutant_loses_it(plugin: Any) -> None:
    seed = _counterexample(_config("overlapping-push", "unlocked"))
    config = _config("overlapping-push")
    kept = plugin.run_plugin(config, seed)
    assert not kept.broken and not kept.lost and not kept.errors
    assert kept.push_lines == {0: 4922, 1: 4232}
    lost = plugin.run_plugin(config, seed, build=_unlocked(plugin))
    assert lost.lost == ("out1",)
    assert {i.value for i in lost.broken} == {"no-unintended-delete", "agreement-at-rest"}


def test_say_during_a_tool_push_loses_what_the_model_says(plugin: Any) -> None:
    from proofs.adapters.livekit.check import check_scenario
    from proofs.adapters.livekit.releases import RELEASES_BY_VERSION

    scenario = SCENARIOS_BY_NAME["spoken-during-tool-push"]
    row = check_scenario(RELEASES_BY_VERSION["1.8.9"], scenario, sweep=False, provider="plugin")
    assert row["matches"] is True
    assert (
        row["real_broken"] == row["model_broken"] == ["agreement-at-rest", "no-unintended-delete"]
    )
    assert row["model_items"]["no-unintended-delete"] in row["real_items"]["no-unintended-delete"]
    # the second tool's output of the early tool push is lost with its own output
    assert not row["errors"] and set(row["background_losses"]) <= {"later_out1"}


def test_an_ack_timeout_is_the_push_own_timer_and_steps_with_the_model(plugin: Any) -> None:
    from proofs.engines.conformance.follow import sequences

    config = _config("overlapping-push", "lock5", "timeouts")
    with_timeout = [m for m in sequences(config) if any(x.kind is MoveKind.TIMEOUT for x in m)]
    outcome = plugin.run_plugin(config, with_timeout[0])
    assert outcome.divergence is None, outcome.divergence
    assert any(label.startswith("timeout") for label in outcome.stimuli)


def test_hypothesis_agrees_and_a_wrong_model_is_caught_with_a_replay(plugin: Any) -> None:
    from proofs.adapters.livekit.check import release_config
    from proofs.adapters.livekit.explore_plugin import hypothesis_check, replay

    # the release's model (with the speech turn), as `ackguard livekit --hypothesis`
    # runs it: the draws include `before-call` steps, a playout started ahead of its
    # push holding the turn, which the catalog's turnless records do not model
    spoken = SCENARIOS_BY_NAME["spoken-during-tool-push"]
    agreed = hypothesis_check(release_config("lock5", spoken, spoken.environment), examples=4)
    assert agreed["agrees"] and agreed["runs"] >= 4
    wrong = _config("overlapping-push", "unlocked")  # 1.8.9 is lock5, not unlocked
    caught = hypothesis_check(wrong, examples=8)
    assert not caught["agrees"] and caught["divergence"]
    assert len(caught["replay"].split(";")) <= 3  # shrunk: the lock shows at the second call
    again = replay(wrong, caught["replay"])
    assert again["divergence"] == caught["divergence"]


def test_the_command_line_runs_the_plugin(plugin: Any, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from proofs.cli import main

    argv = ["livekit", "--release", "1.8.9", "--scenario", "overlapping-push", "--no-sweep"]
    assert main([*argv, "--provider", "plugin", "--pairs", "no", "--json"]) == 0
    (release,) = json.loads(capsys.readouterr().out)["releases"]
    assert release["provider"] == "plugin" and release["pairs"] == []
    (row,) = release["scenarios"]
    assert row["matches"] is True and row["expectation"] == "explorer"
