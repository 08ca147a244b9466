"""Houdini: from candidate conjuncts to the largest inductive subset.

Candidates are the template instances true on every sampled reachable state. Each
round asks z3, per action, for a pre state satisfying every candidate whose post
state breaks one; the candidates false in that post state go, until no action
breaks any. What is left is inductive (over the sorts the problem is built on).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import z3

from proofs.engines.fol.problem import Problem
from proofs.engines.fol.solve import check, post_symbols, read, solver
from proofs.engines.fol.vocab import Clause, Structure, names


def initiation_filter(problem: Problem, clauses: Sequence[Clause], timeout_ms: int) -> list[Clause]:
    """Drop candidates some initial state breaks."""
    pre = problem.symbols("")
    live = list(clauses)
    s = solver(timeout_ms)
    s.add(*problem.axioms(pre), *problem.init(pre))
    switches = {c: z3.Bool(f"init!{k}") for k, c in enumerate(clauses)}
    s.add(z3.Or(*(z3.And(sw, z3.Not(problem.clause(c, pre))) for c, sw in switches.items())))
    while live:
        alive = set(live)
        if not check(s, *(sw if c in alive else z3.Not(sw) for c, sw in switches.items())):
            return live
        state = read(problem, s.model(), pre)
        live = [c for c in live if state.satisfies(c)]
    return live


def consecution_filter(
    problem: Problem,
    clauses: Sequence[Clause],
    timeout_ms: int,
    on_drop: Callable[[str, Clause, Structure, Structure], None] | None = None,
) -> list[Clause]:
    """The largest subset of `clauses` that every action preserves.

    One solver per action holds every candidate once, behind a switch; a round asks
    for a model with the live candidates' switches on, so nothing is rebuilt."""
    pre = problem.symbols("")
    live = list(clauses)
    solvers = []
    cached = {clause: problem.clause(clause, pre) for clause in clauses}
    for n, action in enumerate(problem.actions):
        post = post_symbols(problem, action, pre, f"'{n}")
        s = solver(timeout_ms)
        s.add(*problem.axioms(pre), *problem.step(action, pre, post, f"h{n}"))
        switches = {}
        broken = []
        changed = problem.changed(action)
        for k, clause in enumerate(clauses):
            switch = z3.Bool(f"on!{n}!{k}")
            switches[clause] = switch
            s.add(z3.Implies(switch, cached[clause]))
            # a clause over relations the action leaves alone is the same formula after it
            if names(clause) & changed:
                broken.append(z3.And(switch, z3.Not(problem.clause(clause, post))))
        if not broken:
            continue
        s.add(z3.Or(*broken))
        solvers.append((s, switches, post, action.name))
    stable = False
    while not stable:
        stable = True
        for s, switches, post, name in solvers:
            while live:
                alive = set(live)
                assumptions = [sw if c in alive else z3.Not(sw) for c, sw in switches.items()]
                if not check(s, *assumptions):
                    break
                state = read(problem, s.model(), post)
                before = len(live)
                if on_drop is not None:
                    earlier = read(problem, s.model(), pre)
                    for clause in live:
                        if not state.satisfies(clause):
                            on_drop(name, clause, earlier, state)
                live = [c for c in live if state.satisfies(c)]
                assert len(live) < before, "a model must break a candidate"
                stable = False
    return live
