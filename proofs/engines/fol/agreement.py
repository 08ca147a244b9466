"""Invariant 2 (agreement at rest) for every number of calls: its safety formula over the
ghosts of `agreement_z3.py`, the explorer's states with those ghosts, and inference.

At rest (nothing in flight: no op or event, no push under way) `model.invariants.
agreement_at_rest` asks (a) that every local item that reached the server, was refused
for a deleted anchor, or was never sent, be on the server, and (b) that no item a delete
removed be on it again. The safety conjuncts here say more, in every state, one item at a
time (universal clauses, so the query stays in EPR):

- `L(i) -> S(i) | sent(i)`, `L(i) -> S(i) | ~reached(i)`, `L(i) -> S(i) | ~refused(i)`:
  a local item off the server was sent and is neither lost nor refused;
- `removed(i) -> ~S(i)`: nothing a delete removed is on the server again.

At rest they give (a) and (b): (b) because the model records a re-created item only when
a create lands on an item already removed (`State.recreated` is inside `removed`).
`at_rest_violation` evaluates the at-rest formula itself on a mapped state, and the tests
compare it with the model's check on every explorer state.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import attrs
from attrs import frozen

from model import (
    Config,
    Diff,
    Environment,
    OpKind,
    Pc,
    RequestSource,
    Site,
    State,
    Variant,
    expected_view,
)
from model.shapes import CallIds, OrphanOutputs
from proofs.engines.fol import certificate
from proofs.engines.fol.agreement_z3 import ASSUMPTION, ASSUMPTION_ADDS
from proofs.engines.fol.data import Sample, config_of, mixes, reachable_with, structure
from proofs.engines.fol.infer import Inferred, core, infer, infer_on
from proofs.engines.fol.modelled import coverage as plain_coverage
from proofs.engines.fol.problem import ASSUMPTIONS, SAFETY, Problem, fixed_conjuncts
from proofs.engines.fol.proving import CheckResult, check_each, check_invariant, scope
from proofs.engines.fol.queries import InitQueries, all_queries
from proofs.engines.fol.system import Cell, FiniteSorts, unbounded_sorts
from proofs.engines.fol.templates import SLOTS, candidates
from proofs.engines.fol.vocab import (
    SOME,
    Atom,
    Clause,
    Literal,
    Relation,
    Structure,
    lit,
    names,
    neg,
    with_derived,
)
from proofs.errors import Unsettled

__all__ = [
    "AGREEMENT",
    "DIRECTORY",
    "FAMILIES",
    "Certified",
    "agreement_candidates",
    "agreement_structure",
    "assumptions",
    "at_rest_violation",
    "certified",
    "check",
    "committed",
    "coverage",
    "key",
    "prove_agreement",
    "reachable_pa",
    "sample",
    "write",
]


def _clause(literals: Iterable[Literal], name: str) -> Clause:
    return Clause(tuple(sorted(literals)), name)


#: Invariant 2's safety conjuncts (stronger than the at-rest formula, which they imply).
AGREEMENT: tuple[Clause, ...] = (
    _clause(
        (neg("L", "i"), lit("S", "i"), lit("sent", "i")), "a local item off the server was sent"
    ),
    _clause(
        (neg("L", "i"), lit("S", "i"), neg("reached", "i")),
        "a local item off the server is not lost",
    ),
    _clause(
        (neg("L", "i"), lit("S", "i"), neg("refused", "i")),
        "a local item off the server is not refused",
    ),
    _clause((neg("removed", "i"), neg("S", "i")), "no removed item is on the server again"),
)

FAMILIES: dict[str, str] = {
    "anchor-slot": "while a task has an op slot, each item that may anchor its creates has "
    "(or lacks) one fact",
    "anchor-fifo": "an item that may anchor t's creates has no op slot of a task whose batch "
    "was sent before t's",
    "anchor-item": "an item that may anchor t's creates has (or lacks) one fact, unless t is at "
    "some point",
    "row-item": "an item of a task's copy, request or base row has (or lacks) one fact, unless "
    "the task is at some point",
    "row-kind": "an item of a static kind (the model's pool, the never-played items) in a "
    "task's row has (or lacks) one fact (a copy's model item was learned)",
    "fresh-site": "while a call of some site is at some point, no task has its items in some "
    "row, or its items are (or are not) in some view",
}


#: Invariant 2's certificates: a folder of their own, so that readers of invariant 1's
#: (which take every file of `certificate.DIRECTORY`) never load one.
DIRECTORY = certificate.DIRECTORY / "agreement-at-rest"


def key(cell: Cell) -> str:
    """The certificate's file name: the invariant-1 key of the cell."""
    return certificate.key(cell)


