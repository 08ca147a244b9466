"""The schema of the z3 encoding's state variables, and the dispatch over moves and options.

- Every variable the schema declares is set by `Encoding.initial`; every family is
  produced by `Encoding.concrete`, read by `simulation.view` and `Encoding.describe`
  and constrained by `reachset.Matcher`, except where the family says why not
  (`Family.skip`), and those marks are true. A family added without a handler is
  caught.
- Every `MoveKind` has a builder and a subject in the encoding; each option enables
  exactly the moves `model.MOVES` says; a missing builder or option raises.
- The entry guard refuses exactly the configs the encoding does not model (other
  session shapes, a reconnect that can happen), which the walks here leave out
  (`tests/proofs/z3_scope.py`); without it the encoding would prove a cell the
  explorer breaks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import z3

from model import (
    ENVIRONMENTS,
    ENVIRONMENTS_BY_NAME,
    MOVES,
    OPTIONS,
    SCENARIOS,
    SCENARIOS_BY_NAME,
    VARIANTS,
    VARIANTS_BY_NAME,
    Config,
    Environment,
    Invariant,
    MoveKind,
)
from model.shapes import SHAPES
from proofs.engines.explore import explore
from proofs.engines.smt import encoding as encoding_module
from proofs.engines.smt import schema as schema_module
from proofs.engines.smt.bmc import Unrolling, _environment
from proofs.engines.smt.encoding import (
    BUILDERS,
    SUBJECT_MOVES,
    Encoding,
    SymState,
    _options,
    check_builders,
)
from proofs.engines.smt.reachset import Matcher
from proofs.engines.smt.schema import Axis, Family, Sort, Vars
from proofs.engines.smt.simulation import disagreements, reachable, view
from proofs.engines.smt.symbolic import FALSE, TRUE
from proofs.errors import InternalError, UnsupportedConfig
from tests.proofs.z3_scope import (
    ALL_MODELLED,
    UNMODELLED_MOVES,
    UNMODELLED_OPTIONS,
    modelled,
    refused,
)

ALL = ENVIRONMENTS_BY_NAME["all"]
#: Between them: a caller copy replacing the local context, the live local context, a
#: mirror snapshot, the model's own items; a mirror-diff and the three-way session.
_RICH = ("replacement-first", "cleanup-during-tool-push", "server-item-during-replacement")


def _rich_configs() -> list[Config]:
    """Every option the encoding models on (three-way keeps its inert reconnect)."""
    return [
        modelled(Config(VARIANTS_BY_NAME[variant], SCENARIOS_BY_NAME[scenario], ALL))
        for variant in ("lock3", "three-way")
        for scenario in _RICH
    ]


class _Logged(dict[str, Any]):
    def __init__(self, values: dict[str, Any]) -> None:
        super().__init__(values)
        self.used: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        self.used.add(key)
        return super().__getitem__(key)


def _coverage(enc: Encoding, limit: int = 120) -> dict[str, set[Family]]:
    """The families each reader touches over (up to `limit`) reachable states."""
    touched: dict[str, set[str]] = {"concrete": set(), "view": set(), "describe": set()}
    touched["matcher"] = set()
    solver = z3.Solver()
    assert solver.check() == z3.sat
    model = solver.model()
    symbolic = enc.state("@cover")
    for count, state in enumerate(reachable(enc.config)):
        if count >= limit:
            break
        values = enc.concrete(state, touched["concrete"])
        logged = _Logged(values)
        view(enc, logged)
        touched["view"] |= logged.used
        constants = {name: enc.constant(name, value) for name, value in values.items()}
        enc.describe(model, SymState(enc, constants, touched["describe"]))
        symbolic.reads = touched["matcher"]
        Matcher(enc, symbolic).matches(values)
        symbolic.reads = None
    return {reader: enc.schema.families_in(names) for reader, names in touched.items()}


def _uncovered(encodings: list[Encoding]) -> dict[str, list[str]]:
    """Per reader: families it should read and does not, and families marked as
    skipped that it reads after all."""
    seen: dict[str, set[Family]] = {}
    for enc in encodings:
        for reader, found in _coverage(enc).items():
            seen.setdefault(reader, set()).update(found)
    families = encodings[0].schema.families
    report: dict[str, list[str]] = {}
    for reader, found in seen.items():
        expected = {f for f in families if reader not in f.skip}
        problems = [f"{f.attr} not handled" for f in families if f in expected - found]
        problems += [f"{f.attr} read although marked skipped" for f in found - expected]
        if problems:
            report[reader] = problems
    return report


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_initial_sets_every_declared_variable(scenario: Any) -> None:
    for variant in ("lock5", "three-way"):
        enc = Encoding(modelled(Config(VARIANTS_BY_NAME[variant], scenario, ALL)))
        values = enc.initial().vals
        assert set(values) == set(enc.schema.sorts)
        names = [name for family in enc.schema.families for name in enc.schema.names(family)]
        assert sorted(names) == sorted(enc.schema.sorts)


def test_every_family_is_produced_read_and_constrained_or_says_why_not() -> None:
    encodings = [Encoding(config, specialize=True, symmetry=False) for config in _rich_configs()]
    assert _uncovered(encodings) == {}


_EXTRA = Family("extra.{item}", (Axis.ITEM,), Sort.BOOL, "a family nobody handles")
_EXTRA.attr = "extra"


def test_a_family_added_without_handlers_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schema_module, "LAYOUT", (*schema_module.LAYOUT, _EXTRA))
    encodings = [Encoding(config, specialize=True, symmetry=False) for config in _rich_configs()]
    enc = encodings[0]
    assert "extra.0" in enc.schema.sorts
    # initial has no handler: it says so
    with pytest.raises(InternalError, match=r"extra\.0"):
        enc.initial()
    # given one there, every other reader is reported
    original = Encoding.initial

    def initial(self: Encoding) -> SymState:
        s = SymState(self, {})
        for name in self.schema.names(_EXTRA):
            s.vals[name] = FALSE
        monkeypatch.setattr(schema_module, "LAYOUT", schema_module.LAYOUT[:-1])
        try:
            s.vals.update(original(Encoding(self.config, True, False)).vals)
        finally:
            monkeypatch.setattr(schema_module, "LAYOUT", (*schema_module.LAYOUT, _EXTRA))
        return s

    monkeypatch.setattr(Encoding, "initial", initial)
    report = _uncovered(encodings)
    assert report == {
        reader: [f"{_EXTRA.attr} not handled"]
        for reader in ("concrete", "view", "describe", "matcher")
    }


def test_the_layout_holds_each_family_of_vars_once() -> None:
    declared = [f for f in vars(Vars).values() if isinstance(f, Family)]
    laid = list(schema_module.families())
    assert len(laid) == len(set(map(id, laid))) == len(declared)
    for family in laid:
        assert family.meaning and family.attr
        assert set(family.skip) <= set(schema_module.READERS)


def test_a_typo_in_a_variable_is_an_error() -> None:
    enc = Encoding(_rich_configs()[0])
    s = enc.cur.copy()
    with pytest.raises(InternalError):
        s.ghost["ackd", 0] = z3.BoolVal(True)
    with pytest.raises(InternalError):
        s.anchor[(0, schema_module.KINDS[1], 0)] = enc.refs.val(None)  # deletes have none


# -- dispatch over move kinds and options -------------------------------------------------


def test_every_move_kind_has_a_builder_and_a_subject_that_fits_the_move_table() -> None:
    check_builders()
    assert set(BUILDERS) == set(MoveKind)
    for kind in SUBJECT_MOVES["task"]:
        assert MOVES[kind].names_task and not MOVES[kind].names_item, kind
    for kind in SUBJECT_MOVES["op"]:
        assert MOVES[kind].names_task and MOVES[kind].names_item, kind
    for kind in SUBJECT_MOVES["pool"]:
        assert MOVES[kind].names_item, kind
    made: set[MoveKind] = set()
    for config in _rich_configs():
        made |= {inst.move.kind for inst in Encoding(config).instances}
    # the connection's moves only under a reconnect, which the guard refuses
    assert UNMODELLED_MOVES and made == set(MoveKind) - UNMODELLED_MOVES


def test_a_missing_builder_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    for kind in MoveKind:
        partial = {k: v for k, v in BUILDERS.items() if k is not kind}
        with pytest.raises(InternalError, match=kind.value):
            check_builders(partial)
        unplaced = {
            name: tuple(k for k in kinds if k is not kind) for name, kinds in SUBJECT_MOVES.items()
        }
        with pytest.raises(InternalError, match=kind.value):
            check_builders(BUILDERS, unplaced)
    monkeypatch.delitem(encoding_module.BUILDERS, MoveKind.LEARN)
    with pytest.raises(InternalError, match="learn"):
        Encoding(_rich_configs()[2])


def _kinds(enc: Encoding) -> set[MoveKind]:
    return {inst.move.kind for inst in enc.instances}


def _option_problems() -> list[str]:
    """Where the encoding's moves and the move table disagree on what an option enables."""
    configs = _rich_configs()
    off = [_kinds(Encoding(Config(c.variant, c.scenario, Environment()), True)) for c in configs]
    problems = []
    for spec in OPTIONS:
        kinds = {kind for kind, move in MOVES.items() if move.option == spec.name}
        enabled: set[MoveKind] = set()
        for config, without in zip(configs, off, strict=True):
            alone = Config(config.variant, config.scenario, Environment.of([spec.name]))
            if refused(alone):
                continue  # `test_the_guard_refuses_exactly_what_the_encoding_leaves_out`
            on = _kinds(Encoding(alone, True))
            if kinds & without:
                problems.append(f"{config.scenario.name}: {kinds & without} without {spec.name}")
            if on - without - kinds:
                problems.append(f"{config.scenario.name}: {spec.name} enables {on - without}")
            enabled |= on - without
        # an unmodelled option is inert wherever the guard lets it through
        if enabled != (set() if spec.name in UNMODELLED_OPTIONS else kinds):
            problems.append(f"{spec.name} enables {enabled}, the table says {kinds}")
    return problems


