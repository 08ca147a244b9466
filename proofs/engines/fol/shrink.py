"""A smaller certificate: the part of an inductive invariant a proof needs, with the sorts
unbounded.

Every conjunct a certificate carries is one more consecution query per action that can
change it, and one more premise in every other query. Inference already shrinks its
result to a core on a finite instance; here conjuncts are dropped one at a time, with
the sorts unbounded (what the certificate's check uses), while the rest stays inductive.
(`closure=True` first takes the closure of the fixed structure and safety under each
action's unsat core with the sorts unbounded, as `infer.core` does on the finite
instance; on a six-site three-way cell that one step took minutes, so it is off by
default.) What is left still holds the fixed structure and safety, so `certificate.check`
accepts it, and it is a proof on its own: nothing here is trusted, the check decides.
"""

from __future__ import annotations

from collections.abc import Sequence

from proofs.engines.fol.infer import core
from proofs.engines.fol.problem import SAFETY, Problem, fixed_conjuncts
from proofs.engines.fol.queries import ActionQueries, all_queries
from proofs.engines.fol.system import Cell, unbounded_sorts
from proofs.engines.fol.vocab import Clause


def inductive(invariant: Sequence[Clause], queries: Sequence[ActionQueries]) -> bool:
    """Whether no action takes a state of `invariant` to one breaking some conjunct."""
    return all(q.breaks(invariant, invariant) is None for q in queries)


def minimal(
    cell: Cell, invariant: Sequence[Clause], timeout_ms: int = 60_000, closure: bool = False
) -> tuple[Clause, ...]:
    """A subset of the inductive `invariant` that holds the fixed structure and safety and
    is inductive with the sorts unbounded: each conjunct is tried once, largest first
    (they cost the most per query), and goes when the rest stays inductive without it."""
    problem = Problem(cell, unbounded_sorts())
    queries = all_queries(problem, timeout_ms)
    keep = [*fixed_conjuncts(cell), SAFETY]
    if not inductive(invariant, queries):
        raise AssertionError("only an inductive invariant can be shrunk")
    current = list(core(invariant, keep, queries)) if closure else list(invariant)
    protected = set(keep)
    for clause in sorted(current, key=lambda c: (-len(c.literals), c.text())):
        if clause in protected:
            continue
        trial = [c for c in current if c != clause]
        if inductive(trial, queries):
            current = trial
    return tuple(current)
