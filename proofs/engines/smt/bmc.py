"""Bounded model checking with shortest counterexamples, and proofs by k-induction.

One incremental z3 solver per (variant, scenario) holds the initial state and the
transition relation unrolled step by step; the environment options are free
Boolean constants of the encoding, limited per query to the environments still
open, so every environment of the catalog shares one unrolling.

At each depth d (states 0..d, transitions 0..d-1 asserted):

1. is a state at depth d, in some open environment, bad for an invariant still
   open there, or inexact (an exactness guard set)? Only when one is does the
   search narrow down to that environment and invariant. Paths have exactly d
   steps, so the first depth with a bad state is the length of a shortest
   counterexample: the depth the explorer's breadth-first search reports. The
   z3 model is decoded into the model's `Move`s and replayed through
   `model.step`; the replay must reach a state where `model.check` reports the
   violation.
2. after adding the transition d -> d+1: does any path of d+1 steps exist in an
   open environment? When none does, every run of the model ends within d
   steps, so every reachable state was checked at depths 0..d: the invariants
   still open are proved. This is the forward termination criterion of
   k-induction (Sheeran, Singh, Stalmarck 2000: no loop-free path of length k
   from an initial state) with k = d+1; the model's runs are all finite, which
   is why the criterion closes.

A cell whose time budget runs out first is `unknown`, as is every open cell of an
environment once an exactness guard is reachable (the encoding is then no longer
known to match the model).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import z3
from attrs import evolve, frozen

from model import Config, Environment, Invariant, Move, Violation, check
from model.environment import OPTION_NAMES
from proofs.engines.smt.encoding import GUARDS, UNMODELLED_INVARIANTS, Encoding, SymState
from proofs.engines.smt.induction import check_inductive
from proofs.engines.smt.reachset import reachable_invariant
from proofs.engines.smt.simulation import reachable
from proofs.engines.trace import Trace, replay
from proofs.errors import EncodingMismatch, InternalError

PROVED = "proved"
COUNTEREXAMPLE = "counterexample"
UNKNOWN = "unknown"

METHOD_BMC = "bmc"
METHOD_KIND = "k-induction"
METHOD_INVARIANT = "invariant"
#: How `verify` proves the cells that hold.
METHODS = (METHOD_KIND, METHOD_INVARIANT)


@frozen
class CellResult:
    """The verdict of one (variant, scenario, environment, invariant)."""

    config: Config
    invariant: Invariant
    verdict: str
    #: Length of the shortest counterexample, or the k of a k-induction proof.
    depth: int | None
    method: str
    bound: str
    seconds: float
    trace: Trace | None = None
    violation: Violation | None = None
    #: Why a cell is unknown.
    reason: str = ""
    #: CPU time of its (variant, scenario) group's process until this verdict, the
    #: clock `seconds` counts in wall time (a worker's CPU escapes `getrusage`).
    cpu_seconds: float = 0.0
    #: The variant whose run this verdict comes from, when this config is the same
    #: model as that one (`Config.behaviour`) and was not checked again.
    same_as: str = ""

    @property
    def environment(self) -> Environment:
        return self.config.environment


def bound_text(enc: Encoding) -> str:
    """The bounds a verdict covers: this scenario's items, tasks and server pool."""
    return f"items={enc.n} tasks={len(enc.tasks)} pool={len(enc.pool)}"


def new_solver() -> z3.Solver:
    # QF_BV: z3's incremental bit-blasting SAT solver, which accepts assumptions
    return z3.SolverFor("QF_BV")


class Unrolling:
    """The initial state and the transition relation, unrolled on one solver."""

    def __init__(self, enc: Encoding, solver: z3.Solver | None = None) -> None:
        self.enc = enc
        self.solver = solver if solver is not None else new_solver()
        self.states: list[SymState] = [enc.state("@0")]
        self.selectors: list[z3.BitVecRef] = []
        self.solver.add(enc.init_formula(self.states[0]))

    @property
    def depth(self) -> int:
        return len(self.selectors)

    def extend(self) -> None:
        d = self.depth
        nxt = self.enc.state(f"@{d + 1}")
        selector = self.enc.selector(f"@{d}")
        self.solver.add(*self.enc.transition(self.states[d], nxt, selector))
        if self.selectors:
            self.solver.add(*self.enc.peephole(self.selectors[-1], selector))
        self.states.append(nxt)
        self.selectors.append(selector)

    def moves(self, model: z3.ModelRef, depth: int) -> tuple[Move, ...]:
        """The model's moves of the first `depth` steps."""
        return tuple(self.enc.decode_move(model, s).move for s in self.selectors[:depth])


class _Cell:
    """Book-keeping of one (environment group, invariant) while the search runs."""

    def __init__(self, config: Config, invariant: Invariant) -> None:
        self.config = config
        self.invariant = invariant
        self.result: CellResult | None = None


