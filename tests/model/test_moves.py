"""Step semantics: what one model step does, checked against asyncio's rules."""

from collections.abc import Callable, Hashable

import attrs
import pytest

from model import (
    ENVIRONMENTS,
    SCENARIOS,
    SCENARIOS_BY_NAME,
    VARIANTS,
    VARIANTS_BY_NAME,
    Call,
    Config,
    Environment,
    Move,
    MoveKind,
    Pc,
    Scenario,
    State,
    initial_state,
    step,
    successors,
)
from model.sites import LocalUpdate, RequestSource, Site, with_speech_turn


def config(variant: str, scenario: str, env: Environment | None = None) -> Config:
    sc = SCENARIOS_BY_NAME[scenario]
    return Config(VARIANTS_BY_NAME[variant], sc, env if env is not None else sc.environment)


def run(cfg: Config, *moves: Move):  # type: ignore[no-untyped-def]
    state = initial_state(cfg)
    for move in moves:
        state = step(state, cfg, move)
    return state


def test_uncontended_call_snapshots_diffs_and_sends_in_one_step() -> None:
    cfg = config("lock5", "overlapping-push")
    state = run(cfg, Move(MoveKind.CALL, 0))
    assert state.tasks[0].pc is Pc.WAIT_ACKS
    assert state.activity_lock.owner == 0 and state.provider_lock.owner == 0
    assert [op.item for op in state.to_server] == ["out1"]
    assert state.local == ("msg0", "out1")  # tool outputs update the local context first


def test_contended_activity_lock_blocks_before_the_snapshot() -> None:
    cfg = config("lock5", "overlapping-push")
    state = run(cfg, Move(MoveKind.CALL, 0), Move(MoveKind.CALL, 1))
    assert state.tasks[1].pc is Pc.WAIT_ACTIVITY
    assert state.tasks[1].request is None  # no snapshot taken yet
    assert state.activity_lock.waiters == (1,)


def test_unlocked_site_snapshots_then_waits_for_the_provider_lock() -> None:
    cfg = config("unlocked", "overlapping-push")
    state = run(cfg, Move(MoveKind.CALL, 0), Move(MoveKind.CALL, 1))
    assert state.tasks[1].pc is Pc.WAIT_PROVIDER
    assert state.tasks[1].request == ("msg0", "hello")


def test_release_hands_the_lock_over_and_the_waiter_runs_later() -> None:
    cfg = config("lock5", "overlapping-push")
    state = run(
        cfg,
        Move(MoveKind.CALL, 0),
        Move(MoveKind.CALL, 1),
        Move(MoveKind.SERVER_APPLY, 0, "out1"),
        Move(MoveKind.CLIENT_APPLY, 0, "out1"),
        Move(MoveKind.RESUME, 0),
    )
    assert state.activity_lock.owner == 1
    assert state.tasks[1].pc is Pc.WAIT_ACTIVITY  # handed over, not yet resumed
    state = step(state, cfg, Move(MoveKind.WAKE, 1))
    assert state.tasks[1].request == ("msg0", "out1", "hello")
    assert not [op for op in state.to_server if op.kind.value == "delete"]


def test_user_turn_updates_the_local_context_after_its_push() -> None:
    cfg = config("lock5", "stale-replacement", Environment())
    state = run(cfg, Move(MoveKind.CALL, 0))
    assert "hello" not in state.local
    state = run(
        cfg,
        Move(MoveKind.CALL, 0),
        Move(MoveKind.SERVER_APPLY, 0, "hello"),
        Move(MoveKind.CLIENT_APPLY, 0, "hello"),
        Move(MoveKind.RESUME, 0),
    )
    assert state.local[-1] == "hello"


def test_hoisted_user_turn_updates_the_local_context_before_its_push() -> None:
    cfg = config("lock5-hoisted", "stale-replacement", Environment())
    assert "hello" in run(cfg, Move(MoveKind.CALL, 0)).local


def test_replacement_request_is_the_live_local_object_read_at_diff_time() -> None:
    # the replacement waits for the activity lock; the user turn's upsert lands in
    # the replacement's own object, so its diff keeps hello (livekit's aliasing)
    cfg = config("lock5", "stale-replacement", Environment())
    state = run(
        cfg,
        Move(MoveKind.CALL, 0),
        Move(MoveKind.CALL, 1),
        Move(MoveKind.SERVER_APPLY, 0, "hello"),
        Move(MoveKind.CLIENT_APPLY, 0, "hello"),
        Move(MoveKind.RESUME, 0),
        Move(MoveKind.WAKE, 1),
    )
    assert state.tasks[1].request == ("msg0", "hello")
    assert not state.to_server


