"""`MoveSpec.identified_by` says what tells two enabled moves of a kind apart, exactly.

Read off the successor function: in every reachable state of a few small
configurations, the enabled moves of each kind differ in what the table says
('none': at most one is enabled), and a kind said to need a task or an item
does have two enabled at once somewhere, so a coarser answer would be wrong.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from model import (
    CASES_BY_NAME,
    MOVES,
    SCENARIOS_BY_NAME,
    VARIANTS_BY_NAME,
    Call,
    Config,
    Move,
    MoveKind,
    Scenario,
    State,
    initial_state,
    parse_environment,
    successors,
)

#: One call and a pool of two: both server items can wait to be learned at once.
POOL_OF_TWO = Scenario(
    "pool-of-two", "a tool push and two server items", (Call("tool-outputs", ("out1",)),),
    server_pool=("srv1", "srv2"),
)  # fmt: skip
#: Two locked sites and an unlocked one (under lock3): a push that ends hands the
#: activity lock to one waiter and the provider lock to the other.
THREE_CALLS = Scenario(
    "three-calls", "a tool push, a user turn and a replacement",
    (Call("tool-outputs", ("out1",)), Call("user-turn", ("hello",)), Call("replacement", ("n1",))),
)  # fmt: skip

CONFIGS = [
    Config(VARIANTS_BY_NAME[variant], scenario, parse_environment(environment))
    for variant, scenario, environment in (
        ("three-way", SCENARIOS_BY_NAME["overlapping-push"], "timeouts"),
        ("unlocked", SCENARIOS_BY_NAME["overlapping-push"], "rejections"),
        ("lock3", THREE_CALLS, "base"),
        ("unlocked", POOL_OF_TWO, "server-items"),
        ("unlocked", SCENARIOS_BY_NAME["two-replacements-during-user-turn"], "stale-copies"),
        # two sites whose items are created before their calls: both may be created
        ("lock5", SCENARIOS_BY_NAME["spoken-during-tool-push"], "base"),
        # the openai shape rebuilds on reconnect: the connection drops and comes back
        ("lock5", SCENARIOS_BY_NAME["overlapping-push"], "reconnects"),
    )
]
# the model anchors an item on a deleted one only where the mirror drops such an item
# (case 3's release before the fix); every catalog shape places it at the tail
_CASE_3 = CASES_BY_NAME["livekit-agents-6964"]
CONFIGS.append(
    Config(
        VARIANTS_BY_NAME["unlocked"],
        _CASE_3.scenario,
        _CASE_3.scenario.environment,
        shape=_CASE_3.before.shape,
    )
)


def _reachable(config: Config) -> Iterator[list[Move]]:
    """The enabled moves of every reachable state."""
    start = initial_state(config)
    seen: set[State] = {start}
    todo = [start]
    while todo:
        moves = list(successors(todo.pop(), config))
        yield [move for move, _ in moves]
        for _, state in moves:
            if state not in seen:
                seen.add(state)
                todo.append(state)


def _key(move: Move, by: str) -> object:
    return {"task": move.task, "item": move.item, "none": None}[by]


def test_identified_by_tells_enabled_moves_apart_and_is_needed() -> None:
    most: dict[MoveKind, int] = defaultdict(int)
    clashes = []
    for config in CONFIGS:
        for enabled in _reachable(config):
            by_kind: dict[MoveKind, list[Move]] = defaultdict(list)
            for move in enabled:
                by_kind[move.kind].append(move)
            for kind, moves in by_kind.items():
                most[kind] = max(most[kind], len(moves))
                keys = [_key(move, MOVES[kind].identified_by) for move in moves]
                if len(set(keys)) < len(keys):
                    clashes.append((kind.value, [move.label() for move in moves]))
    assert clashes == []
    assert set(most) == set(MoveKind), "some kind never enabled: add a configuration"
    told_apart = {kind.value for kind in MoveKind if MOVES[kind].identified_by != "none"}
    several = {kind.value for kind, count in most.items() if count > 1}
    assert told_apart == several


def test_the_model_s_next_item_is_one_move_though_its_words_name_the_item() -> None:
    spec = MOVES[MoveKind.MODEL_CREATES]
    assert spec.names_item and spec.identified_by == "none"
    assert MOVES[MoveKind.LEARN].identified_by == "item"
