"""The model's reachable states, read back as a z3 formula over the encoding.

`matches(enc, values, s)` says that the encoding state `s` means the model
state whose abstraction is `values` (see `Encoding.concrete`): the same
conjunction of facts `simulation.view` reads, with absolute counters replaced by
differences (the encoding never reads a counter's absolute value) and the
values the encoding leaves undefined left free.

`reachable_invariant(config)` is the disjunction over every reachable state of
the model, grouped by the tasks' program counters into named conjuncts
("when T0 waits for its acks and T1 has not started, the state is one of
these"). z3 checks it like any candidate (`induction.check_inductive`): it
holds initially, every move keeps it, and it implies the invariant. The
candidate comes from the explicit explorer; the proof is z3's, and if the
explorer missed a state, consecution fails and names the move that leaves the
set.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import z3
from z3 import z3core

from model import Config, OpKind, Pc, RequestSource, State
from proofs.engines.smt.encoding import (
    ANSWERED,
    DONE,
    GHOSTS,
    GUARDS,
    IN_FLIGHT,
    KINDS,
    PC_CODES,
    SENT,
    UNSENT,
    Encoding,
    SymState,
)
from proofs.engines.smt.induction import Conjunct
from proofs.engines.smt.simulation import reachable
from proofs.engines.smt.symbolic import FALSE, TRUE, band, bnot, bor, mk_eq

_PC_BY_CODE = {code: pc for pc, code in PC_CODES.items()}
_CTX = z3.main_ctx()


def _sub(a: Any, b: Any) -> z3.BitVecRef:
    return z3.BitVecRef(z3core.Z3_mk_bvsub(_CTX.ref(), a.as_ast(), b.as_ast()), _CTX)


class Matcher:
    """Builds `matches` formulas over one symbolic state, sharing equal atoms."""

    def __init__(self, enc: Encoding, s: SymState) -> None:
        self.enc = enc
        self.s = s
        self._atoms: dict[tuple[Any, ...], z3.BoolRef] = {}

    def _atom(self, key: tuple[Any, ...], build: Any) -> z3.BoolRef:
        atom = self._atoms.get(key)
        if atom is None:
            atom = build()
            self._atoms[key] = atom
        return atom

    def eq(self, name: str, value: bool | int) -> z3.BoolRef:
        s = self.s
        if isinstance(value, bool):
            return self._atom((name, value), lambda: s[name] if value else bnot(s[name]))
        return self._atom((name, value), lambda: mk_eq(s[name], self.enc.constant(name, value)))

    def diff(self, a: str, b: str, value: int) -> z3.BoolRef:
        """a - b == value."""
        s = self.s
        return self._atom(
            ("-", a, b, value),
            lambda: mk_eq(_sub(s[a], s[b]), self.enc.constant(a, value)),
        )

    def status(self, name: str, sent: bool, answered: bool) -> z3.BoolRef:
        if sent:
            return self.eq(name, SENT)
        if answered:
            return self.eq(name, ANSWERED)
        return self._atom(("idle", name), lambda: bor(self.eq(name, UNSENT), self.eq(name, DONE)))

    def matches(self, values: dict[str, bool | int]) -> list[z3.BoolRef]:
        """The facts that say: this encoding state means the model state `values`."""
        enc = self.enc
        atoms: list[z3.BoolRef] = []
        add = atoms.append

        def true(name: str) -> bool:
            value = values[name]
            assert isinstance(value, bool)
            return value

        def num(name: str) -> int:
            value = values[name]
            assert isinstance(value, int) and not isinstance(value, bool)
            return value

        def lst(name: str) -> None:
            present = [i for i in range(enc.n) if true(f"{name}.has.{i}")]
            for i in range(enc.n):
                add(self.eq(f"{name}.has.{i}", i in present))
            for i, j in enc.pairs:
                if i in present and j in present:
                    add(self.eq(f"{name}.prec.{i}.{j}", true(f"{name}.prec.{i}.{j}")))

        lst("srv")
        lst("mir")
        lst("loc")
        for t in enc.tasks:
            pc = _PC_BY_CODE[num(f"T{t}.pc")]
            add(self.eq(f"T{t}.pc", PC_CODES[pc]))
            bound = true(f"T{t}.bound")
            add(self.eq(f"T{t}.bound", bound))
            for kind in KINDS:
                for i in range(enc.n):
                    name = f"T{t}.pend.{'C' if kind is OpKind.CREATE else 'D'}.{i}"
                    add(self.eq(name, true(name)))
            for i in range(enc.n):
                if enc.items[i] not in enc.config.call(t).drops:
                    add(self.eq(f"udel.T{t}.{i}", true(f"udel.T{t}.{i}")))
            site = enc.config.site(t)
            waiting = pc in (Pc.WAIT_ACTIVITY, Pc.WAIT_PROVIDER)
            later = pc is Pc.WAIT_ACTIVITY and site.request is RequestSource.MIRROR_SNAPSHOT
            if waiting and not bound and not later:
                lst(f"T{t}.req")
            if pc is Pc.COPIED:
                lst(f"T{t}.copy")
        for lock in ("al", "pl"):
            head, tail = f"{lock}.head", f"{lock}.tail"
            add(self.diff(tail, head, num(tail) - num(head)))
            for t in enc.tasks:
                queued = true(f"{lock}.q.{t}")
                add(self.eq(f"{lock}.q.{t}", queued))
                if queued:
                    ticket = f"{lock}.tkt.{t}"
                    add(self.diff(ticket, head, num(ticket) - num(head)))
        # the op FIFO and the outstanding ops: statuses, anchors, batch order
        busy_tasks = []
        for slot in enc.slots:
            t, kind, i = slot
            key = enc.slot_key(slot)
            status = num(f"{key}.st")
            sent, answered = status == SENT, status == ANSWERED
            add(self.status(f"{key}.st", sent, answered))
            out = true(f"{key}.out")
            add(self.eq(f"{key}.out", out))
            if kind is OpKind.CREATE and (sent or (answered and not true(f"{key}.rej"))):
                add(self.eq(f"{key}.after", num(f"{key}.after")))
            if answered:
                add(self.eq(f"{key}.rej", true(f"{key}.rej")))
                add(self.diff(f"{key}.eseq", "consumed", num(f"{key}.eseq") - num("consumed")))
            if sent or out:
                if t not in busy_tasks:
                    busy_tasks.append(t)
                for other in enc.slots:
                    if other[0] == t and other[2] > i:
                        okey = enc.slot_key(other)
                        if num(f"{okey}.st") == SENT or true(f"{okey}.out"):
                            bord = f"T{t}.bord.{i}.{other[2]}"
                            add(self.eq(bord, true(bord)))
        for t in busy_tasks:
            add(self.diff(f"T{t}.dseq", "diffs", num(f"T{t}.dseq") - num("diffs")))
        add(self.diff("diffs", "abatch", num("diffs") - num("abatch")))
        add(self.diff("emitted", "consumed", num("emitted") - num("consumed")))
        for p in enc.pool:
            status = num(f"pool.{p}.st")
            add(self.eq(f"pool.{p}.st", status))
            add(self.eq(f"pool.{p}.learned", true(f"pool.{p}.learned")))
            if status == IN_FLIGHT:
                add(self.diff(f"pool.{p}.seq", "consumed", num(f"pool.{p}.seq") - num("consumed")))
                add(self.eq(f"pool.{p}.after", num(f"pool.{p}.after")))
        for ghost in GHOSTS:
            for i in range(enc.n):
                add(self.eq(f"{ghost}.{i}", true(f"{ghost}.{i}")))
        for guard in GUARDS:
            add(self.eq(guard, False))
        return atoms


def _pcs_label(enc: Encoding, values: dict[str, bool | int]) -> str:
    parts = []
    for t in enc.tasks:
        pc = _PC_BY_CODE[int(values[f"T{t}.pc"])]
        parts.append(f"T{t} {pc.value}")
    return ", ".join(parts) or "no tasks"


def reachable_invariant(
    config: Config, enc: Encoding, states: Sequence[State] | None = None
) -> list[Conjunct]:
    """The reachable states of the model as conjuncts: one per combination of the
    tasks' program counters, plus one naming the combinations that occur."""
    if states is None:
        states = list(reachable(config))
    by_pcs: dict[tuple[int, ...], list[dict[str, bool | int]]] = {}
    for state in states:
        values = enc.concrete(state)
        pcs = tuple(int(values[f"T{t}.pc"]) for t in enc.tasks)
        by_pcs.setdefault(pcs, []).append(values)

    def pcs_formula(s: SymState, pcs: tuple[int, ...]) -> z3.BoolRef:
        return band(
            mk_eq(s[f"T{t}.pc"], enc.constant(f"T{t}.pc", pc))
            for t, pc in zip(enc.tasks, pcs, strict=True)
        )

    conjuncts = [
        Conjunct(
            "program counters",
            lambda s: bor(pcs_formula(s, pcs) for pcs in by_pcs),
        )
    ]
    for pcs, group in by_pcs.items():

        def formula(
            s: SymState, pcs: tuple[int, ...] = pcs, group: list[Any] = group
        ) -> z3.BoolRef:
            matcher = Matcher(enc, s)
            cubes = [band(matcher.matches(values)) for values in group]
            return z3.Implies(pcs_formula(s, pcs), bor(cubes))

        conjuncts.append(Conjunct(f"when {_pcs_label(enc, group[0])}", formula))
    return conjuncts


__all__ = ["FALSE", "TRUE", "Matcher", "reachable_invariant"]