def test_timeout_releases_locks_and_leaves_ops_in_flight() -> None:
    cfg = config("lock5", "overlapping-push", Environment(timeouts=True))
    state = run(cfg, Move(MoveKind.CALL, 0), Move(MoveKind.TIMEOUT, 0))
    assert state.tasks[0].pc is Pc.FAILED
    assert state.activity_lock.free() and state.provider_lock.free()
    assert [op.item for op in state.to_server] == ["out1"]


def test_timeout_is_only_enabled_with_the_option() -> None:
    cfg = config("lock5", "overlapping-push", Environment())
    state = run(cfg, Move(MoveKind.CALL, 0))
    assert all(move.kind is not MoveKind.TIMEOUT for move, _ in successors(state, cfg))


def test_server_rejects_a_create_after_an_unknown_predecessor() -> None:
    cfg = config("lock5", "overlapping-push")
    state = initial_state(cfg)
    from attrs import evolve

    from model.state import Op, OpKind

    state = evolve(state, to_server=(Op(OpKind.CREATE, "out1", "ghost", 0),))
    after = step(state, cfg, Move(MoveKind.SERVER_APPLY, 0, "out1"))
    assert after.server == state.server
    assert after.to_client[-1].kind.value == "rejected"


def test_a_new_site_is_one_more_record() -> None:
    # a site found in real code, not in the catalog: a user turn that snapshots
    # the live local context; the model needs no code for it
    site = Site("text-from-local", "x", RequestSource.LOCAL_CONTEXT, LocalUpdate.BEFORE_PUSH)
    scenario = Scenario(
        "custom",
        "x",
        (Call("tool-outputs", adds=("out1",)), Call("text-from-local", adds=("t1",))),
    )
    cfg = Config(VARIANTS_BY_NAME["unlocked"], scenario, Environment(), extra_sites=(site,))
    state = run(cfg, Move(MoveKind.CALL, 0), Move(MoveKind.CALL, 1))
    assert state.local == ("msg0", "out1", "t1")
    assert state.tasks[1].pc is Pc.WAIT_PROVIDER


def test_a_late_rejection_settles_only_its_own_push() -> None:
    # the real session resolves an error event by its event id, among the futures
    # of the push that sent it; a timed-out push's late rejection settles nothing
    cfg = config("lock5", "overlapping-push", Environment(timeouts=True, rejections=True))
    state = run(
        cfg,
        Move(MoveKind.CALL, 0),
        Move(MoveKind.SERVER_REJECT, 0, "out1"),
        Move(MoveKind.TIMEOUT, 0),
    )
    from attrs import evolve

    from model.state import OpKind

    # a later push waits for its own create of the same item
    waiting = evolve(state.tasks[1], pc=Pc.WAIT_ACKS, pending=frozenset({(OpKind.CREATE, "out1")}))
    state = evolve(state, tasks=(state.tasks[0], waiting))
    after = step(state, cfg, Move(MoveKind.CLIENT_APPLY, 0, "out1"))
    assert after.tasks[1].pending == {(OpKind.CREATE, "out1")}


# -- configs with the same behaviour are the same model -------------------------


Graph = frozenset[tuple[object, Move, object]]


def _graph(cfg: Config) -> Graph:
    """Every (state, move, successor) reachable from the initial state."""
    start = initial_state(cfg)
    seen, todo, edges = {start}, [start], set()
    while todo:
        state = todo.pop()
        for move, successor in successors(state, cfg):
            edges.add((state, move, successor))
            if successor not in seen:
                seen.add(successor)
                todo.append(successor)
    return frozenset(edges)


#: The verdict table's columns, "all" without a reconnect: the reconnect graphs
#: are the largest, and `reconnects` alone already puts the option beside the rest.
_COLUMNS = tuple(
    attrs.evolve(env, reconnects=False) if env.name == "all" else env for env in ENVIRONMENTS
)


def _catalog_configs() -> list[Config]:
    return [
        Config(variant, scenario, environment)
        for scenario in SCENARIOS
        for variant in VARIANTS
        for environment in _COLUMNS
    ]


def _same_key_pairs(
    key: Callable[[Config], Hashable], graphs: dict[Config, Graph]
) -> list[tuple[Config, Config]]:
    first: dict[Hashable, Config] = {}
    pairs = []
    for cfg in graphs:
        other = first.setdefault(key(cfg), cfg)
        if other is not cfg:
            pairs.append((other, cfg))
    return pairs


@pytest.fixture(scope="module")
def catalog_graphs() -> dict[Config, Graph]:
    return {cfg: _graph(cfg) for cfg in _catalog_configs()}


def test_configs_with_the_same_behaviour_have_the_same_runs(
    catalog_graphs: dict[Config, Graph],
) -> None:
    pairs = _same_key_pairs(Config.behaviour, catalog_graphs)
    # variants alike at the sites a scenario calls, and environments alike in the
    # options a scenario reads: both kinds occur in the catalog
    assert any(a.variant != b.variant for a, b in pairs)
    assert any(a.environment != b.environment for a, b in pairs)
    for a, b in pairs:
        assert catalog_graphs[a] == catalog_graphs[b], (a, b)


