"""The compact encoding's reconnect is the readable model's: the two graphs are equal
under `encode` on the catalog's reconnect cells, on mixes of calls, and on the other
values of every reconnect field; a compact reconnect with one rule wrong is caught;
and symmetry reduction is on only where renaming tasks maps runs to runs."""

from collections.abc import Iterator

import attrs
import pytest

import proofs.engines.compact as compact
import proofs.engines.symmetry as symmetry
from model import (
    CONFIGURATIONS,
    ENVIRONMENTS,
    SCENARIOS,
    SCENARIOS_BY_NAME,
    SHAPES_BY_NAME,
    SITES,
    VARIANTS_BY_NAME,
    Config,
    Environment,
)
from model.shapes import (
    DropWindow,
    OnReconnect,
    Rebuilds,
    ReconnectLock,
    ReconnectMirror,
    ReconnectResends,
    WindowRebuild,
)
from proofs.engines.compact import CompactModel, CState, unsupported
from proofs.engines.sweep import scenario, shapes
from proofs.engines.symmetry import Perm, Symmetry, rename, rename_move
from tests.proofs.test_explore_compact import differences

RECONNECTS = next(env for env in ENVIRONMENTS if env.name == "reconnects")
ALL = next(env for env in ENVIRONMENTS if env.name == "all")
OPENAI = [(v, s) for v, s in CONFIGURATIONS if s.name == "openai"]


def _once(configs: list[Config]) -> list[Config]:
    """One config per model (`Config.behaviour`): equal behaviours have equal graphs."""
    seen: dict[object, Config] = {}
    for config in configs:
        seen.setdefault(config.behaviour(), config)
    return list(seen.values())


def reconnect_cells() -> list[Config]:
    """Every catalog scenario under `reconnects` and under `all` on every openai-shaped
    variant, each model once."""
    columns = (RECONNECTS, ALL)
    cells = [Config(v, sc, e, shape=s) for v, s in OPENAI for sc in SCENARIOS for e in columns]
    assert all(unsupported(c) is None and c.reconnects() for c in cells)
    return _once(cells)


def test_the_two_graphs_are_equal_on_the_catalogs_reconnect_cells() -> None:
    cells = reconnect_cells()
    assert {c.scenario.name for c in cells if c.environment is ALL} == {s.name for s in SCENARIOS}
    assert differences(cells) == []


def _mix(*sites: str) -> Config:
    shaped = {shape.site: shape for shape in shapes(SITES)}
    return Config(VARIANTS_BY_NAME["lock5"], scenario([shaped[s] for s in sites]), RECONNECTS)


def test_the_two_graphs_are_equal_on_mixes_with_a_reconnect() -> None:
    configs = [
        _mix("tool-outputs", "tool-outputs"),
        _mix("user-turn", "replacement"),
        _mix("cleanup", "tool-outputs", "user-turn"),
        attrs.evolve(_mix("tool-outputs", "replacement"), variant=VARIANTS_BY_NAME["unlocked"]),
    ]
    assert all(unsupported(c) is None for c in configs)
    assert differences(configs) == []


#: The openai shape with each other value of the reconnect's fields, and a three-way
#: session given a reconnect (no catalog shape has one); the released reconnect
#: (`openai-reconnect`: the mirror emptied, ops lost unrecorded in the drop window).
_OPENAI = SHAPES_BY_NAME["openai"]
_THREE_WAY = attrs.evolve(SHAPES_BY_NAME["three-way"], on_reconnect=OnReconnect.REBUILD_FROM_MIRROR)
OTHER_SHAPES = {
    "openai-reconnect": SHAPES_BY_NAME["openai-reconnect"],
    "resends-awaited": attrs.evolve(_OPENAI, reconnect_resends=ReconnectResends.AWAITED),
    "resends-none": attrs.evolve(_OPENAI, reconnect_resends=ReconnectResends.NONE),
    "emptied-under-lock": attrs.evolve(
        _OPENAI,
        reconnect_mirror=ReconnectMirror.EMPTIED,
        reconnect_lock=ReconnectLock.SESSION_LOCK,
    ),
    "no-function-items": attrs.evolve(_OPENAI, rebuilds=Rebuilds.NO_FUNCTION_ITEMS),
    "queued-unqueued": attrs.evolve(
        _OPENAI,
        drop_window=DropWindow.QUEUED,
        window_rebuild=WindowRebuild.UNQUEUED_THEN_QUEUE,
    ),
    "refused": attrs.evolve(_OPENAI, drop_window=DropWindow.REFUSED),
    "lost": attrs.evolve(_OPENAI, drop_window=DropWindow.LOST),
    "three-way-emptied": attrs.evolve(
        _THREE_WAY, reconnect_mirror=ReconnectMirror.EMPTIED, drop_window=DropWindow.UNRECORDED
    ),
    "three-way-at-once": _THREE_WAY,
}