def test_each_option_enables_exactly_the_moves_the_table_gives_it() -> None:
    assert _option_problems() == []


def test_an_encoding_that_ignores_an_option_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    original = Encoding._enabled

    def enabled(self: Encoding, kind: MoveKind) -> z3.BoolRef:
        return TRUE if kind is MoveKind.TIMEOUT else original(self, kind)

    monkeypatch.setattr(Encoding, "_enabled", enabled)
    assert any("timeout" in problem for problem in _option_problems())


def test_environments_go_through_the_z3_flags_and_back_without_losing_an_option() -> None:
    for environment in (*ENVIRONMENTS, *(Environment.of([s.name]) for s in OPTIONS)):
        flags = _options(environment)
        assert list(flags) == [spec.name for spec in OPTIONS]
        assert _environment(flags) == environment
    flags = _options(ALL)
    del flags["timeouts"]
    with pytest.raises(InternalError, match="timeouts"):
        _environment(flags)
    with pytest.raises(KeyError):
        _environment({**_options(ALL), "latency": True})


def _all_names() -> Iterator[str]:
    yield from (spec.name for spec in OPTIONS)


def test_an_encoding_reads_options_by_name_only_from_the_table() -> None:
    enc = Encoding(_rich_configs()[2])
    assert set(dict.keys(enc.env)) == set(_all_names())
    with pytest.raises(KeyError):
        enc.env["latency"]