def test_a_behaviour_that_forgets_the_local_update_would_be_caught(
    catalog_graphs: dict[Config, Graph],
) -> None:
    """The check above can fail: lock5 and lock5-hoisted differ only in when the
    user turn updates the local context, and a key without it merges them."""

    def coarse(cfg: Config) -> Hashable:
        scenario, three_way, sites, options, appends = cfg.behaviour()  # type: ignore[misc]
        return scenario, three_way, tuple(site[:2] for site in sites), options, appends

    pairs = _same_key_pairs(coarse, catalog_graphs)
    assert any(catalog_graphs[a] != catalog_graphs[b] for a, b in pairs)


def test_the_append_order_is_part_of_the_behaviour() -> None:
    """`Config.appends_locally` changes the runs (a tool output made before its call
    goes by creation time, or at the tail), so the key that lets `verify` and the
    explorer's workers share a check must tell the two apart."""
    cfg = config("lock5", "spoken-during-tool-push")
    appending = attrs.evolve(cfg, appends_locally=True)
    assert _graph(cfg) != _graph(appending)
    assert cfg.behaviour() != appending.behaviour()


def test_options_read_says_which_options_can_change_a_run() -> None:
    stale = Environment(stale_copies=True)
    assert "stale-copies" in config("lock5", "replacement-first", stale).options_read()
    assert "stale-copies" not in config("lock5", "overlapping-push", stale).options_read()
    pool = config("lock5", "server-item-during-replacement")
    assert "server-items" in pool.options_read()
    assert "server-items" not in config("lock5", "overlapping-push").options_read()


def _turn_config(scenario: Scenario) -> Config:
    """lock5 on the site records with livekit's speech turn."""
    return Config(
        VARIANTS_BY_NAME["lock5"], scenario, scenario.environment, extra_sites=with_speech_turn()
    )


def _enabled(cfg: Config, state: State) -> set[str]:
    return {move.label() for move, _ in successors(state, cfg)}


def test_a_speech_started_at_its_before_call_holds_the_turn_until_its_call() -> None:
    """A `say()` whose playout started (`before-call`) is the current speech, so the
    tool-output push, which waits for the turn, is not called until the say's call
    gives it up (livekit 1.8.9 `agent_activity.py:3453`, `:4879`). The old rule let
    `call T0` go right after `before-call T1`."""
    cfg = _turn_config(SCENARIOS_BY_NAME["spoken-during-tool-push"])
    start = initial_state(cfg)
    assert {"call T0", "before-call T1"} <= _enabled(cfg, start)
    playing = step(start, cfg, Move(MoveKind.BEFORE_CALL, 1))
    assert "call T0" not in _enabled(cfg, playing)
    assert "call T1" in _enabled(cfg, playing)
    yielded = step(playing, cfg, Move(MoveKind.CALL, 1))
    assert "call T0" in _enabled(cfg, yielded)


def test_of_two_interrupted_generations_the_one_whose_tool_ran_holds_the_turn() -> None:
    """Either generation may be current at the start; once one's tool has returned
    (`before-call`) it is the one that ran, so the other is not interrupted before it."""
    scenario = Scenario(
        name="two-interrupted",
        summary="two interrupted generations, each with a tool output",
        calls=(
            Call("interrupted-tool-outputs", adds=("iout1",)),
            Call("interrupted-tool-outputs", adds=("iout2",)),
        ),
    )
    cfg = _turn_config(scenario)
    start = initial_state(cfg)
    assert {"call T0", "call T1"} <= _enabled(cfg, start)
    ran = step(start, cfg, Move(MoveKind.BEFORE_CALL, 0))
    assert "call T1" not in _enabled(cfg, ran)
    assert "call T0" in _enabled(cfg, ran)


def test_a_say_starts_its_playout_only_with_the_turn_free() -> None:
    """While an interrupted generation is the current speech, a `say()` waits for its
    turn before it plays, so no `before-call` is offered until the generation's call
    (after it nothing else makes an item, so the say's call makes its message).
    Taken earlier, the say would hold a turn the generation holds too, and neither
    could be called."""
    scenario = Scenario(
        name="say-beside-interrupted",
        summary="a say() beside an interrupted generation with a tool output",
        calls=(
            Call("spoken-message", adds=("spoken1",)),
            Call("interrupted-tool-outputs", adds=("iout2",)),
        ),
    )
    cfg = _turn_config(scenario)
    start = initial_state(cfg)
    assert "before-call T0" not in _enabled(cfg, start)
    assert "call T0" not in _enabled(cfg, start)
    interrupted = step(start, cfg, Move(MoveKind.CALL, 1))
    assert "call T0" in _enabled(cfg, interrupted)
