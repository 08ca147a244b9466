"""A parameterized proof of invariant 1 for one cell, with its scope and assumptions.

`prove` samples the cell's reachable states through the explorer (small mixes of
calls), keeps the template instances true on all of them, runs Houdini, shrinks
the result to a core, and checks the core per (action, conjunct): initiation,
consecution and enabledness. `proved` means z3 settled every one of those queries;
a query z3 leaves open makes the cell `unknown`, as does a safety conjunct Houdini
had to drop (then the counterexample to induction is kept).
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import attrs
import z3
from attrs import frozen

from model import Invariant, Verdict
from proofs.engines.explore import explore
from proofs.engines.fol.data import Sample, config_of, mixes, reachable, structure
from proofs.engines.fol.infer import Stuck, core, infer
from proofs.engines.fol.modelled import coverage
from proofs.engines.fol.problem import ASSUMPTIONS, SAFETY, Problem, fixed_conjuncts
from proofs.engines.fol.queries import ActionQueries, InitQueries, all_queries
from proofs.engines.fol.solve import (
    Transition,
    check,
    conjunction,
    element,
    post_symbols,
    read,
    solver,
)
from proofs.engines.fol.system import Cell, Expr, FiniteSorts, unbounded_sorts
from proofs.engines.fol.templates import candidates
from proofs.engines.fol.vocab import Clause, Structure, names
from proofs.engines.trace import Trace
from proofs.errors import Unsettled

PROVED = "proved"
UNKNOWN = "unknown"
FAILS = "fails"


@frozen
class Cti:
    """A counterexample to induction: a state satisfying the invariant, one action, and a
    successor breaking `conjunct`."""

    conjunct: Clause
    transition: Transition


@frozen
class Counterexample:
    """The explorer's shortest counterexample, over the smallest mix of calls that has one."""

    scenario: str
    trace: Trace


@frozen
class Outcome:
    """A cell's verdict: proved, unknown or fails, with its scope and assumptions."""

    cell: Cell
    status: str
    scope: str
    assumptions: tuple[str, ...]
    invariant: tuple[Clause, ...] = ()
    queries: int = 0
    #: Counterexamples to induction inference met on the way.
    ctis: int = 0
    sampled: int = 0
    candidates: int = 0
    seconds: Mapping[str, float] = {}
    cti: Cti | None = None
    #: Actions the invariant never enables: the proof says nothing about them.
    disabled: tuple[str, ...] = ()
    counterexample: Counterexample | None = None
    reason: str = ""
    #: The committed certificate whose check is the proof (`certificate.key`), or "".
    certificate: str = ""
    #: The environment of the cell that certificate is for, when it is another cell's.
    checked_on: str = ""
    #: When the certificate is another cell's: why that cell's system contains this one's.
    cover: str = ""

    @property
    def total_seconds(self) -> float:
        return sum(self.seconds.values())


def scope(cell: Cell) -> str:
    """What a proof of `cell` covers, in words (every number of calls of its sites)."""
    names = ", ".join(site.name for site in cell.sites)
    return (
        f"every number of calls of sites {{{names}}} and every number of items, "
        f"environment {cell.environment.name}"
    )


def assumptions(cell: Cell) -> tuple[str, ...]:
    out = list(ASSUMPTIONS)
    if cell.three_way:
        out.remove(ASSUMPTIONS[-1])
    return tuple(out)


