"""`MoveSpec.identified_by` says what tells two enabled moves of a kind apart, exactly.

Read off the successor function: in every reachable state of a few small
configurations, the enabled moves of each kind differ in what the table says
('none': at most one is enabled), and a kind said to need a task or an item
does have two enabled at once somewhere, so a coarser answer would be wrong.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

import attrs

from model import (
    CASES_BY_NAME,
    MOVES,
    SCENARIOS_BY_NAME,
    SITES_BY_NAME,
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
    with_speech_turn,
)
from model.shapes import SHAPES_BY_NAME, InterruptionEnd
from model.state import RESPONSE, Event, EventKind, Op, OpKind, Pc

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

#: livekit's OpenAI session whose interrupted generation ends on the server's done
#: event, with the speech turn: a replacement beside interrupted tool outputs, and
#: two interrupted generations (each call sends a cancel; the done is answered behind).
ON_DONE = attrs.evolve(SHAPES_BY_NAME["openai"], interruption_end=InterruptionEnd.ON_DONE_EVENT)
INTERRUPTED = (
    Scenario(
        "replacement-and-interrupted", "a replacement beside interrupted tool outputs",
        (Call("replacement", ("note1",)), Call("interrupted-tool-outputs", ("iout2",))),
        server=("msg0",),
    ),
    Scenario(
        "two-interrupted", "a cleanup and interrupted tool outputs",
        (Call("cleanup", drops=("asst1",)), Call("interrupted-tool-outputs", ("iout2",))),
        server=("msg0", "asst1"), local=("msg0",),
    ),
)  # fmt: skip
ON_DONE_CONFIGS = [
    Config(
        VARIANTS_BY_NAME[variant],
        scenario,
        parse_environment("rejections"),
        extra_sites=with_speech_turn(),
        shape=ON_DONE,
    )
    for variant in ("unlocked", "lock5")
    for scenario in INTERRUPTED
]
CONFIGS.extend(ON_DONE_CONFIGS)


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


def _transitions(config: Config) -> Iterator[tuple[State, Move, State]]:
    start = initial_state(config)
    seen: set[State] = {start}
    todo = [start]
    while todo:
        state = todo.pop()
        for move, successor in successors(state, config):
            yield state, move, successor
            if successor not in seen:
                seen.add(successor)
                todo.append(successor)


def _cancels(state: State, task: int) -> int:
    in_flight = [op for op in state.to_server if op.kind is OpKind.CANCEL and op.task == task]
    answers = [e for e in state.to_client if e.kind is EventKind.DONE and e.task == task]
    return len(in_flight) + len(answers)


def test_the_cancel_and_its_done_queue_behind_what_was_sent_before() -> None:
    seen = {"cancel": 0, "done": 0, "ended": 0}
    for config in ON_DONE_CONFIGS:
        for before, move, after in _transitions(config):
            task = move.task
            if move.kind is MoveKind.CALL and after.tasks[task].pc is Pc.WAIT_DONE:
                # the interruption sends its cancel and nothing else, at the FIFO's tail
                cancel = Op(OpKind.CANCEL, RESPONSE, None, task)
                assert after.to_server == (*before.to_server, cancel)
                assert (after.server, after.mirror, after.local) == (
                    before.server, before.mirror, before.local
                )  # fmt: skip
                seen["cancel"] += 1
            if before.to_server and before.to_server[0].kind is OpKind.CANCEL:
                # only the server's apply takes a cancel: no rejection, and it is
                # answered by a done event behind the answers already on their way
                assert move.kind is not MoveKind.SERVER_REJECT
                if move.kind is MoveKind.SERVER_APPLY:
                    done = Event(EventKind.DONE, RESPONSE, task=task)
                    assert move.item == RESPONSE and after.server == before.server
                    assert after.to_client == (*before.to_client, done)
                    seen["done"] += 1
            if move.kind is MoveKind.CLIENT_APPLY and before.to_client[0].kind is EventKind.DONE:
                assert after.tasks[task].pc is Pc.ENDED and after.mirror == before.mirror
                seen["ended"] += 1
            for index, state in enumerate(after.tasks):
                # a push starts only once the done of its own cancel has been applied
                if state.pc in (Pc.WAIT_DONE,):
                    assert _cancels(after, index) == 1
                if state.pc is Pc.WAIT_ACKS and config.ends_on_done(index):
                    assert _cancels(after, index) == 0
    assert all(seen.values()), seen


def test_an_interrupted_generation_keeps_the_speech_turn_until_its_push() -> None:
    # two interrupted generations: the second is called only once the first pushes
    config = ON_DONE_CONFIGS[1]
    for before, move, _ in _transitions(config):
        if move.kind is MoveKind.CALL:
            other = before.tasks[1 - move.task]
            assert other.pc not in (Pc.WAIT_DONE, Pc.ENDED), move.label()


def test_the_old_value_ends_the_generation_in_the_call() -> None:
    at_once = attrs.evolve(ON_DONE_CONFIGS[0], shape=SHAPES_BY_NAME["openai"])
    for _, move, after in _transitions(at_once):
        assert all(op.kind is not OpKind.CANCEL for op in after.to_server), move.label()
        assert all(task.pc not in (Pc.WAIT_DONE, Pc.ENDED) for task in after.tasks)


def test_the_engines_that_end_a_generation_at_once_refuse_the_value() -> None:
    import pytest

    from proofs.engines.compact import unsupported
    from proofs.engines.fol.modelled import coverage
    from proofs.engines.fol.system import Cell
    from proofs.engines.smt.encoding import refuse_unmodelled
    from proofs.errors import UnsupportedConfig

    for config in ON_DONE_CONFIGS:
        assert "interruption_end" in (unsupported(config) or "")
        with pytest.raises(UnsupportedConfig):
            refuse_unmodelled(config)
        # the first-order model reads no speech turn; on the catalog's sites it
        # refuses the shape by its fields
        sites = tuple(SITES_BY_NAME[call.site] for call in config.scenario.calls)
        cell = Cell(config.variant, sites, config.environment, shape=config.shape)
        assert "session shape" in coverage(cell)
        # the catalog's record, with the same sites and scenario, is theirs
        old = attrs.evolve(config, shape=SHAPES_BY_NAME["openai"])
        assert unsupported(old) is None
        refuse_unmodelled(old)
        # (it may still leave the cell out for the local order, never for the shape)
        assert "session shape" not in coverage(attrs.evolve(cell, shape=SHAPES_BY_NAME["openai"]))
