"""Every pair of the push places the audit finds becomes a scenario, run for real."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="module")
def paths(livekit_version: str) -> list[dict[str, Any]]:
    """Each site alone over the stand-in: the line of the installed release it pushes from."""
    from proofs.adapters.livekit.check import PATHS, check_path
    from proofs.adapters.livekit.releases import RELEASES_BY_VERSION

    release = RELEASES_BY_VERSION[livekit_version]
    return [check_path(release, scenario) for scenario in PATHS]


def test_every_pair_of_audited_places_is_a_scenario(
    livekit_version: str, paths: list[dict[str, Any]]
) -> None:
    from proofs.adapters.livekit.pairs import audited_pairs, push_places
    from proofs.adapters.livekit.releases import RELEASES_BY_VERSION

    places = sorted({place.line for place in push_places()})
    driven = sorted({line for path in paths for line in path["push_lines"]})
    assert driven == places  # every audited place is some site's push, alone
    scenarios = audited_pairs(RELEASES_BY_VERSION[livekit_version], paths)
    n = len(places)
    assert len(scenarios) == n * (n + 1) // 2
    named = {tuple(int(x) for x in s.name.split("-")[1:]) for s in scenarios}
    assert named == {(a, b) for a in places for b in places if a <= b}


def test_an_audited_pair_over_the_plugin_loses_what_the_model_says(
    release_189: Any, paths: list[dict[str, Any]]
) -> None:
    from proofs.adapters.livekit.check import check_scenario
    from proofs.adapters.livekit.pairs import audited_pairs

    (pair,) = [s for s in audited_pairs(release_189, paths) if s.name == "pair-812-3459"]
    row = check_scenario(release_189, pair, sweep=False, provider="plugin")
    assert row["matches"] is True and row["lost"] == ["note1"]  # say() beside a replacement


@pytest.mark.parametrize(
    ("variant", "lines"), [("lock5", (4758, 4922)), ("unlocked", (4691, 4853))]
)
def test_a_cleanup_beside_a_tool_push_starts_with_the_placeholder(
    variant: str, lines: tuple[int, int]
) -> None:
    """The start the release reaches: the tool's reply runs first, so the never-played
    message follows its function call and the activity appends a placeholder of it.
    The cleanup pushes the live local context, placeholder included, so the release
    model leaves the message on the server (invariant 5 on `asst1`, the cleanup alone,
    once its interruption's cancel is answered);
    with the catalog's cleanup record, which removes its drops locally first, the
    cleanup alone deletes it, which the real code does not (docs/livekit.md)."""
    import attrs

    from model import Invariant
    from model.sites import SITES_BY_NAME
    from proofs.adapters.livekit.check import release_config
    from proofs.adapters.livekit.pairs import pair_scenario
    from proofs.engines.explore import explore

    pair = pair_scenario("cleanup", "tool-outputs", lines)
    assert pair.server == pair.initial_local == ("msg0", "asst1")
    config = release_config(variant, pair, pair.environment)
    finding = explore(config).finding(Invariant.REMOVED_AT_REST)
    assert finding.trace is not None and finding.violation is not None
    assert finding.violation.item == "asst1"
    # the cleanup alone: its interruption's cancel, the done event, then its push
    alone = ["call T0", "server-apply T0 response", "client-apply T0 response", "wake T0"]
    assert [m.label() for m in finding.trace.moves] == alone
    catalog = SITES_BY_NAME["cleanup"]
    sites = tuple(catalog if s.name == "cleanup" else s for s in config.extra_sites)
    removing = attrs.evolve(config, extra_sites=sites)
    # the catalog's record: the cleanup alone deletes the message (under `unlocked`
    # the tool push's snapshot may still bring it back, a longer trace)
    trace = explore(removing).finding(Invariant.REMOVED_AT_REST).trace
    assert trace is None or [m.label() for m in trace.moves] != alone
    # every other pair with a cleanup starts without its message locally
    other = pair_scenario("cleanup", "user-turn", (lines[0], 1))
    assert other.initial_local == ("msg0",)


@pytest.mark.parametrize("provider", ["standin", "plugin"])
def test_a_cleanup_beside_a_tool_push_is_driven_and_matches(
    release_189: Any, provider: str
) -> None:
    """Refused before: the adapter now starts it as the release does (over the plugin
    the message is made by the cleanup's generation and placed by the handler), and
    the real code keeps `asst1` on the server as the release model says."""
    from proofs.adapters.livekit.check import check_scenario
    from proofs.adapters.livekit.pairs import pair_scenario

    pair = pair_scenario("cleanup", "tool-outputs", (4758, 4922))
    row = check_scenario(release_189, pair, provider=provider)
    assert row.get("unsupported") is None and row["matches"] is True
    assert row["real_items"] == {"removed-at-rest": ["asst1"]}
    assert row["stepped_with_model"] == row["sequences"] >= 1


def test_a_second_interrupted_generation_waits_behind_the_first_push() -> None:
    """The model: with `behind_earlier_push` the second interrupted call is not made
    while the first push's create (or its ack) is in flight; without it, it is."""
    import attrs

    from model import Move, MoveKind, Pc, initial_state, successors
    from proofs.adapters.livekit.check import release_config
    from proofs.adapters.livekit.pairs import pair_scenario

    pair = pair_scenario("interrupted-tool-outputs", "interrupted-tool-outputs", (1, 1))
    assert all(call.behind_earlier_push for call in pair.calls)
    plain = attrs.evolve(
        pair, calls=tuple(attrs.evolve(c, behind_earlier_push=False) for c in pair.calls)
    )

    def second_call_while_pushing(scenario: Any) -> bool:
        config = release_config("lock5", scenario, scenario.environment)
        state = initial_state(config)
        for label in ("call T0", "server-apply T0 response", "client-apply T0 response", "wake T0"):
            (state,) = [s for m, s in successors(state, config) if m.label() == label]
        assert state.tasks[0].pc is Pc.WAIT_ACKS and state.to_server
        return Move(MoveKind.CALL, 1) in {m for m, _ in successors(state, config)}

    assert not second_call_while_pushing(pair)
    assert second_call_while_pushing(plain)


@pytest.mark.parametrize("provider", ["standin", "plugin"])
def test_two_interrupted_tool_outputs_push_as_the_model_says(
    release_189: Any, provider: str
) -> None:
    """Did not match over the plugin before (8 of 10 interleavings: the model's second
    call pushed where the real second reply, behind the first push, had not run); now
    both calls push in every interleaving and every one steps, over both providers
    (the stand-in sets the second generation up at its call, as the plugin does).
    With the `before-call` runs driven (a tool returns before its interruption), two
    more step. A generation whose tool has returned is the current speech, so the
    other one cannot be interrupted first: the sweep left those two runs out until
    the model had the rule (`model.moves.speech_held`); now the model has no such
    run, and none is left out. 1.8.8's run of the pair: tests/livekit/test_plugin_188.py."""
    from proofs.adapters.livekit.check import check_scenario
    from proofs.adapters.livekit.pairs import pair_scenario

    pair = pair_scenario("interrupted-tool-outputs", "interrupted-tool-outputs", (4808, 4808))
    row = check_scenario(release_189, pair, provider=provider)
    assert row["matches"] is True and row["calls_ran_as_model"] is True
    assert row["real_broken"] == [] and row["push_lines"] == [4808]
    assert row["stepped_with_model"] == row["sequences"] == 4
    assert row["not_driven"] == 0


def test_two_cleanups_start_with_one_message_and_make_the_other_at_the_call() -> None:
    """The start the release reaches: the set-up's generation made `asst1`; the later
    cleanup's generation runs only once the earlier one's push has returned, and its
    call makes `asst2` on the server and in the mirror (`Call.made_at_call`)."""
    from model import Move, MoveKind, initial_state, successors
    from proofs.adapters.livekit.check import release_config
    from proofs.adapters.livekit.pairs import pair_scenario

    pair = pair_scenario("cleanup", "cleanup", (1, 1))
    assert pair.server == ("msg0", "asst1") and pair.initial_local == ("msg0",)
    assert [call.made_at_call for call in pair.calls] == [False, True]
    config = release_config("lock5", pair, pair.environment)
    state = initial_state(config)
    assert Move(MoveKind.CALL, 1) not in {m for m, _ in successors(state, config)}
    for label in (
        "call T0",
        "server-apply T0 response",
        "client-apply T0 response",
        "wake T0",
        "server-apply T0 asst1",
        "client-apply T0 asst1",
        "resume T0",
        "call T1",
    ):
        (state,) = [s for m, s in successors(state, config) if m.label() == label]
    assert state.server == state.mirror == ("msg0", "asst2")
    assert state.local == ("msg0",) and "asst2" in state.acked


@pytest.mark.parametrize("provider", ["standin", "plugin"])
def test_two_cleanups_are_driven_and_match(release_189: Any, provider: str) -> None:
    """Refused over the plugin before (both messages on the server at the start); the
    plugin's adapter now defers the second cleanup's generation to its call, the
    stand-in makes its message there too, and every interleaving steps with the model."""
    from proofs.adapters.livekit.check import check_scenario
    from proofs.adapters.livekit.pairs import pair_scenario

    pair = pair_scenario("cleanup", "cleanup", (4758, 4758))
    row = check_scenario(release_189, pair, provider=provider)
    assert row.get("unsupported") is None and row["matches"] is True
    assert row["real_broken"] == [] and row["push_lines"] == [4758]
    assert row["stepped_with_model"] == row["sequences"] == 1