def prove(
    cell: Cell,
    sample_calls: int = 2,
    timeout_ms: int = 60_000,
    finite: tuple[int, int] = (2, 3),
    rounds: int = 5,
    larger: tuple[int, int] | None = (3, 3),
    seconds_limit: float | None = None,
    seed: tuple[Clause, ...] = (),
    fail_calls: int = 4,
    certified: bool = True,
    certified_only: bool = False,
) -> Outcome:
    """Invariant 1 (no unintended delete) for every number of calls and items of `cell`.

    The invariant is inferred (`infer.py`) on a finite instance first (`finite` tasks
    and items, every quantifier expanded: a model there is a model of the unbounded
    query, so what it refutes is refuted for every size), then with the sorts
    unbounded; the result is checked per (action, conjunct). `larger` is a second
    finite instance inference continues on when the first one's invariant is not
    inductive for every size (a CTI there is cheaper than with the sorts unbounded);
    None skips it. Past `seconds_limit` (wall seconds from the start)
    inference stops and the cell is `unknown`. `seed` is conjuncts to start from (say the
    invariant proved for a smaller environment or fewer sites): those true on this cell's
    sample and initially join at once, and inference drops any that is not inductive here,
    so a seed changes how fast a proof is found, never what is proved. When inference
    gets stuck on safety, the explorer searches every mix of up to `fail_calls` calls for
    a real counterexample (the cell then `fails`; lock5 {user-turn, tool-outputs,
    cleanup} needs three calls); it stays `unknown` when none has. With `certified`, a
    committed certificate of the cell (`certificate.py`) that passes its check for every
    size is the proof, and nothing is sampled or inferred; a stale one is ignored.
    With `certified_only`, the committed certificate's check is all that runs: no
    certificate, or one that no longer checks, is `unknown` at once, saying which
    (`_certified_only`). `rounds` is kept
    for callers of the earlier signature; inference bounds itself."""
    del rounds
    seconds: dict[str, float] = {}
    base = dict(cell=cell, scope=scope(cell), assumptions=assumptions(cell))
    reason = coverage(cell)
    if reason:
        return Outcome(**base, status=UNKNOWN, reason=reason)  # type: ignore[arg-type]
    if certified_only:
        return _certified_only(cell, timeout_ms)
    started = time.perf_counter()
    if certified:
        proof = _certified(cell, timeout_ms)
        if proof is None and committed_key(cell) is None:
            covered = _covered(cell, timeout_ms)
            if covered.status == PROVED:
                return covered
        if proof is not None:
            return Outcome(
                **base,  # type: ignore[arg-type]
                status=PROVED,
                invariant=proof[0],
                queries=proof[1].queries,
                disabled=proof[1].disabled,
                seconds={"certificate": time.perf_counter() - started},
                certificate=committed_key(cell) or "",
            )
    deadline = None if seconds_limit is None else time.monotonic() + seconds_limit
    every = mixes(cell.sites, sample_calls, cell.environment, server_drops=True)
    configs = [config_of(cell, s) for s in every]
    sample = Sample(structure(st, cfg, cell) for cfg in configs for st in reachable(cfg))
    fixed = fixed_conjuncts(cell)
    broken = [c for c in fixed if sample.violated(c)]
    if broken:
        raise AssertionError(f"a reachable state breaks {broken[0].name}: the mapping is wrong")
    if sample.violated(SAFETY):
        seconds["sample"] = time.perf_counter() - started
        shortest = shortest_counterexample(cell, sample_calls)
        seconds["explore"] = time.perf_counter() - started - seconds["sample"]
        return Outcome(
            **base,  # type: ignore[arg-type]
            status=FAILS,
            sampled=len(sample),
            seconds=seconds,
            counterexample=shortest,
            reason="a reachable state of a small mix of calls breaks it",
        )
    start = [*fixed, SAFETY]
    small = Problem(cell, FiniteSorts(*finite))
    pool = sample.filter(candidates(small.relations))
    counts = dict(sampled=len(sample), candidates=len(pool))
    seconds["sample"] = time.perf_counter() - started
    try:
        mark = time.perf_counter()
        finite_queries = all_queries(small, timeout_ms)
        init_small = InitQueries(small, timeout_ms)
        known = {r.name for r in small.relations}
        seeded = [
            c
            for c in sample.filter(c for c in seed if names(c) <= known)
            if c not in start and init_small.breaks(c) is None
        ]
        found = infer([*start, *seeded], start, pool, init_small, finite_queries, deadline=deadline)
        ctis = found.ctis
        grown = found.invariant
        if found.stuck is None:
            found = attrs.evolve(found, invariant=core(found.invariant, start, finite_queries))
        seconds["houdini"] = time.perf_counter() - mark
        mark = time.perf_counter()
        problem = Problem(cell, unbounded_sorts())
        init, queries = InitQueries(problem, timeout_ms), all_queries(problem, timeout_ms)
        result: CheckResult | None = None
        if found.stuck is None:
            # the finite instance's invariant is usually inductive for every size too:
            # check it per (action, conjunct) first, and infer further only if it is not
            result = _check_or_none(problem, list(found.invariant), init, queries)
        if result is None and found.stuck is None and larger is not None:
            # a CTI on a larger finite instance is cheaper than one with unbounded sorts
            # (lock5 {user-turn, cleanup} needs a third task: two waiters and an owner)
            started_larger = time.perf_counter()
            small = Problem(cell, FiniteSorts(*larger))
            finite_queries = all_queries(small, timeout_ms)
            init_small = InitQueries(small, timeout_ms)
            found = infer(grown, start, pool, init_small, finite_queries, deadline=deadline)
            ctis += found.ctis
            if found.stuck is None:
                found = attrs.evolve(found, invariant=core(found.invariant, start, finite_queries))
                result = _check_or_none(problem, list(found.invariant), init, queries)
            seconds["larger"] = time.perf_counter() - started_larger
        if result is None and found.stuck is None:
            found = infer(found.invariant, start, pool, init, queries, deadline=deadline)
            ctis += found.ctis
        if found.stuck is not None:
            seconds["check"] = time.perf_counter() - mark - seconds.get("larger", 0.0)
            if not found.stuck.exhausted and fail_calls > sample_calls:
                # safety left: the cell may fail with more calls than the sample has
                mark = time.perf_counter()
                larger_mix = shortest_counterexample(cell, fail_calls)
                seconds["explore"] = time.perf_counter() - mark
                if larger_mix is not None:
                    return Outcome(
                        **base,  # type: ignore[arg-type]
                        **counts,  # type: ignore[arg-type]
                        status=FAILS,
                        seconds=seconds,
                        ctis=ctis,
                        cti=_cti(found.stuck),
                        counterexample=larger_mix,
                        reason=f"a reachable state of a mix of up to {fail_calls} calls breaks it",
                    )
            return Outcome(
                **base,  # type: ignore[arg-type]
                **counts,  # type: ignore[arg-type]
                status=UNKNOWN,
                seconds=seconds,
                ctis=ctis,
                cti=_cti(found.stuck),
                reason=(
                    "inference ran out of its budget of counterexamples to induction or time"
                    if found.stuck.exhausted
                    else "no inductive invariant among the templates holds it"
                ),
            )
        if result is None:
            result = check_each(problem, list(found.invariant), init, queries)
        seconds["check"] = time.perf_counter() - mark - seconds.get("larger", 0.0)
    except Unsettled as error:
        return Outcome(
            **base,  # type: ignore[arg-type]
            **counts,  # type: ignore[arg-type]
            status=UNKNOWN,
            seconds=seconds,
            reason=f"z3 did not settle a query: {error}",
        )
    if result.breaks is not None:
        raise AssertionError("inference ended with an invariant its own check breaks")
    return Outcome(
        **base,  # type: ignore[arg-type]
        **counts,  # type: ignore[arg-type]
        status=PROVED,
        invariant=found.invariant,
        ctis=ctis,
        disabled=result.disabled,
        queries=result.queries,
        seconds=seconds,
    )