Key = tuple[bool, ...]


def check_configs(
    configs: Sequence[Config],
    invariants: Sequence[Invariant] = tuple(Invariant),
    timeout: float = 60.0,
    max_depth: int = 200,
    method: str = METHOD_KIND,
) -> list[CellResult]:
    """Verdicts for configs that share a variant and a scenario (one unrolling).

    With `method` "invariant", each environment first gets the explicit
    explorer's reachable states as a candidate inductive invariant
    (`reachset.reachable_invariant`); the cells it implies are proved by z3's
    check of it, and bounded model checking looks for the others' shortest
    counterexamples. With "k-induction" (the default), bounded model checking
    alone decides every cell.

    Environments that differ only in options no move of this scenario reads have
    the same transition relation; each such group is checked once and its
    counterexamples are replayed for every member. At each depth one query asks
    about every open environment at once (the environment flags are free, limited
    to the open environments); only when it finds something is it narrowed down.
    `timeout` is each cell's budget in seconds; the cells of one call share one
    solver, so they share that clock, which includes building the encoding.
    """
    if not configs:
        return []
    first = configs[0]
    assert all(c.variant == first.variant and c.scenario == first.scenario for c in configs), (
        "one unrolling per (variant, scenario)"
    )
    started, cpu_started = time.perf_counter(), time.process_time()
    enc = Encoding(first)
    unrolling = Unrolling(enc)
    solver = unrolling.solver
    bound = bound_text(enc)
    groups: dict[Key, list[Config]] = {}
    for config in configs:
        groups.setdefault(enc.env_key(config.environment), []).append(config)
    cube = {
        key: z3.And(*enc.env_literals(members[0].environment)) for key, members in groups.items()
    }
    cells = {
        (key, invariant): _Cell(members[0], invariant)
        for key, members in groups.items()
        for invariant in invariants
    }

    def open_cells(key: Key) -> list[_Cell]:
        return [cells[(key, inv)] for inv in invariants if cells[(key, inv)].result is None]

    def open_keys() -> list[Key]:
        return [key for key in groups if open_cells(key)]

    def finish(cell: _Cell, verdict: str, depth: int | None, method: str, **extra: Any) -> None:
        cell.result = CellResult(
            config=cell.config,
            invariant=cell.invariant,
            verdict=verdict,
            depth=depth,
            method=method,
            bound=bound,
            seconds=time.perf_counter() - started,
            cpu_seconds=time.process_time() - cpu_started,
            **extra,
        )

    def query(*assumptions: z3.BoolRef) -> z3.CheckSatResult:
        left = timeout - (time.perf_counter() - started)
        if left <= 0:
            return z3.unknown
        solver.set("timeout", max(1, int(left * 1000)))
        result: z3.CheckSatResult = solver.check(*assumptions)
        return result

    def give_up(keys: Sequence[Key], reason: str) -> None:
        for key in keys:
            for cell in open_cells(key):
                finish(cell, UNKNOWN, None, METHOD_BMC, reason=reason)

    for key in groups:
        for cell in open_cells(key):
            if cell.invariant in UNMODELLED_INVARIANTS:
                finish(
                    cell,
                    UNKNOWN,
                    None,
                    METHOD_BMC,
                    reason=f"the z3 encoding does not model {cell.invariant.value}; "
                    "use the explorer",
                )
    modelled = [inv for inv in invariants if inv not in UNMODELLED_INVARIANTS]
    if method == METHOD_INVARIANT:
        for key, members in groups.items():
            _prove_by_invariant(enc, members[0], open_cells(key), finish, started, timeout)
    while keys := open_keys():
        d = unrolling.depth
        state = unrolling.states[d]
        inexact = enc.inexact(state)
        bads = {inv: enc.bad(state, inv) for inv in modelled}
        # 1. a bad (or inexact) state at depth d, in any environment still open?
        while keys := open_keys():
            answer = query(
                z3.Or(
                    *(
                        z3.And(
                            cube[key],
                            z3.Or(inexact, *(bads[cell.invariant] for cell in open_cells(key))),
                        )
                        for key in keys
                    )
                )
            )
            if answer != z3.sat:
                if answer == z3.unknown:
                    give_up(keys, _timeout_reason(timeout, d))
                break
            found = enc.env_key(_environment(enc.env_of(solver.model())))
            for cell in open_cells(found):
                answer = query(cube[found], bads[cell.invariant], z3.Not(inexact))
                if answer == z3.sat:
                    moves = unrolling.moves(solver.model(), d)
                    trace, violation = confirm(cell.config, cell.invariant, moves)
                    finish(cell, COUNTEREXAMPLE, d, METHOD_BMC, trace=trace, violation=violation)
                elif answer == z3.unknown:
                    finish(cell, UNKNOWN, None, METHOD_BMC, reason=_timeout_reason(timeout, d))
            if open_cells(found):
                answer = query(cube[found], inexact)
                if answer == z3.sat:
                    give_up([found], _inexact_reason(enc, unrolling, solver.model(), d))
                elif answer == z3.unknown:
                    give_up([found], _timeout_reason(timeout, d))
        keys = open_keys()
        if not keys:
            break
        if d >= max_depth:
            give_up(keys, f"no verdict within {max_depth} steps")
            break
        # 2. does any run of an open environment go on for one more step?
        unrolling.extend()
        answer = query(z3.Or(*(cube[key] for key in keys)))
        if answer == z3.unsat:
            for key in keys:
                for cell in open_cells(key):
                    finish(cell, PROVED, d + 1, METHOD_KIND)
        elif answer == z3.unknown:
            give_up(keys, _timeout_reason(timeout, d + 1))
    results: list[CellResult] = []
    for key, members in groups.items():
        for invariant in invariants:
            result = cells[(key, invariant)].result
            assert result is not None
            results.extend(_for_member(result, config) for config in members)
    return results