def committed(cell: Cell) -> tuple[Clause, ...] | None:
    """The committed invariant-2 certificate of `cell`, or None."""
    path = DIRECTORY / key(cell)
    return certificate.loads(path.read_text()) if path.exists() else None


def write(cell: Cell, invariant: Iterable[Clause]) -> Path:
    """Commit-ready: the invariant-2 certificate of `cell` in `DIRECTORY`."""
    DIRECTORY.mkdir(exist_ok=True)
    path = DIRECTORY / key(cell)
    path.write_text(certificate.dumps(tuple(invariant)))
    return path


def coverage(cell: Cell) -> str:
    """Why the engine cannot prove invariant 2 for `cell`, or "" when it can try."""
    reason = plain_coverage(cell)
    if reason:
        return reason
    if cell.shape.diff is not Diff.THREE_WAY:
        return "invariant 2 is modelled for the three-way session only"
    if cell.shape.orphan_outputs is not OrphanOutputs.UNCHECKED:
        return "the server's refusal of a function output with no function call is not modelled"
    if cell.shape.call_ids is not CallIds.SERVER:
        return "items learned under a fresh id (twins) are not modelled"
    if cell.ordered:
        return "ordered cells are not modelled with invariant 2"
    return ""


def assumptions(cell: Cell) -> tuple[str, ...]:
    """What a proof of invariant 2 rests on: invariant 1's, and that drops are seen."""
    del cell
    plain = tuple(a for a in ASSUMPTIONS if "mirror-diff" not in a)
    return (*plain, ASSUMPTION, ASSUMPTION_ADDS)


# -- the explorer's states with the ghosts ----------------------------------------------

_UNPUSHED = (Pc.IDLE, Pc.COPIED)


def _pushed_now(before: State, after: State) -> Iterator[int]:
    for t, (old, new) in enumerate(zip(before.tasks, after.tasks, strict=True)):
        if old.pc in _UNPUSHED and new.pc not in _UNPUSHED:
            yield t


def breaks_assumption(before: State, after: State, config: Config) -> bool:
    """A caller-copy call that drops an item its copy lacks (`agreement_z3.ASSUMPTION`)."""
    for t in _pushed_now(before, after):
        if config.site(t).request is RequestSource.CALLER_COPY:
            copy = after.tasks[t].copy or ()
            if not set(config.call(t).drops) <= set(copy):
                return True
    return False


def anchors(before: State, after: State, t: int) -> frozenset[tuple[int, str]]:
    """`pa(t, .)` at t's diff: the expected view's items its request keeps or its base
    lacks, and its own creates (the twin of `agreement_z3.at_diff`)."""
    task = after.tasks[t]
    expected = expected_view(before.mirror, before.outstanding)
    request = set(task.request or ())
    present = {x for x in expected if x in request or x not in task.base}
    sent = set(before.outstanding)
    creates = {
        op.item
        for op in after.outstanding
        if op.task == t and op.kind is OpKind.CREATE and op not in sent
    }
    return frozenset((t, x) for x in present | creates)


def reachable_pa(
    config: Config, assume: bool = True, limit: int = 200_000
) -> Iterator[tuple[State, frozenset[tuple[int, str]]]]:
    """Every state the model reaches in `config` with the `pa` rows of the first run found
    to it, breadth-first; with `assume`, runs that break `ASSUMPTION` are cut."""

    def step(
        state: State, successor: State, pa: frozenset[tuple[int, str]]
    ) -> frozenset[tuple[int, str]]:
        for t in _pushed_now(state, successor):
            pa = pa | anchors(state, successor, t)
        return pa

    def keep(state: State, successor: State) -> bool:
        return not breaks_assumption(state, successor, config)

    return reachable_with(config, lambda _: frozenset(), step, limit, keep if assume else None)


def agreement_structure(
    state: State, config: Config, cell: Cell, pa: frozenset[tuple[int, str]]
) -> Structure:
    """`data.structure` of `state`, with the ghosts of invariant 2."""
    base = structure(state, config, cell)
    table = {k: v for k, v in base.relations.items() if ":" not in k or k.startswith("site:")}
    table.update(
        reached=frozenset((i,) for i in state.reached),
        removed=frozenset((i,) for i in state.removed),
        sent=frozenset((i,) for i in state.sent),
        refused=frozenset((i,) for i in state.refused),
        pa=frozenset(pa),
    )
    return Structure(base.tasks, base.items, with_derived(table), base.label)


