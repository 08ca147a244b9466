"""The compact encoding is the readable model, quotiented by fields no later move
and no invariant reads: the two graphs are equal under `encode`, and every trace
the explorer reports is a run of the readable model."""

from collections import deque

import pytest

from model import (
    CONFIGURATIONS,
    ENVIRONMENTS,
    OPTION_NAMES,
    SCENARIOS,
    SCENARIOS_BY_NAME,
    VARIANTS_BY_NAME,
    Config,
    Environment,
    Invariant,
    State,
    Verdict,
    check,
    initial_state,
    successors,
)
from proofs.engines.compact import CompactModel, unsupported
from proofs.engines.explore import explore
from proofs.engines.explore_readable import explore_readable
from proofs.engines.trace import replay

Graph = tuple[frozenset[object], frozenset[object]]


def readable_graph(config: Config) -> Graph:
    """Every reachable readable state and move, seen through `encode`; on the way,
    both invariants are checked to agree on every state."""
    model = CompactModel(config)
    start = initial_state(config)
    seen = {start}
    queue = deque([start])
    edges = set()
    # each state encoded once: it is a successor of many, and encoding is pure
    codes: dict[object, object] = {}

    def code(state: State) -> object:
        if state not in codes:
            codes[state] = model.encode(state)
        return codes[state]

    while queue:
        state = queue.popleft()
        encoded = code(state)
        inv1 = check(state, config, Invariant.NO_UNINTENDED_DELETE) is not None
        inv2 = check(state, config, Invariant.AGREEMENT_AT_REST) is not None
        inv3 = check(state, config, Invariant.MIRROR_TRUE_AT_REST) is not None
        inv4 = check(state, config, Invariant.NOTHING_TWICE) is not None
        assert model.unintended_delete(encoded) == inv1
        assert model.disagreement_at_rest(encoded) == inv2
        assert model.untrue_mirror_at_rest(encoded) == inv3
        assert model.twice(encoded) == inv4
        for move, successor in successors(state, config):
            edges.add((encoded, move, code(successor)))
            if successor not in seen:
                seen.add(successor)
                queue.append(successor)
    return frozenset(code(s) for s in seen), frozenset(edges)


def compact_graph(config: Config) -> Graph:
    model = CompactModel(config)
    start = model.initial()
    seen = {start}
    queue = deque([start])
    edges = set()
    while queue:
        state = queue.popleft()
        for move, successor in model.successors(state):
            edges.add((state, model.move(move), successor))
            if successor not in seen:
                seen.add(successor)
                queue.append(successor)
    return frozenset(seen), frozenset(edges)


#: The verdict table's environments, and every option but a reconnect together.
COMPACT_ENVIRONMENTS = (
    *ENVIRONMENTS,
    Environment.of(name for name in OPTION_NAMES if name != "reconnects"),
)


def covered_cells() -> list[Config]:
    """Every catalog cell the compact encoding covers (`compact.unsupported`)."""
    cells = [
        Config(variant, scenario, env, shape=shape)
        for variant, shape in CONFIGURATIONS
        for scenario in SCENARIOS
        for env in COMPACT_ENVIRONMENTS
    ]
    return [cell for cell in cells if unsupported(cell) is None]


def catalog_cells() -> list[Config]:
    """The covered cells where the connection never drops (those with a reconnect are
    compared in `test_explore_compact_reconnect.py`)."""
    return [cell for cell in covered_cells() if not cell.reconnects()]


def test_the_compact_encoding_covers_the_openai_and_three_way_shapes() -> None:
    covered = {(c.shape.name, c.environment.reconnects) for c in covered_cells()}
    assert covered == {
        ("openai", False),
        ("openai", True),
        ("three-way", False),
        ("three-way", True),
    }
    # a reconnect happens only on the openai shape: three-way's is inert
    assert {c.shape.name for c in covered_cells() if c.reconnects()} == {"openai"}


def differences(configs: list[Config]) -> list[str]:
    out = []
    for config in configs:
        if readable_graph(config) != compact_graph(config):
            out.append(f"{config.variant.name}/{config.scenario.name}/{config.environment.name}")
    return out


def test_the_two_graphs_are_equal_over_the_catalog() -> None:
    assert differences(catalog_cells()) == []


def test_the_graph_comparison_catches_a_compact_model_that_forgets_orphaned_objects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a replacement gives the activity a new local context object; a waiting task
    # bound to the old one must keep the old one. The mutant rebinds nobody.
    def replace(self, w, local):  # type: ignore[no-untyped-def]
        w.local = local

    scenario = SCENARIOS_BY_NAME["two-replacements-during-user-turn"]
    config = Config(VARIANTS_BY_NAME["lock5"], scenario, scenario.environment)
    assert differences([config]) == []
    monkeypatch.setattr(CompactModel, "_replace_local", replace)
    assert differences([config]) == ["lock5/two-replacements-during-user-turn/base"]


def test_without_symmetry_the_explorer_finds_the_readable_explorers_traces() -> None:
    for config in catalog_cells():
        old = explore_readable(config)
        new = explore(config, symmetry=False)
        for before, after in zip(old.findings, new.findings, strict=True):
            assert before.verdict is after.verdict
            assert (before.trace and before.trace.moves) == (after.trace and after.trace.moves)
        assert new.states <= old.states


