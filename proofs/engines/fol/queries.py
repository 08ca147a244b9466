"""One incremental z3 solver per action, built once per cell and reused for every query.

The solver holds the static axioms and the action's transition formula once. Each
conjunct ever asked about is added once, behind an indicator literal (`on -> c` over
the pre state, `off -> not c` over the post state), so a query is a `check` under
assumptions: nothing is rebuilt between Houdini's rounds or the final per-(action,
conjunct) checks, and z3 keeps what it learned. The guarded formulas are built once per
problem and shared by the actions' solvers (`Shared`); a whole invariant is one more
literal over its conjuncts' indicators, so a check passes one assumption for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import z3

from proofs.engines.fol.problem import Problem
from proofs.engines.fol.solve import check, post_symbols, read, solver
from proofs.engines.fol.system import Action
from proofs.engines.fol.vocab import Clause, Structure, names


class Shared:
    """The guarded formulas every action's solver of one problem asks with, built once:
    a conjunct over the pre state (`on -> c`), one over a post vocabulary (`off -> not
    c`), a conjunction of conjuncts (`all -> on_1 and ...`). Each action's solver asserts
    the ones it uses. A literal means the same formula in every solver, so sharing it
    changes no query; it saves building the same terms once per action."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self._on: dict[Clause, tuple[Any, Any]] = {}
        self._off: dict[tuple[Clause, tuple[str, ...]], tuple[Any, Any]] = {}
        self._all: dict[tuple[Clause, ...], tuple[Any, Any]] = {}

    def on(self, clause: Clause) -> tuple[Any, Any]:
        """The indicator of `clause` over the pre state, and its implication."""
        if clause not in self._on:
            lit = z3.Bool(f"on!{len(self._on)}", self.problem.sorts.ctx)
            self._on[clause] = (lit, z3.Implies(lit, self.problem.pre_clause(clause)))
        return self._on[clause]

    def off(self, clause: Clause, post: Mapping[str, Any]) -> tuple[Any, Any]:
        """The literal of "`clause` fails over `post`", and its implication; keyed by the
        symbols the clause reads, so actions changing the same of them share it."""
        key = (clause, tuple(post[n].name() for n in sorted(names(clause) & post.keys())))
        if key not in self._off:
            lit = z3.Bool(f"off!{len(self._off)}", self.problem.sorts.ctx)
            self._off[key] = (lit, z3.Implies(lit, z3.Not(self.problem.clause(clause, post))))
        return self._off[key]

    def all(self, invariant: tuple[Clause, ...]) -> tuple[Any, Any]:
        """One literal for the whole conjunction, over the indicators of its conjuncts."""
        if invariant not in self._all:
            lit = z3.Bool(f"all!{len(self._all)}", self.problem.sorts.ctx)
            on = [self.on(c)[0] for c in invariant]
            self._all[invariant] = (lit, z3.Implies(lit, z3.And(on) if len(on) != 1 else on[0]))
        return self._all[invariant]


