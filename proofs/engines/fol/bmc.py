"""A bounded search over the first-order system itself: a run from an initial state to a
state that breaks a clause, on a finite instance.

A counterexample to induction starts from a state that satisfies the invariant but
need not be reachable. When a mutant breaks the invariant's consecution, this search
shows the break is real: it finds a run of the mutant's first-order system, from an
initial state, whose last state breaks the clause (a model of a finite instance is a
run for that size, so it is a real run of the system).
"""

from __future__ import annotations

import z3
from attrs import frozen

from proofs.engines.fol.problem import Problem
from proofs.engines.fol.solve import check, read, solver
from proofs.engines.fol.vocab import Clause, Structure


@frozen
class Run:
    """States from an initial one, and the action taken between each two."""

    states: tuple[Structure, ...]
    actions: tuple[str, ...]

    @property
    def depth(self) -> int:
        return len(self.actions)


def run_to(problem: Problem, target: Clause, depth: int, timeout_ms: int = 60_000) -> Run | None:
    """The shortest run (at most `depth` actions) whose last state breaks `target`."""
    vocabularies = [problem.pre] + [problem.symbols(f"@{k}") for k in range(1, depth + 1)]
    s = solver(timeout_ms, problem.sorts.ctx)
    s.add(*problem.axioms(problem.pre), *problem.init(problem.pre))
    choices: list[list[z3.BoolRef]] = []
    for k in range(depth + 1):
        s.push()
        s.add(z3.Not(problem.clause(target, vocabularies[k])))
        if check(s):
            found = _read(problem, s.model(), vocabularies[: k + 1], choices)
            s.pop()
            return found
        s.pop()
        if k == depth:
            break
        row = []
        for n, action in enumerate(problem.actions):
            chosen = z3.Bool(f"took!{k}!{n}", problem.sorts.ctx)
            step = problem.step(action, vocabularies[k], vocabularies[k + 1], f"r{k}.{n}")
            s.add(z3.Implies(chosen, z3.And(*step)))
            row.append(chosen)
        s.add(z3.Or(*row))
        choices.append(row)
    return None


def _read(
    problem: Problem,
    model: z3.ModelRef,
    vocabularies: list[dict[str, object]],
    choices: list[list[z3.BoolRef]],
) -> Run:
    states = tuple(read(problem, model, rels) for rels in vocabularies)
    names = []
    for row in choices[: len(vocabularies) - 1]:
        taken = [n for n, chosen in enumerate(row) if z3.is_true(model.eval(chosen))]
        names.append(problem.actions[taken[0]].name)
    return Run(states, tuple(names))