def test_every_counterexample_replays_through_the_readable_model() -> None:
    for config in catalog_cells():
        for found in explore(config).findings:
            if found.verdict is Verdict.HOLDS:
                continue
            assert found.trace is not None
            trace = replay(config, found.trace.moves)
            assert trace.last == found.trace.last
            assert check(trace.last, config, found.invariant) == found.violation


def test_it_stops_at_the_first_violation_of_the_invariants_asked_about() -> None:
    from proofs.engines.sweep import Shape, scenario

    tool = Shape("tool", "tool-outputs", adds="out")
    user = Shape("user", "user-turn", adds="hello")
    mix = (tool, tool, tool, user, Shape("repl", "replacement", adds="note"))
    config = Config(VARIANTS_BY_NAME["lock5-hoisted"], scenario(mix), ENVIRONMENTS[1])
    both = explore(config)
    first = explore(config, invariants=(Invariant.NO_UNINTENDED_DELETE,))
    assert first.findings[0].verdict is Verdict.COUNTEREXAMPLE
    assert first.findings[0].depth == both.finding(Invariant.NO_UNINTENDED_DELETE).depth
    assert first.states < both.states


def test_the_invariant_check_catches_a_compact_invariant_that_forgets_recreated_items(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from proofs.engines import compact

    scenario = SCENARIOS_BY_NAME["cleanup-during-tool-push"]
    config = Config(VARIANTS_BY_NAME["lock3"], scenario, scenario.environment)
    readable_graph(config)

    original = CompactModel.disagreement_at_rest

    def without_recreated(s):  # type: ignore[no-untyped-def]
        return original((*s[: compact.RECREATED], 0, *s[compact.RECREATED + 1 :]))

    monkeypatch.setattr(CompactModel, "disagreement_at_rest", staticmethod(without_recreated))
    with pytest.raises(AssertionError):
        readable_graph(config)


@pytest.mark.parametrize("field", ["made_at_call", "behind_earlier_push"])
def test_a_call_field_the_encoding_lacks_is_refused(field: str) -> None:
    """The compact successor function has neither call field: a config setting one
    goes to the readable model (`unsupported` says why), never explored without it."""
    import attrs

    from model import SCENARIOS_BY_NAME, VARIANTS_BY_NAME, Config, Environment

    scenario = SCENARIOS_BY_NAME["overlapping-push"]
    assert unsupported(Config(VARIANTS_BY_NAME["lock5"], scenario, Environment())) is None
    calls = (scenario.calls[0], attrs.evolve(scenario.calls[1], **{field: True}))
    changed = attrs.evolve(scenario, calls=calls)
    reason = unsupported(Config(VARIANTS_BY_NAME["lock5"], changed, Environment()))
    assert reason is not None and field in reason


def test_the_graph_comparison_catches_a_readable_model_that_appends_the_spoken_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`say()`'s push places its message in its copy of the mirror by creation time
    (`model.sites.COPY_INSERTS`, `model.local_order.request`), in both encodings; with
    the readable model's request appended as before and the compact one unchanged,
    the graphs differ, and the other way round. The catalog's records wait for no
    speech turn, so the tool output can be acknowledged while the say plays."""
    from model import local_order
    from model.sites import COPY_INSERTS

    scenario = SCENARIOS_BY_NAME["spoken-during-tool-push"]
    config = Config(
        VARIANTS_BY_NAME["lock5"], scenario, scenario.environment, local_orders=COPY_INSERTS
    )
    assert unsupported(config) is None
    assert differences([config]) == []
    catalog = Config(VARIANTS_BY_NAME["lock5"], scenario, scenario.environment)
    assert readable_graph(config) != readable_graph(catalog)
    with monkeypatch.context() as patch:
        patch.setattr(local_order, "request", lambda plan, items, adds, born: items + adds)
        assert differences([config]) == ["lock5/spoken-during-tool-push/base"]
    # and the other way round: the compact encoding appending, the readable one not
    init = CompactModel.__init__

    def appending(self: CompactModel, config: Config) -> None:
        init(self, config)
        self.places_request = tuple(False for _ in self.places_request)

    monkeypatch.setattr(CompactModel, "__init__", appending)
    assert differences([config]) == ["lock5/spoken-during-tool-push/base"]


def test_learn_behind_the_events_in_flight_is_the_same_in_both_encodings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With `completion_channel = events` on the openai shape, both encodings let the
    local context learn the model's item only with no event in flight; a readable
    model that lets it learn at any moment has another graph."""
    import attrs

    from model import SHAPES_BY_NAME
    from model import moves as model_moves
    from model.shapes import CompletionChannel

    scenario = SCENARIOS_BY_NAME["server-item-during-replacement"]
    shape = attrs.evolve(SHAPES_BY_NAME["openai"], completion_channel=CompletionChannel.EVENTS)
    config = Config(VARIANTS_BY_NAME["lock5"], scenario, scenario.environment, shape=shape)
    assert unsupported(config) is None
    assert differences([config]) == []
    assert readable_graph(config) != readable_graph(
        attrs.evolve(config, shape=SHAPES_BY_NAME["openai"])
    )
    monkeypatch.setattr(model_moves, "_may_learn", lambda state, config: True)
    assert differences([config]) == ["lock5/server-item-during-replacement/server-items"]