# -- the walk compares what later steps read ----------------------------------------------


def _first_disagreement(config: Config) -> str | None:
    enc = Encoding(config, specialize=True, symmetry=False)
    return next(disagreements(config, enc), None)


_THREE_WAY_REPLACEMENT = Config(
    VARIANTS_BY_NAME["three-way"], SCENARIOS_BY_NAME["replacement-first"], ALL
)


def test_the_walk_catches_a_step_that_writes_a_wrong_base(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _first_disagreement(_THREE_WAY_REPLACEMENT) is None

    def set_base(self: Encoding, s: SymState, task: int, seen: Any) -> None:
        for i, dropped in enumerate(self._drops(task)):
            s.base[task, i] = dropped  # forgets what the request was built from

    monkeypatch.setattr(Encoding, "_set_base", set_base)
    found = _first_disagreement(_THREE_WAY_REPLACEMENT)
    assert found is not None and "'base'" in found


def test_the_walk_catches_a_wrong_counter(monkeypatch: pytest.MonkeyPatch) -> None:
    original = Encoding._answer

    def answer(self: Encoding, s: SymState, slot: Any, rejected: z3.BoolRef) -> None:
        before = s.abatch[()]
        original(self, s, slot, rejected)
        s.abatch[()] = before  # a batch never leaves the op FIFO

    monkeypatch.setattr(Encoding, "_answer", answer)
    found = _first_disagreement(_THREE_WAY_REPLACEMENT)
    assert found is not None and "batches_in_flight" in found


# -- the entry guard ----------------------------------------------------------------------


def test_the_guard_refuses_exactly_what_the_encoding_leaves_out() -> None:
    """Every (variant, shape) of the catalog under every environment column: refused
    (one line, naming the explorer) exactly when `z3_scope.refused` says."""
    scenario = SCENARIOS_BY_NAME["overlapping-push"]
    wrong, refusals = [], 0
    for variant in VARIANTS:
        for shape in SHAPES:
            if shape.name not in variant.shapes:
                continue
            for environment in ENVIRONMENTS:
                config = Config(variant, scenario, environment, shape=shape)
                try:
                    Encoding(config)
                    said = False
                except UnsupportedConfig as error:
                    said = "\n" not in str(error) and "use the explorer" in str(error)
                    refusals += 1
                if said != refused(config):
                    wrong.append((variant.name, shape.name, environment.name))
    assert wrong == [] and refusals > 0
    # the walks' configs are all let through, reconnect left on where it is inert
    assert all(not refused(config) for config in _rich_configs())
    assert ALL_MODELLED != ALL and _rich_configs()[-1].environment == ALL


def test_the_guard_refuses_a_reconnect_given_per_query() -> None:
    """verify passes environments to one encoding: the guard stands there too."""
    enc = Encoding(_rich_configs()[0])
    for ask in (enc.env_literals, enc.env_key):
        with pytest.raises(UnsupportedConfig, match="reconnects"):
            ask(ALL)


def test_without_the_guard_the_encoding_would_prove_a_cell_the_explorer_breaks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """lock5's overlapping push under timeouts and reconnects: the explorer loses an
    item at depth 5 (a reconnect re-sends a timed-out push's create after the
    rebuild); an encoding with no connection moves finds nothing that deep."""
    config = Config(
        VARIANTS_BY_NAME["lock5"],
        SCENARIOS_BY_NAME["overlapping-push"],
        Environment.of(["timeouts", "reconnects"]),
    )
    invariant = Invariant.AGREEMENT_AT_REST
    trace = explore(config, (invariant,)).finding(invariant).trace
    assert trace is not None and any(move.kind in UNMODELLED_MOVES for move in trace.moves)
    depth = trace.depth
    with pytest.raises(UnsupportedConfig, match="reconnects"):
        Encoding(config, specialize=True)
    monkeypatch.setattr(encoding_module, "refuse_unmodelled", lambda config: None)
    unrolling = Unrolling(Encoding(config, specialize=True))
    for _ in range(depth):
        unrolling.extend()
    solver = unrolling.solver
    assert (
        solver.check(z3.Or(*(unrolling.enc.bad(s, invariant) for s in unrolling.states)))
        == z3.unsat
    )
