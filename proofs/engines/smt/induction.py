"""Inductive invariants checked by z3, with a diagnosis when they fail.

A candidate is a list of named conjuncts, each a formula over a symbolic state.
`check_inductive` asks z3 three things, one step at a time:

1. initiation: the initial state satisfies every conjunct;
2. consecution: from any state satisfying all conjuncts, every move instance
   leads to a state satisfying each conjunct (checked per move instance, so a
   failure names the move; the conjunct is the first one the successor breaks);
3. the candidate implies the invariant.

When all three hold, the invariant holds in every reachable state of the
encoding, for the scenario's items and tasks, at any depth. When one fails, the
failure names the stage, the (conjunct, move) pair and shows both states.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import z3
from attrs import frozen

from model import Environment, Invariant
from proofs.engines.smt.encoding import UNMODELLED_INVARIANTS, Encoding, SymState
from proofs.engines.smt.symbolic import band, mk_eq


@frozen
class Conjunct:
    name: str
    formula: Callable[[SymState], z3.BoolRef]


@frozen
class InductionFailure:
    #: "initiation", "consecution" or "property"
    stage: str
    conjunct: str | None
    move: str | None
    before: dict[str, Any] | None
    after: dict[str, Any] | None = None

    def describe(self) -> str:
        if self.stage == "initiation":
            head = f"initiation fails: the initial state breaks conjunct '{self.conjunct}'"
        elif self.stage == "consecution":
            head = f"consecution fails: conjunct '{self.conjunct}' is broken by move '{self.move}'"
        else:
            head = "the candidate does not imply the invariant; a state it allows breaks it"
        lines = [head]
        for label, state in (("before", self.before), ("after", self.after)):
            if state is not None:
                lines.append(f"  {label}:")
                lines.extend(f"    {key}: {value}" for key, value in state.items())
        return "\n".join(lines)


@frozen
class InductionResult:
    """What z3 said about a candidate: inductive or not, and which invariants it implies."""

    #: initiation and consecution hold
    inductive: bool
    #: the invariants the candidate implies (checked only when it is inductive)
    implied: tuple[Invariant, ...]
    conjuncts: int
    seconds: float
    #: why it is not inductive (initiation or consecution)
    failure: InductionFailure | None = None
    #: for each invariant it does not imply, a state it allows that breaks it
    property_failures: tuple[tuple[Invariant, InductionFailure], ...] = ()
    #: why there is no answer (time limit)
    reason: str = ""

    def proves(self, invariant: Invariant) -> bool:
        return self.inductive and invariant in self.implied


def check_inductive(
    enc: Encoding,
    conjuncts: Sequence[Conjunct],
    invariants: Sequence[Invariant] = tuple(Invariant),
    environment: Environment | None = None,
    timeout: float = 60.0,
) -> InductionResult:
    """Initiation, consecution per (conjunct, move), and each invariant, in z3."""
    started = time.perf_counter()
    environment = environment if environment is not None else enc.config.environment
    env = enc.env_literals(environment)
    solver = z3.SolverFor("QF_BV")
    cur, nxt = enc.cur, enc.nxt

    def query(*assumptions: z3.BoolRef) -> z3.CheckSatResult:
        left = timeout - (time.perf_counter() - started)
        if left <= 0:
            return z3.unknown
        solver.set("timeout", max(1, int(left * 1000)))
        result: z3.CheckSatResult = solver.check(*env, *assumptions)
        return result

    def done(
        inductive: bool,
        failure: InductionFailure | None = None,
        reason: str = "",
        implied: tuple[Invariant, ...] = (),
        property_failures: tuple[tuple[Invariant, InductionFailure], ...] = (),
    ) -> InductionResult:
        return InductionResult(
            inductive,
            implied,
            len(conjuncts),
            time.perf_counter() - started,
            failure,
            property_failures,
            reason,
        )

    # 1. initiation
    start = enc.state("@init")
    solver.push()
    solver.add(enc.init_formula(start))
    for conjunct in conjuncts:
        answer = query(z3.Not(conjunct.formula(start)))
        if answer == z3.sat:
            state = enc.describe(solver.model(), start)
            solver.pop()
            return done(False, InductionFailure("initiation", conjunct.name, None, state))
        if answer == z3.unknown:
            return done(False, reason="time limit reached (initiation)")
    solver.pop()
    # 2. consecution: one query for every move; when it fails, find the move
    solver.add(*(conjunct.formula(cur) for conjunct in conjuncts))
    solver.push()  # the step is only for consecution: a state with no move is a state too
    solver.add(*enc.template)
    after = [conjunct.formula(nxt) for conjunct in conjuncts]
    broken = z3.Not(band(after))
    answer = query(broken)
    if answer == z3.unknown:
        return done(False, reason="time limit reached (consecution)")
    suspects = list(enumerate(enc.instances)) if answer == z3.sat else []
    for index, inst in suspects:
        chosen = mk_eq(enc.selector(""), z3.BitVecVal(index, enc.mv_width))
        answer = query(chosen, broken)
        if answer == z3.unknown:
            return done(False, reason=f"time limit reached (consecution, {inst.name})")
        if answer == z3.sat:
            model = solver.model()
            name = next(
                c.name
                for c, formula in zip(conjuncts, after, strict=True)
                if z3.is_false(model.eval(formula, model_completion=True))
            )
            return done(
                False,
                InductionFailure(
                    "consecution",
                    name,
                    inst.name,
                    enc.describe(model, cur),
                    enc.describe(model, nxt),
                ),
            )
    solver.pop()
    # 3. which invariants the candidate implies
    implied: list[Invariant] = []
    failures: list[tuple[Invariant, InductionFailure]] = []
    for invariant in invariants:
        if invariant in UNMODELLED_INVARIANTS:
            continue  # never implied: the encoding has no `bad` for it
        answer = query(enc.bad(cur, invariant))
        if answer == z3.unknown:
            return done(True, reason="time limit reached (property)", implied=tuple(implied))
        if answer == z3.sat:
            state = enc.describe(solver.model(), cur)
            failures.append((invariant, InductionFailure("property", None, None, state)))
        else:
            implied.append(invariant)
    return done(True, implied=tuple(implied), property_failures=tuple(failures))