def at_rest_violation(s: Structure) -> str | None:
    """The at-rest formula of invariant 2 on a mapped state: None where it holds."""
    rel = s.relations
    flight = ("tsc", "tsd", "evc", "evd", "erc", "erd", "evm", "wacks", "wact", "wprov", "copied")
    if any(rel.get(name) for name in flight):
        return None
    for (i,) in rel["L"]:
        pushed = (i,) in rel["reached"] or (i,) in rel["refused"] or (i,) not in rel["sent"]
        if pushed and (i,) not in rel["S"]:
            return f"the local context holds {i} and the server does not"
    for (i,) in rel["removed"]:
        if (i,) in rel["S"]:
            return f"{i} was removed and is on the server again"
    return None


def sample(
    cell: Cell,
    calls: int,
    lean: bool = True,
    assume: bool = True,
    sites: tuple[Site, ...] | None = None,
) -> list[Structure]:
    """The mapped states of every mix of up to `calls` calls of the cell's sites (or of
    `sites`, some of them) and the lean mixes, runs that break the assumption cut."""
    chosen = cell.sites if sites is None else sites
    scenarios = list(mixes(chosen, calls, cell.environment, server_drops=True))
    if lean:
        scenarios += mixes(chosen, calls, cell.environment, lean=True)
    out = []
    for scenario in scenarios:
        config = config_of(cell, scenario)
        for state, pa in reachable_pa(config, assume):
            out.append(agreement_structure(state, config, cell, pa))
    return out


# -- the anchor families -------------------------------------------------------------------


def agreement_candidates(relations: Iterable[Relation]) -> tuple[Clause, ...]:
    """The anchor families over a cell's vocabulary with the ghosts."""
    rels = list(relations)
    unary = [r.name for r in rels if r.sorts == ("item",)]
    pairs = [r.name for r in rels if r.sorts == ("task", "item") and r.name in SLOTS]
    tasks = [r.name for r in rels if r.sorts == ("task",) and not r.static]
    facts = [x for name in unary for x in (lit(name, "j"), neg(name, "j"))]
    facts += [Literal(True, Atom(SOME + name, ("j",))) for name in pairs if name != "adds"]
    out: list[Clause] = []
    pa = neg("pa", "t", "j")
    for slot in pairs:
        for fact in facts:
            out.append(_clause((neg(slot, "t", "i"), pa, fact), "anchor-slot"))
        out.append(_clause((pa, neg(slot, "u", "j"), neg("before", "u", "t")), "anchor-fifo"))
    for fact in facts:
        out.append(_clause((pa, fact), "anchor-item"))
        for p in tasks:
            out.append(_clause((pa, fact, lit(p, "t")), "anchor-item"))
    sites = [r.name for r in rels if r.sorts == ("task",) and r.static]
    rows = [r.name for r in rels if r.sorts == ("task", "item") and r.name != "adds"]
    items = [x for name in unary for x in (lit(name, "i"), neg(name, "i"))]
    for row in (r for r in rows if r not in SLOTS):
        for fact in items:
            out.append(_clause((neg(row, "t", "i"), fact), "row-item"))
            for p in tasks:
                out.append(_clause((neg(row, "t", "i"), fact, lit(p, "t")), "row-item"))
    kinds = [neg(r.name, "i") for r in rels if r.sorts == ("item",) and r.static]
    for row in rows:
        for kind in kinds:
            for fact in items:
                out.append(_clause((neg(row, "t", "i"), kind, fact), "row-kind"))
    for site in sites:
        for p in tasks:
            head = (neg(p, "t"), neg(site, "t"), neg("adds", "t", "i"))
            for row in rows:
                out.append(_clause((*head, neg(row, "u", "i")), "fresh-site"))
            for fact in items:
                out.append(_clause((*head, fact), "fresh-site"))
    return tuple(dict.fromkeys(out))


# -- inference and the check -------------------------------------------------------------------


def required(cell: Cell) -> list[Clause]:
    """What every invariant-2 certificate holds: the fixed structure, invariant 1's safety
    (the seed certificates carry it) and invariant 2's."""
    return [*fixed_conjuncts(cell), SAFETY, *AGREEMENT]