def _certified(cell: Cell, timeout_ms: int) -> tuple[tuple[Clause, ...], CheckResult] | None:
    """The cell's committed certificate and its check, when there is one and it passes for
    every size; None otherwise (inference then runs as if there were none)."""
    # certificate.py builds on this module's check, so it is imported here
    from proofs.engines.fol.certificate import check as check_certificate
    from proofs.engines.fol.certificate import committed

    found = committed(cell)
    if found is None:
        return None
    try:
        result = check_certificate(cell, found, timeout_ms)
    except (AssertionError, Unsettled):
        return None
    return (found, result) if result.breaks is None else None


def committed_key(cell: Cell) -> str | None:
    """The key of the cell's own committed certificate, or None when it has none."""
    from proofs.engines.fol.certificate import DIRECTORY, key

    return key(cell) if (DIRECTORY / key(cell)).exists() else None


def _covered(cell: Cell, timeout_ms: int) -> Outcome:
    """The cell through a wider cell's certificate (`cover.prove_covered`)."""
    # cover.py builds on this module's check, so it is imported here
    from proofs.engines.fol.cover import prove_covered

    return prove_covered([cell], timeout_ms)[0]


def _certified_only(cell: Cell, timeout_ms: int) -> Outcome:
    """The cell's own committed certificate's check, or with none the check of the wider
    certificate that covers it (`cover.py`); no sample, no inference."""
    if committed_key(cell) is not None:
        return own_certificate(cell, timeout_ms)
    return _covered(cell, timeout_ms)