def _prove_by_invariant(
    enc: Encoding,
    config: Config,
    cells: Sequence[_Cell],
    finish: Callable[..., None],
    started: float,
    timeout: float,
) -> None:
    """Prove what the reachable-set invariant implies; leave the rest open."""
    states = list(reachable(config))
    conjuncts = reachable_invariant(config, enc, states)
    left = timeout - (time.perf_counter() - started)
    result = check_inductive(
        enc, conjuncts, [cell.invariant for cell in cells], config.environment, left
    )
    if not result.inductive:
        reason = result.reason or (
            "the explorer's reachable states are not an inductive invariant of the encoding: "
            + (result.failure.describe() if result.failure is not None else "")
        )
        for cell in cells:
            finish(cell, UNKNOWN, None, METHOD_INVARIANT, reason=reason)
        return
    for cell in cells:
        if result.proves(cell.invariant):
            finish(
                cell,
                PROVED,
                None,
                f"{METHOD_INVARIANT} ({len(states)} states, {result.conjuncts} conjuncts)",
            )


def _environment(flags: dict[str, bool]) -> Environment:
    """The environment with the options `flags` turns on; every option (`model.OPTIONS`)
    must be named, and an unknown one raises."""
    unnamed = [name for name in OPTION_NAMES if name not in flags]
    if unnamed:
        raise InternalError(f"the z3 model names no value for the options {unnamed}")
    return Environment.of(name for name, on in flags.items() if on)


def _for_member(result: CellResult, config: Config) -> CellResult:
    """The group's verdict for one of its environments (its counterexample replayed
    under that environment's own config)."""
    if config == result.config:
        return result
    if result.trace is None:
        return evolve(result, config=config)
    trace, violation = confirm(config, result.invariant, result.trace.moves)
    return evolve(result, config=config, trace=trace, violation=violation)


def reuse(result: CellResult, config: Config) -> CellResult:
    """The verdict of `result` for `config`, another variant with the same behaviour.

    Equal behaviours have the same runs, so the verdict, depth and trace carry
    over; the trace is replayed under `config` all the same. `seconds` stay those
    of the run that found the verdict; no CPU was spent on it here.
    """
    assert config.behaviour() == result.config.behaviour(), "not the same model"
    same_as = result.same_as or result.config.variant.name
    return evolve(_for_member(result, config), cpu_seconds=0.0, same_as=same_as)


def confirm(
    config: Config, invariant: Invariant, moves: tuple[Move, ...]
) -> tuple[Trace, Violation]:
    """Replay z3's moves through the model; the last state must violate the invariant."""
    try:
        trace = replay(config, moves)
    except ValueError as error:
        raise EncodingMismatch(
            f"{_where(config, invariant)}: z3's trace is not a run of the model: {error}"
        ) from None
    violation = check(trace.last, config, invariant)
    if violation is None:
        raise EncodingMismatch(
            f"{_where(config, invariant)}: z3's trace of {len(moves)} moves replays, "
            "but the model reports no violation at its end"
        )
    return trace, violation


def _where(config: Config, invariant: Invariant) -> str:
    return (
        f"{config.variant.name} / {config.scenario.name} / {config.environment.name} / "
        f"{invariant.value}"
    )


def _timeout_reason(timeout: float, depth: int) -> str:
    return f"time limit of {timeout:g} s reached at depth {depth}"


def _inexact_reason(
    enc: Encoding, unrolling: Unrolling, model: z3.ModelRef | None, depth: int
) -> str:
    if model is None:
        return f"an exactness guard may be reachable at depth {depth}"
    final = enc.describe(model, unrolling.states[depth])
    guards = ", ".join(GUARDS[name] for name in final["guards"]) or "an exactness guard"
    moves = " / ".join(m.label() for m in unrolling.moves(model, depth))
    return f"the encoding is not known to be exact at depth {depth} ({guards}) after: {moves}"
