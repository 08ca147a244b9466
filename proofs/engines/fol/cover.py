"""One certificate for several columns: when one first-order system contains another's.

Two cells that differ only in environment options (three-way under `base` and under
every option the actions read, say) are two transition systems. `contained(column,
wider)` checks on the z3 terms, with no solver, that every action of the column is an
action of the wider cell with the same parameters, guard and updates; that the wider
cell's actions leave the relations the column lacks (the model's `pool`, `created`,
`learned`, `evm`) alone; and that the wider cell's axioms and initial states are the
column's with those relations empty. Then every run of the column, with those
relations empty, is a run of the wider cell, so an inductive invariant of the wider
cell that implies safety holds on every reachable state of the column: one check of
the wider certificate proves the column. An option that changes a shared action,
rather than only adding actions, makes `contained` refuse (the `copy-first` mutant
does), and the column keeps its own certificate's check.

Enabledness (the proof is not vacuous for an action) is asked in the wider cell's
check under "the relations the column lacks are empty" (`proving.check_each`'s
`where`): a state found there is a state of the column too, so an action enabled in
it is enabled in the column; an action enabled only with the model's items present
is listed as disabled for the columns without them.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import z3

from model import OPTIONS_BY_NAME
from proofs.engines.fol.actions import actions
from proofs.engines.fol.modelled import OPTIONS_MODELLED, coverage
from proofs.engines.fol.problem import Problem
from proofs.engines.fol.proving import (
    PROVED,
    UNKNOWN,
    Outcome,
    assumptions,
    check_each,
    own_certificate,
    scope,
)
from proofs.engines.fol.queries import InitQueries, all_queries
from proofs.engines.fol.system import Cell, Run, relations, unbounded_sorts
from proofs.engines.fol.terms import Memo, alpha, by_skeleton, short, skeleton
from proofs.errors import Unsettled


def widest(cell: Cell) -> Cell:
    """The cell with every option the first-order actions read turned on."""
    on = {OPTIONS_BY_NAME[name].attribute: True for name in OPTIONS_MODELLED}
    return attrs.evolve(cell, environment=attrs.evolve(cell.environment, **on))


def extras(column: Cell, wider: Cell) -> tuple[str, ...]:
    """The relations of the wider cell's vocabulary the column's lacks."""
    own = {r.name for r in relations(column)}
    return tuple(r.name for r in relations(wider) if r.name not in own)


def contained(column: Cell, wider: Cell) -> str:
    """Why the column's first-order system is not the wider one's with fewer actions and
    the missing relations empty, in one line; "" when it is (checked on the formulas)."""
    return containments([column], wider)[0]


def containments(columns: Sequence[Cell], wider: Cell, problem: Problem | None = None) -> list[str]:
    """`contained` for each column, building the wider cell's formulas once (on
    `problem`, the wider cell's, when given: its check then reuses them)."""
    large = _Wider(Problem(wider, unbounded_sorts()) if problem is None else problem)
    return [_contained(column, large) for column in columns]