def own_certificate(cell: Cell, timeout_ms: int) -> Outcome:
    """The committed certificate's check and nothing else (no sample, no inference): the
    default `verify` asks only this, so a cell without a certificate costs nothing, and
    one whose certificate the model no longer keeps says so instead of being proved."""
    # certificate.py builds on this module's check, so it is imported here
    from proofs.engines.fol.certificate import check as check_certificate
    from proofs.engines.fol.certificate import committed, key

    base = dict(cell=cell, scope=scope(cell), assumptions=assumptions(cell))
    started = time.perf_counter()
    found = committed(cell)
    if found is None:
        return Outcome(
            **base,  # type: ignore[arg-type]
            status=UNKNOWN,
            reason=f"no certificate: {key(cell)} is not committed",
        )
    cti = None
    try:
        result = check_certificate(cell, found, timeout_ms)
    except AssertionError as error:
        why = f"the committed certificate {key(cell)} no longer checks: {error}"
    except Unsettled as error:
        why = f"z3 did not settle a query of the committed certificate {key(cell)}: {error}"
    else:
        seconds = {"certificate": time.perf_counter() - started}
        if result.breaks is None:
            return Outcome(
                **base,  # type: ignore[arg-type]
                status=PROVED,
                invariant=found,
                queries=result.queries,
                disabled=result.disabled,
                seconds=seconds,
                certificate=key(cell),
            )
        assert result.conjunct is not None and result.transition is not None
        cti = Cti(result.conjunct, result.transition)
        why = (
            f"the committed certificate {key(cell)} no longer checks: "
            f"{result.transition.action} breaks {result.conjunct.text()}"
        )
    return Outcome(
        **base,  # type: ignore[arg-type]
        status=UNKNOWN,
        cti=cti,
        seconds={"certificate": time.perf_counter() - started},
        reason=why,
        certificate=key(cell),
    )


def _cti(stuck: Stuck) -> Cti:
    return Cti(stuck.conjunct, Transition(stuck.action, stuck.pre, stuck.post, stuck.params))


@frozen
class CheckResult:
    """The per-(action, conjunct) check of an invariant."""

    queries: int
    #: A post state breaking some conjunct, or None when all hold.
    breaks: Structure | None
    #: Actions no state of the invariant enables (for the cell's sites, say, no deletes).
    disabled: tuple[str, ...] = ()
    #: The conjunct broken and the transition that breaks it, when `breaks` is set.
    conjunct: Clause | None = None
    transition: Transition | None = None
    #: Actions no state of the invariant satisfying `check_each`'s `where` enables.
    disabled_where: tuple[str, ...] = ()


def _check_or_none(
    problem: Problem, invariant: list[Clause], init: InitQueries, queries: list[ActionQueries]
) -> CheckResult | None:
    """`check_each` when every conjunct holds initially and consecution holds; None when
    some conjunct fails either (inference then goes on with these sorts)."""
    if any(init.breaks(clause) is not None for clause in invariant):
        return None
    result = check_each(problem, invariant, init, queries)
    return result if result.breaks is None else None