def prove_agreement(
    cell: Cell,
    calls: int = 2,
    timeout_ms: int = 60_000,
    seconds_limit: float = 600.0,
    seed: tuple[Clause, ...] = (),
) -> Inferred:
    """Invariant 2 (with invariant 1) for every number of calls and items of `cell`, seeded
    by `seed` and by the committed invariant-1 certificate of the same cell."""
    assert cell.agreement and not coverage(cell), coverage(cell)
    started = time.perf_counter()
    deadline = time.monotonic() + seconds_limit
    found_sample = Sample(sample(cell, calls))
    start = required(cell)
    broken = [c.name for c in start if found_sample.violated(c)]
    if broken:
        raise AssertionError(f"a reachable state breaks {broken[0]}")
    small = Problem(cell, FiniteSorts(2, 3))
    pool = found_sample.filter(
        (*candidates(small.relations), *agreement_candidates(small.relations))
    )
    init_small = InitQueries(small, timeout_ms)
    known = {r.name for r in small.relations}
    plain = Cell(cell.variant, cell.sites, cell.environment, cell.mutant, cell.shape)
    seeds = [*seed, *(certificate.committed(plain) or ())]
    seeded = [
        c
        for c in found_sample.filter(c for c in dict.fromkeys(seeds) if names(c) <= known)
        if c not in start and init_small.breaks(c) is None
    ]
    found = infer(
        [*start, *seeded],
        start,
        pool,
        init_small,
        all_queries(small, timeout_ms),
        deadline=deadline,
    )
    ctis = found.ctis
    status = "unknown"
    invariant = found.invariant
    if found.stuck is None:
        # the closure of the required conjuncts under each action's unsat core: smaller,
        # so its check for every size is cheaper
        found = attrs.evolve(
            found, invariant=core(found.invariant, start, all_queries(small, timeout_ms))
        )
        invariant = found.invariant
        problem = Problem(cell, unbounded_sorts())
        init, queries = InitQueries(problem, timeout_ms), all_queries(problem, timeout_ms)
        result = check_each(problem, list(found.invariant), init, queries)
        if result.breaks is not None:
            larger = Problem(cell, FiniteSorts(3, 3))
            found = infer_on(larger, found.invariant, start, pool, timeout_ms, deadline)
            ctis += found.ctis
            invariant = found.invariant
            if found.stuck is None:
                invariant = core(found.invariant, start, all_queries(larger, timeout_ms))
                result = check_each(problem, list(invariant), init, queries)
        if found.stuck is None and result.breaks is None:
            status = "proved"
    return Inferred(
        status,
        tuple(invariant),
        found.stuck,
        ctis,
        time.perf_counter() - started,
        len(found_sample),
        len(pool),
    )


def check(cell: Cell, invariant: Iterable[Clause], timeout_ms: int = 60_000) -> CheckResult:
    """A certificate of invariant 2, checked with the sorts unbounded (`certificate.check`'s
    twin): it must hold the required conjuncts; `breaks` is None exactly for a proof."""
    conjuncts = list(invariant)
    missing = [c.name for c in required(cell) if c not in conjuncts]
    if missing:
        raise AssertionError(f"a certificate lacks {missing[0]}")
    return check_invariant(Problem(cell, unbounded_sorts()), conjuncts, timeout_ms)


# -- for `ackguard verify` ---------------------------------------------------------------------


@frozen
class Certified:
    """What the check of a committed invariant-2 certificate says about one cell."""

    status: str
    scope: str
    assumptions: tuple[str, ...]
    reason: str
    seconds: float
    certificate: str = ""


def certified(variant: Variant, sites: tuple[Site, ...], environment: Environment) -> Certified:
    """Invariant 2 of the cell for every size when its committed certificate checks (no
    inference: finding one takes minutes, `benchmarks/bench_fol_agreement.py --write`);
    `unknown`, saying why, otherwise."""
    started = time.perf_counter()
    cell = Cell(variant, sites, environment, agreement=True)
    found_scope, found = scope(cell), assumptions(cell)

    def answer(status: str, reason: str, name: str = "") -> Certified:
        return Certified(status, found_scope, found, reason, time.perf_counter() - started, name)

    reason = coverage(cell)
    if reason:
        return answer("unknown", reason)
    invariant = committed(cell)
    if invariant is None:
        return answer("unknown", "no committed certificate of agreement-at-rest for this cell")
    try:
        result = check(cell, invariant)
    except (AssertionError, Unsettled) as error:
        return answer("unknown", f"its committed certificate does not check: {error}")
    if result.breaks is not None:
        return answer("unknown", "its committed certificate is no longer inductive")
    return answer("proved", "", key(cell))