class _Wider:
    """The wider cell's formulas, each built once for every column compared with it."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.actions = {a.name: a for a in problem.actions}
        self._runs: dict[str, tuple[Run, dict[str, Any]]] = {}
        self._values: dict[tuple[str, str], Any] = {}
        self.axioms = problem.axioms(problem.pre)
        self.init = problem.init(problem.pre)
        self.memo = Memo()
        self._args: dict[tuple[str, ...], list[Any]] = {}

    def run(self, name: str) -> tuple[Run, dict[str, Any]]:
        """The action's effect, with its parameters named as the check's queries name
        them (`queries.all_queries`: `q` and the action's index), so the check on the
        same problem reuses it."""
        if name not in self._runs:
            action = self.actions[name]
            tag = f"q{self.problem.actions.index(action)}"
            sorts = self.problem.sorts
            params = {n: z3.Const(f"{n}@{tag}", sorts.of(s)) for n, s in action.params}
            self._runs[name] = (self.problem.effect(action, tag), params)
        return self._runs[name]

    def args(self, kinds: Sequence[str]) -> list[Any]:
        """Fixed arguments to apply an update to, made once per signature."""
        if tuple(kinds) not in self._args:
            sorts = self.problem.sorts
            self._args[tuple(kinds)] = [
                z3.Const(f"x{n}@cover", sorts.of(kind)) for n, kind in enumerate(kinds)
            ]
        return self._args[tuple(kinds)]

    def value(self, name: str, relation: str) -> Any:
        """The action's update of `relation` at fixed arguments."""
        if (name, relation) not in self._values:
            run = self.run(name)[0]
            rel = self.problem.by_name[relation]
            self._values[(name, relation)] = run[relation](*self.args(rel.sorts))
        return self._values[(name, relation)]


def _contained(column: Cell, large: _Wider) -> str:
    wider = large.problem.cell
    if column == wider:
        return ""
    same = ("variant", "sites", "shape", "mutant", "ordered")
    differs = [f for f in same if getattr(column, f) != getattr(wider, f)]
    if differs:
        return f"the cells differ in {differs[0]}"
    mine = set(column.environment.options) & OPTIONS_MODELLED
    if not mine <= set(wider.environment.options):
        return "the column has an option the wider cell lacks"
    for cell in (column, wider):
        if coverage(cell):
            return coverage(cell)
    small = Problem(column, large.problem.sorts)
    return _actions_differ(small, large) or _statics_differ(small, large)


def _actions_differ(small: Problem, large: _Wider) -> str:
    rels = large.problem.by_name
    for r in small.relations:
        if rels.get(r.name) != r:
            return f"relation {r.name} is not the wider cell's"
    for r in small.relations:
        if not small.pre[r.name].eq(large.problem.pre[r.name]):
            return f"relation {r.name} is another symbol in the wider cell"
    missing = [r for r in large.problem.relations if r.name not in small.by_name and not r.static]
    if len(large.actions) != len(large.problem.actions) or len(
        {a.name for a in small.actions}
    ) != len(small.actions):
        return "two actions share a name"
    sorts = small.sorts
    memo = large.memo
    for action in small.actions:
        other = large.actions.get(action.name)
        if other is None:
            return f"the wider cell has no action {action.name}"
        if other.params != action.params:
            return f"{action.name} has other parameters in the wider cell"
        wide, params = large.run(action.name)
        mine = action.effect(Run(dict(small.pre), sorts.true()), params)
        if not alpha(mine.guard, wide.guard, memo):
            return f"{action.name} has another guard in the wider cell"
        for r in small.relations:
            if r.static:
                continue
            if mine[r.name] is small.pre[r.name] and wide[r.name] is large.problem.pre[r.name]:
                continue  # both leave it alone (the same symbol, checked above)
            args = large.args(r.sorts)
            if not alpha(mine[r.name](*args), large.value(action.name, r.name), memo):
                return f"{action.name} updates {r.name} otherwise in the wider cell"
        for r in missing:
            if wide[r.name] is large.problem.pre[r.name]:
                continue
            args = large.args(r.sorts)
            unchanged = large.problem.pre[r.name](*args)
            if not alpha(large.value(action.name, r.name), unchanged, memo):
                return f"{action.name} changes {r.name} in the wider cell"
    return ""


def _statics_differ(small: Problem, large: _Wider) -> str:
    """The wider cell's axioms and initial conditions, with the missing relations empty,
    are among the column's (or true); the column's axioms are among the wider cell's, so
    a state of the wider cell with those relations empty is one of the column."""
    empty = [
        (large.problem.pre[r.name], z3.BoolVal(False, small.sorts.ctx))
        for r in large.problem.relations
        if r.name not in small.by_name
    ]
    memo = large.memo
    mine_axioms = small.axioms(small.pre)
    pairs = (
        ("axiom", mine_axioms, large.axioms),
        ("initial condition", small.init(small.pre), large.init),
    )
    for what, mine, wide in pairs:
        found = by_skeleton(mine)
        for formula in wide:
            if any(alpha(formula, m, memo) for m in found.get(skeleton(formula), mine)):
                continue
            if empty and z3.is_true(z3.simplify(z3.substitute_funs(formula, *empty))):
                continue
            return f"the wider cell's {what} {short(formula)} is not the column's"
    found = by_skeleton(large.axioms)
    for formula in mine_axioms:
        if not any(alpha(formula, w, memo) for w in found.get(skeleton(formula), large.axioms)):
            return f"the column's axiom {short(formula)} is not the wider cell's"
    return ""


def cover_words(key: str, missing: Sequence[str]) -> str:
    """How a covered cell's scope names the proof it rests on."""
    empty = f", with {', '.join(missing)} empty" if missing else ""
    return (
        f"proved by the check of certificate {key}, whose first-order system contains this "
        f"one's (each of its actions is one of the certificate's, same formula{empty})"
    )


def prove_covered(cells: Sequence[Cell], timeout_ms: int = 60_000) -> tuple[Outcome, ...]:
    """Invariant 1 for each cell from one check: the certificate of the widest cell
    (`widest`) proves every cell whose system it contains (`contained`), checked once;
    any other cell, or all when that check fails, falls back to its own committed
    certificate (`proving.own_certificate`), or is `unknown` saying why, naming as its
    `certificate` the one whose claim failed (its own, or else the widest one's), so the
    default `verify` flags it as a stale certificate rather than quietly keeping the
    bounded proof."""
    from proofs.engines.fol.certificate import committed, key

    if not cells:
        return ()
    wide = widest(cells[0])
    cover = next((c for c in cells if key(c) == key(wide)), wide)
    invariant = committed(cover)
    why: dict[int, str] = {}
    problem = Problem(cover, unbounded_sorts())
    reasons = containments(cells, cover, problem) if invariant is not None else []
    for n, _ in enumerate(cells):
        if invariant is None:
            why[n] = f"no certificate {key(cover)} to cover it"
        elif reasons[n]:
            why[n] = f"{key(cover)} does not cover it: {reasons[n]}"
    covered = [n for n in range(len(cells)) if n not in why]
    started = time.perf_counter()
    result = None
    if covered and invariant is not None:
        gaps = {name for n in covered for name in extras(cells[n], cover)}
        try:
            result = _check(problem, invariant, sorted(gaps), timeout_ms)
        except (AssertionError, Unsettled) as error:
            for n in covered:
                why[n] = f"{key(cover)} does not check: {error}"
        else:
            if result.breaks is not None:
                for n in covered:
                    why[n] = f"{key(cover)} no longer checks"
    seconds = time.perf_counter() - started
    sorts = unbounded_sorts()
    out: list[Outcome] = []
    for n, cell in enumerate(cells):
        if n in why:
            own = own_certificate(cell, timeout_ms)
            if own.status != PROVED:
                # the certificate whose claim failed: its own, or else the widest one,
                # which the repository relies on for this column (`verify` flags either)
                claimed = own.certificate or (key(cover) if invariant is not None else "")
                own = attrs.evolve(
                    own, status=UNKNOWN, reason=f"{own.reason}; {why[n]}", certificate=claimed
                )
            out.append(own)
            continue
        assert result is not None and invariant is not None
        missing = extras(cell, cover)
        disabled = result.disabled_where if missing else result.disabled
        mine = {a.name for a in actions(cell, sorts)}
        out.append(
            Outcome(
                cell=cell,
                status=PROVED,
                scope=scope(cell),
                assumptions=assumptions(cell),
                invariant=invariant,
                queries=result.queries,
                disabled=tuple(a for a in disabled if a in mine),
                seconds={"certificate": seconds},
                certificate=key(cover),
                checked_on=cover.environment.name,
                cover="" if cell == cover else cover_words(key(cover), missing),
            )
        )
    return tuple(out)


def _check(problem: Problem, invariant: Sequence[Any], gaps: Sequence[str], timeout_ms: int) -> Any:
    """The certificate's check on the cover, enabledness asked first with `gaps` empty."""
    from proofs.engines.fol.certificate import require_structure

    require_structure(problem.cell, invariant)
    where = _empty(problem, gaps) if gaps else None
    return check_each(
        problem,
        list(invariant),
        InitQueries(problem, timeout_ms),
        all_queries(problem, timeout_ms),
        where=where,
    )


def _empty(problem: Problem, names: Sequence[str]) -> Any:
    """Every relation of `names` is empty, over the pre state."""
    pre: Mapping[str, Any] = problem.pre
    s = problem.sorts
    parts = [
        s.forall_many(problem.by_name[n].sorts, lambda *xs, f=pre[n]: z3.Not(f(*xs))) for n in names
    ]
    return z3.And(*parts) if len(parts) > 1 else parts[0]