def check_invariant(problem: Problem, invariant: list[Clause], timeout_ms: int) -> CheckResult:
    """`check_each` with fresh queries; AssertionError when initiation fails."""
    return check_each(
        problem, invariant, InitQueries(problem, timeout_ms), all_queries(problem, timeout_ms)
    )


def check_each(
    problem: Problem,
    invariant: list[Clause],
    init: InitQueries,
    queries: list[ActionQueries],
    where: Expr | None = None,
) -> CheckResult:
    """Initiation per conjunct, then per action: enabledness (the action can run in some
    state of the invariant, so the proof is not vacuous) and consecution of each conjunct
    the action can change (the others are the same formula after it). One query per
    (action, conjunct), not one per action over all of them: z3 settles the disjunction
    slower (`docs/proofs.md`, "Performance"). With `where` (a formula over the pre
    state), enabledness is asked first in a state satisfying it too, and actions enabled
    only outside it are `disabled_where` (`cover.py`: the states of a narrower cell)."""
    for clause in invariant:
        if init.breaks(clause) is not None:
            raise AssertionError(f"initiation fails for {clause.text()}")
    disabled: list[str] = []
    disabled_where: list[str] = []
    count = init.queries
    for q in queries:
        before = q.queries
        # a state satisfying `where` too is a state of the invariant: enabled there is enabled
        shown = where is not None and q.enabled(invariant, where)
        if where is not None and not shown:
            disabled_where.append(q.action.name)
        if not shown and not q.enabled(invariant):
            disabled.append(q.action.name)
            count += q.queries - before
            continue
        for clause in invariant:
            found = q.breaks_one(invariant, clause)
            if found is not None:
                pre, post, params = found
                count += q.queries - before
                step = Transition(q.action.name, pre, post, params)
                return CheckResult(count, post, tuple(disabled), clause, step)
        count += q.queries - before
    return CheckResult(count, None, tuple(disabled), disabled_where=tuple(disabled_where))


def counterexample_to_induction(
    problem: Problem, invariant: list[Clause], target: Clause, timeout_ms: int
) -> Cti | None:
    """A state of `invariant` and `target`, and an action whose successor breaks `target`."""
    pre = problem.symbols("")
    premises = [*invariant, target]
    for action in problem.actions:
        post = post_symbols(problem, action, pre, "'")
        s = solver(timeout_ms, problem.sorts.ctx)
        s.add(*problem.axioms(pre), *conjunction(problem, premises, pre))
        s.add(*problem.step(action, pre, post, "x"))
        s.add(z3.Not(problem.clause(target, post)))
        if check(s):
            model = s.model()
            params = {
                name: element(problem, model, z3.Const(f"{name}@x", problem.sorts.of(sort)), sort)
                for name, sort in action.params
            }
            return Cti(
                target,
                Transition(
                    action.name, read(problem, model, pre), read(problem, model, post), params
                ),
            )
    return None


def shortest_counterexample(cell: Cell, calls: int) -> Counterexample | None:
    """Breadth-first over the mixes of one call, then two, ...: the first mix with a
    counterexample gives the shortest trace among the smallest sets of overlapping calls.
    The lean mixes too (a replacement that keeps the previous call's item): only they
    show a replacement diffing two items the mirror and the local context order apart."""
    for size in range(1, calls + 1):
        best: Counterexample | None = None
        scenarios = (
            *mixes(cell.sites, size, cell.environment),
            *mixes(cell.sites, size, cell.environment, lean=True),
        )
        for scenario in scenarios:
            if len(scenario.calls) != size:
                continue
            finding = explore(config_of(cell, scenario), (Invariant.NO_UNINTENDED_DELETE,)).finding(
                Invariant.NO_UNINTENDED_DELETE
            )
            trace = finding.trace
            shorter = trace is not None and (best is None or trace.depth < best.trace.depth)
            if finding.verdict is Verdict.COUNTEREXAMPLE and trace is not None and shorter:
                best = Counterexample(scenario.name, trace)
        if best is not None:
            return best
    return None
