"""A smaller certificate: the part of an inductive invariant a proof needs, with the sorts
unbounded.

Every conjunct a certificate carries is one more consecution query per action that can
change it, and one more premise in every other query. Inference already shrinks its
result to a core on a finite instance; here the same closure is taken with the sorts
unbounded (what the certificate's check uses), and then conjuncts are dropped one at a
time while the rest stays inductive. What is left still holds the fixed structure and
safety, so `certificate.check` accepts it, and it is a proof on its own: nothing here is
trusted, the check decides.
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
    cell: Cell, invariant: Sequence[Clause], timeout_ms: int = 60_000
) -> tuple[Clause, ...]:
    """A subset of the inductive `invariant` that holds the fixed structure and safety, is
    inductive with the sorts unbounded, and loses that when any one more conjunct goes
    (largest conjuncts are tried first: they cost the most per query)."""
    problem = Problem(cell, unbounded_sorts())
    queries = all_queries(problem, timeout_ms)
    keep = [*fixed_conjuncts(cell), SAFETY]
    if not inductive(invariant, queries):
        raise AssertionError("only an inductive invariant can be shrunk")
    current = list(core(invariant, keep, queries))
    protected = set(keep)
    for clause in sorted(current, key=lambda c: (-len(c.literals), c.text())):
        if clause in protected or clause not in current:
            continue
        trial = [c for c in current if c != clause]
        if inductive(trial, queries):
            current = list(core(trial, keep, queries))
    return tuple(current)
