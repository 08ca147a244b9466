"""The order lemma as a conjunct: invariant 1 and "the mirror is in creation order" for an
ordered cell, inferred from the order families and checked for every size.

`prove_ordered` is `proving.prove` with two more required conjuncts, the order structure
(`order_z3.FIXED`) and `order.MIRROR_BY_CREATION_SETTLED`, and the order families below
beside the library's. Where it proves, the mirror is in creation order in every state
(but for items whose delete is in flight), so every request taken from the local context
(which is in creation order) agrees with it in order, and the diff by membership is the
session's diff; where it does not, the CTI says which step breaks the lemma.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from proofs.engines.fol.certificate import committed
from proofs.engines.fol.data import Sample, config_of, mixes, structure
from proofs.engines.fol.infer import Inferred, core, infer, infer_on
from proofs.engines.fol.order import MIRROR_BY_CREATION_SETTLED, order_structure, reachable_born
from proofs.engines.fol.order_z3 import FIXED
from proofs.engines.fol.problem import SAFETY, Problem, fixed_conjuncts
from proofs.engines.fol.proving import check_each
from proofs.engines.fol.queries import InitQueries, all_queries
from proofs.engines.fol.system import Cell, FiniteSorts, unbounded_sorts
from proofs.engines.fol.templates import candidates
from proofs.engines.fol.vocab import Clause, Literal, Relation, lit, names, neg

__all__ = ["FAMILIES", "order_candidates", "prove_ordered"]

FAMILIES: dict[str, str] = {
    "order-row": "a task's request order is creation order, or agrees with the mirror, "
    "unless the task is at some point",
    "order-flight": "an item whose op is in flight is younger than (or, in its request, "
    "behind) every item of a view, unless that item has a delete in flight",
    "order-made": "what has been made: a view's or a slot's items; made items older than the "
    "others",
}

_SLOTS = ("tsc", "evc", "cfl", "pc")


def order_candidates(relations: Iterable[Relation]) -> tuple[Clause, ...]:
    """The order families over an ordered cell's vocabulary."""
    rels = list(relations)
    tasks = [r.name for r in rels if r.sorts == ("task",) and not r.static]
    views = [r.name for r in rels if r.name in ("S", "M", "L")]
    out: list[Clause] = []
    unless: list[tuple[Literal, ...]] = [()] + [(lit(p, "t"),) for p in tasks]
    for extra in unless:
        out.append(Clause((neg("ro", "t", "i", "j"), *extra, lit("born", "i", "j")), "order-row"))
        out.append(
            Clause(
                (
                    neg("ro", "t", "i", "j"),
                    neg("M", "i"),
                    neg("M", "j"),
                    *extra,
                    lit("mo", "i", "j"),
                ),
                "order-row",
            )
        )
    for slot in _SLOTS:
        for view in views:
            for goal in (lit("born", "j", "i"), lit("ro", "t", "j", "i")):
                for spare in ((), (lit("some:dfl", "j"),)):
                    out.append(
                        Clause((neg(slot, "t", "i"), neg(view, "j"), goal, *spare), "order-flight")
                    )
    for view in (*views, "acked"):
        out.append(Clause((neg(view, "i"), lit("made", "i")), "order-made"))
    for row in ("adds", "req"):
        for p in tasks:
            out.append(Clause((neg(row, "t", "i"), neg(p, "t"), lit("made", "i")), "order-made"))
            out.append(Clause((neg(row, "t", "i"), neg(p, "t"), neg("made", "i")), "order-made"))
    out.append(Clause((neg("made", "i"), lit("made", "j"), lit("born", "i", "j")), "order-made"))
    return tuple(dict.fromkeys(out))


def _sample(cell: Cell, calls: int) -> Sample:
    structures = []
    for scenario in mixes(cell.sites, calls, cell.environment):
        config = config_of(cell, scenario)
        for state, born in reachable_born(config):
            structures.append(order_structure(structure(state, config, cell), state, config, born))
    return Sample(structures)


def prove_ordered(
    cell: Cell,
    calls: int = 2,
    timeout_ms: int = 60_000,
    seconds_limit: float = 300.0,
    required: tuple[Clause, ...] = (),
) -> Inferred:
    """Invariant 1 and the order lemma for the ordered `cell`, seeded by the committed
    certificate of the same cell without the order (its conjuncts are over a smaller
    vocabulary, so each still reads the same). `required`: more conjuncts inference may
    not drop (a diagnosis: the CTI that breaks one says what it needs)."""
    assert cell.ordered
    started = time.perf_counter()
    deadline = time.monotonic() + seconds_limit
    sample = _sample(cell, calls)
    start = [*fixed_conjuncts(cell), *FIXED, SAFETY, MIRROR_BY_CREATION_SETTLED, *required]
    broken = [c.name for c in start if sample.violated(c)]
    if broken:
        raise AssertionError(f"a reachable state breaks {broken[0]}")
    small = Problem(cell, FiniteSorts(2, 3))
    pool = sample.filter((*candidates(small.relations), *order_candidates(small.relations)))
    init_small = InitQueries(small, timeout_ms)
    queries = all_queries(small, timeout_ms)
    known = {r.name for r in small.relations}
    plain = Cell(cell.variant, cell.sites, cell.environment, cell.mutant, cell.shape)
    seed = [
        c
        for c in sample.filter(c for c in committed(plain) or () if names(c) <= known)
        if c not in start and init_small.breaks(c) is None
    ]
    found = infer([*start, *seed], start, pool, init_small, queries, deadline=deadline)
    ctis = found.ctis
    if found.stuck is None:
        larger = Problem(cell, FiniteSorts(3, 3))
        found = infer_on(larger, found.invariant, start, pool, timeout_ms, deadline)
        ctis += found.ctis
    status = "unknown"
    invariant = found.invariant
    if found.stuck is None:
        invariant = core(found.invariant, start, all_queries(larger, timeout_ms))
        problem = Problem(cell, unbounded_sorts())
        result = check_each(
            problem,
            list(invariant),
            InitQueries(problem, timeout_ms),
            all_queries(problem, timeout_ms),
        )
        status = "proved" if result.breaks is None else "unknown"
    return Inferred(
        status, invariant, found.stuck, ctis, time.perf_counter() - started, len(sample), len(pool)
    )