class ActionQueries:
    """Queries about one action of one problem: does some state of a conjunction have a
    successor breaking one of some conjuncts; is the action enabled at all."""

    def __init__(
        self,
        problem: Problem,
        action: Action,
        index: int,
        timeout_ms: int,
        shared: Shared | None = None,
    ) -> None:
        self.problem = problem
        self.action = action
        self.tag = f"q{index}"
        self.pre = problem.pre
        self.changed = problem.changed(action)
        # one post vocabulary name for every action: each action has a solver of its own,
        # and a shared name lets actions changing the same relations share post terms
        self.post = post_symbols(problem, action, self.pre, "'")
        self.solver = solver(timeout_ms, problem.sorts.ctx)
        self.solver.add(*problem.pre_axioms(), *problem.step(action, self.pre, self.post, self.tag))
        self.shared = Shared(problem) if shared is None else shared
        self._on: dict[Clause, Any] = {}
        self._off: dict[Clause, Any] = {}
        self._whole: dict[tuple[Clause, ...], Any] = {}
        #: Extra conditions on an enabling state, behind a literal each (`enabled`).
        self._where: dict[int, tuple[Any, Any]] = {}
        self._goals = 0
        self.queries = 0
        #: Consecution already shown: a target, and the premises it was shown under. It
        #: holds under any superset of them, so asking again is skipped (`breaks`).
        self._shown: dict[Clause, frozenset[Clause]] = {}
        self.skipped = 0

    def touches(self, clause: Clause) -> bool:
        """Whether the action may change the clause's truth (it changes a relation it reads)."""
        return bool(names(clause) & self.changed)

    def _indicator(self, clause: Clause) -> Any:
        if clause not in self._on:
            on, implication = self.shared.on(clause)
            self.solver.add(implication)
            self._on[clause] = on
        return self._on[clause]

    def _negation(self, clause: Clause) -> Any:
        if clause not in self._off:
            off, implication = self.shared.off(clause, self.post)
            self.solver.add(implication)
            self._off[clause] = off
        return self._off[clause]

    def _premise(self, invariant: Sequence[Clause]) -> Any:
        """One literal for "the pre state satisfies every conjunct of `invariant`": a check
        under it is the check under each conjunct's indicator, with one assumption to pass
        instead of one per conjunct (z3's Python side casts each one on every check)."""
        key = tuple(invariant)
        if key not in self._whole:
            for c in invariant:
                self._indicator(c)
            whole, implication = self.shared.all(key)
            self.solver.add(implication)
            self._whole[key] = whole
        return self._whole[key]

    def enabled(self, invariant: Sequence[Clause], where: Any = None) -> bool:
        """Some state of `invariant` lets the action run (the proof is not vacuous for it);
        with `where` (a formula over the pre state), some such state satisfying it too."""
        self.queries += 1
        if where is None:
            return check(self.solver, self._premise(invariant))
        key = where.get_id()
        if key not in self._where:
            lit = z3.Bool(f"where!{self.tag}!{len(self._where)}", self.problem.sorts.ctx)
            self.solver.add(z3.Implies(lit, where))
            self._where[key] = (lit, where)
        return check(self.solver, self._premise(invariant), self._where[key][0])

    def breaks(
        self, invariant: Sequence[Clause], targets: Sequence[Clause]
    ) -> tuple[Structure, Structure, dict[str, str]] | None:
        """A pre state of `invariant` whose successor breaks some of `targets`, as two
        structures and the action's parameters; None when there is none."""
        premises = frozenset(invariant)
        touched = [c for c in targets if self.touches(c) and not self._known(c, premises)]
        if not touched:
            return None
        assumptions = [self._indicator(c) for c in invariant]
        if len(touched) == 1:
            found = self._check(*assumptions, self._negation(touched[0]))
        else:
            # a fresh goal literal for "one of these breaks", over the cached negations
            self._goals += 1
            goal = z3.Bool(f"goal!{self.tag}!{self._goals}", self.problem.sorts.ctx)
            self.solver.add(z3.Implies(goal, z3.Or(*(self._negation(c) for c in touched))))
            found = self._check(*assumptions, goal)
        if found is None:
            self._shown.update((c, premises) for c in touched)
        return found

    def _known(self, target: Clause, premises: frozenset[Clause]) -> bool:
        """Consecution of `target` was shown under a subset of `premises` (so it holds)."""
        shown = self._shown.get(target)
        if shown is not None and shown <= premises:
            self.skipped += 1
            return True
        return False

    def premises(self, invariant: Sequence[Clause], targets: Sequence[Clause]) -> set[Clause]:
        """Conjuncts of `invariant` whose pre-state truth suffices for the action to keep all
        of `targets` (an unsat core; the invariant must already be inductive)."""
        touched = [c for c in targets if self.touches(c)]
        if not touched:
            return set()
        by_literal = {self._indicator(c): c for c in invariant}
        self._goals += 1
        goal = z3.Bool(f"goal!{self.tag}!{self._goals}", self.problem.sorts.ctx)
        self.solver.add(z3.Implies(goal, z3.Or(*(self._negation(c) for c in touched))))
        self.queries += 1
        if check(self.solver, *by_literal, goal):
            raise AssertionError(f"{self.action.name} breaks an invariant said to be inductive")
        core = {str(x) for x in self.solver.unsat_core()}
        return {c for lit, c in by_literal.items() if str(lit) in core}

    def breaks_one(
        self, invariant: Sequence[Clause], target: Clause
    ) -> tuple[Structure, Structure, dict[str, str]] | None:
        """Consecution of one conjunct: the per-(action, conjunct) check."""
        if not self.touches(target):
            return None
        return self._check(self._premise(invariant), self._negation(target))

    def _check(self, *assumptions: Any) -> tuple[Structure, Structure, dict[str, str]] | None:
        self.queries += 1
        if not check(self.solver, *assumptions):
            return None
        model = self.solver.model()
        return (
            read(self.problem, model, self.pre),
            read(self.problem, model, self.post),
            self.params(model),
        )

    def params(self, model: Any) -> dict[str, str]:
        """The action's parameters in a model, named as `read` names the elements."""
        from proofs.engines.fol.solve import element

        sorts = self.problem.sorts
        return {
            name: element(self.problem, model, z3.Const(f"{name}@{self.tag}", sorts.of(sort)), sort)
            for name, sort in self.action.params
        }


class InitQueries:
    """Initiation: does some initial state break a conjunct."""

    def __init__(self, problem: Problem, timeout_ms: int) -> None:
        self.problem = problem
        self.solver = solver(timeout_ms, problem.sorts.ctx)
        self.solver.add(*problem.pre_axioms(), *problem.init(problem.pre))
        self._off: dict[Clause, Any] = {}
        self.queries = 0

    def breaks(self, clause: Clause) -> Structure | None:
        """An initial state that breaks `clause`, or None."""
        if clause not in self._off:
            off = z3.Bool(f"init!{len(self._off)}", self.problem.sorts.ctx)
            self.solver.add(z3.Implies(off, z3.Not(self.problem.pre_clause(clause))))
            self._off[clause] = off
        self.queries += 1
        if not check(self.solver, self._off[clause]):
            return None
        return read(self.problem, self.solver.model(), self.problem.pre)


def all_queries(problem: Problem, timeout_ms: int) -> list[ActionQueries]:
    """One query object per action of the problem, sharing their guarded formulas."""
    shared = Shared(problem)
    return [ActionQueries(problem, a, n, timeout_ms, shared) for n, a in enumerate(problem.actions)]
