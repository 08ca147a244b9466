"""One incremental z3 solver per action, built once per cell and reused for every query.

The solver holds the static axioms and the action's transition formula once. Each
conjunct ever asked about is added once, behind an indicator literal (`on -> c` over
the pre state, `off -> not c` over the post state), so a query is a `check` under
assumptions: nothing is rebuilt between Houdini's rounds or the final per-(action,
conjunct) checks, and z3 keeps what it learned.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import z3

from proofs.engines.fol.problem import Problem
from proofs.engines.fol.solve import check, post_symbols, read, solver
from proofs.engines.fol.system import Action
from proofs.engines.fol.vocab import Clause, Structure, names


class ActionQueries:
    """Queries about one action of one problem: does some state of a conjunction have a
    successor breaking one of some conjuncts; is the action enabled at all."""

    def __init__(self, problem: Problem, action: Action, index: int, timeout_ms: int) -> None:
        self.problem = problem
        self.action = action
        self.tag = f"q{index}"
        self.pre = problem.pre
        self.changed = problem.changed(action)
        self.post = post_symbols(problem, action, self.pre, f"'{index}")
        self.solver = solver(timeout_ms, problem.sorts.ctx)
        self.solver.add(*problem.pre_axioms(), *problem.step(action, self.pre, self.post, self.tag))
        self._on: dict[Clause, Any] = {}
        self._off: dict[Clause, Any] = {}
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
            on = z3.Bool(f"on!{self.tag}!{len(self._on)}", self.problem.sorts.ctx)
            self.solver.add(z3.Implies(on, self.problem.pre_clause(clause)))
            self._on[clause] = on
        return self._on[clause]

    def _negation(self, clause: Clause) -> Any:
        if clause not in self._off:
            off = z3.Bool(f"off!{self.tag}!{len(self._off)}", self.problem.sorts.ctx)
            self.solver.add(z3.Implies(off, z3.Not(self.problem.clause(clause, self.post))))
            self._off[clause] = off
        return self._off[clause]

    def enabled(self, invariant: Sequence[Clause]) -> bool:
        """Some state of `invariant` lets the action run (the proof is not vacuous for it)."""
        self.queries += 1
        return check(self.solver, *(self._indicator(c) for c in invariant))

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
        return self._check(*(self._indicator(c) for c in invariant), self._negation(target))

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
    """One query object per action of the problem."""
    return [ActionQueries(problem, a, n, timeout_ms) for n, a in enumerate(problem.actions)]