#: The shapes whose mirror empties on a reconnect: their readable graphs are ten times
#: the others', so they are compared on the two smallest scenarios only.
_EMPTIED = ("openai-reconnect", "emptied-under-lock", "three-way-emptied")


@pytest.mark.parametrize("name", list(OTHER_SHAPES))
def test_the_two_graphs_are_equal_under_every_reconnect_field(name: str) -> None:
    shape = OTHER_SHAPES[name]
    variant = VARIANTS_BY_NAME["three-way" if shape.name == "three-way" else "lock5"]
    if name in _EMPTIED:
        cells = [("trim-tool-output", RECONNECTS), ("server-item-during-replacement", RECONNECTS)]
    else:
        cells = [("trim-tool-output", RECONNECTS), ("overlapping-push", RECONNECTS)]
        if name in ("resends-none", "refused", "lost"):  # a timeout ends a push the drop met
            cells.append(("overlapping-push", Environment(reconnects=True, timeouts=True)))
    configs = [Config(variant, SCENARIOS_BY_NAME[n], env, shape=shape) for n, env in cells]
    assert all(unsupported(c) is None and c.reconnects() for c in configs)
    assert differences(configs) == []


def test_the_graph_comparison_catches_a_reconnect_that_forgets_its_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the mutant records no sent op, so a connect sends nothing again
    def forgets(self, w, index, ops, window):  # type: ignore[no-untyped-def]
        w.record = ()

    config = Config(VARIANTS_BY_NAME["lock5"], SCENARIOS_BY_NAME["overlapping-push"], RECONNECTS)
    assert differences([config]) == []
    monkeypatch.setattr(CompactModel, "_keep_record", forgets)
    assert differences([config]) == ["lock5/overlapping-push/reconnects"]


def test_the_graph_comparison_catches_a_drop_window_given_up_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the mutant gives the dead connection up as it drops: no push meets the window
    original = CompactModel._disconnect

    def no_window(self, w):  # type: ignore[no-untyped-def]
        original(self, w)
        w.connected = compact.DOWN

    scenario = SCENARIOS_BY_NAME["overlapping-push"]
    config = Config(VARIANTS_BY_NAME["lock5"], scenario, RECONNECTS, shape=OTHER_SHAPES["refused"])
    assert differences([config]) == []
    monkeypatch.setattr(CompactModel, "_disconnect", no_window)
    assert differences([config]) == ["lock5/overlapping-push/reconnects"]


# -- symmetry ---------------------------------------------------------------------


def _commutes(config: Config, perm_of: Symmetry) -> Iterator[str]:
    """Where renaming a group's tasks does not commute with the successor function:
    from a reachable state s, the moves of rename(s) must be those of s renamed."""
    model = CompactModel(config)
    start = model.initial()
    seen = {start}
    queue = [start]
    perms: list[Perm] = []
    for members in perm_of.groups:
        tmap = list(range(model.n_tasks))
        imap = list(range(len(model.names)))
        first, second = members[0], members[1]
        tmap[first], tmap[second] = second, first
        for a, b in zip(model.adds[first], model.adds[second], strict=True):
            imap[a], imap[b] = b, a
        perms.append((tuple(tmap), tuple(imap)))
    while queue:
        state: CState = queue.pop()
        after = model.successors(state)
        for perm in perms:
            renamed = {(rename_move(m, perm), rename(t, perm)) for m, t in after}
            if renamed != set(model.successors(rename(state, perm))):
                yield f"{config.scenario.name}: {model.move(after[0][0]).label()}"
                return
        for _, successor in after:
            if successor not in seen:
                seen.add(successor)
                queue.append(successor)


def test_renaming_commutes_with_the_moves_where_a_reconnect_keeps_symmetry() -> None:
    configs = [
        _mix("tool-outputs", "tool-outputs"),
        attrs.evolve(_mix("tool-outputs", "tool-outputs"), shape=OTHER_SHAPES["resends-none"]),
        Config(
            VARIANTS_BY_NAME["three-way"],
            _mix("tool-outputs", "tool-outputs").scenario,
            RECONNECTS,
            shape=attrs.evolve(_THREE_WAY, reconnect_resends=ReconnectResends.CURRENT_PUSH),
        ),
    ]
    for config in configs:
        sym = Symmetry(CompactModel(config))
        assert sym.active
        assert list(_commutes(config, sym)) == []


def test_a_reconnect_that_resends_in_task_order_turns_symmetry_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # two three-way pushes wait at once; a connect sends T0's ops again before T1's,
    # so swapping the two tasks changes the run: the reduction must be off
    config = Config(
        VARIANTS_BY_NAME["three-way"],
        _mix("tool-outputs", "tool-outputs").scenario,
        RECONNECTS,
        shape=_THREE_WAY,
    )
    assert _THREE_WAY.reconnect_resends is ReconnectResends.AWAITED
    assert not Symmetry(CompactModel(config)).active
    monkeypatch.setattr(symmetry, "renamable", lambda model: True)
    forced = Symmetry(CompactModel(config))
    assert forced.active
    assert list(_commutes(config, forced)) != []
