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
    PC_CODES,
    SENT,
    UNSENT,
    Encoding,
    SymState,
)
from proofs.engines.smt.induction import Conjunct
from proofs.engines.smt.schema import (
    KINDS,
    LOCAL,
    LOCKS,
    MIRROR,
    SERVER,
    Family,
    Values,
    Vars,
    copy_list,
    request_list,
)
from proofs.engines.smt.simulation import reachable
from proofs.engines.smt.symbolic import FALSE, TRUE, band, bnot, bor, mk_eq

_PC_BY_CODE = {code: pc for pc, code in PC_CODES.items()}
#: A counter, as its family and index.
Var = tuple[Family, Any]
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

    def eq(self, family: Family, index: Any, value: bool | int) -> z3.BoolRef:
        """The variable `family[index]` has `value`."""
        s = self.s
        name = family.key(index)
        if isinstance(value, bool):
            return self._atom((name, value), lambda: s[name] if value else bnot(s[name]))
        return self._atom((name, value), lambda: mk_eq(s[name], self.enc.constant(name, value)))

    def diff(self, a: Var, b: Var, value: int) -> z3.BoolRef:
        """a - b == value, for two counters given as (family, index)."""
        s = self.s
        first, second = a[0].key(a[1]), b[0].key(b[1])
        return self._atom(
            ("-", first, second, value),
            lambda: mk_eq(_sub(s[first], s[second]), self.enc.constant(first, value)),
        )

    def status(self, family: Family, index: Any, sent: bool, answered: bool) -> z3.BoolRef:
        if sent:
            return self.eq(family, index, SENT)
        if answered:
            return self.eq(family, index, ANSWERED)
        name = family.key(index)
        return self._atom(
            ("idle", name),
            lambda: bor(self.eq(family, index, UNSENT), self.eq(family, index, DONE)),
        )

    def matches(self, values: dict[str, bool | int]) -> list[z3.BoolRef]:
        """The facts that say: this encoding state means the model state `values`
        (`schema.Family.skip` names the families left free, and why)."""
        enc = self.enc
        atoms: list[z3.BoolRef] = []
        add = atoms.append
        v: Values[bool | int] = Values(values)
        V = Vars

        def true(value: bool | int) -> bool:
            assert isinstance(value, bool)
            return value

        def num(value: bool | int) -> int:
            assert isinstance(value, int) and not isinstance(value, bool)
            return value

        def same(family: Family, index: Any) -> None:
            add(self.eq(family, index, v.vals[family.key(index)]))

        def lst(name: str) -> None:
            present = [i for i in range(enc.n) if true(v.has[name, i])]
            for i in range(enc.n):
                add(self.eq(V.has, (name, i), i in present))
            for i, j in enc.pairs:
                if i in present and j in present:
                    add(self.eq(V.prec, (name, (i, j)), true(v.prec[name, (i, j)])))

        def counters(a: Var, b: Var) -> None:
            first, second = a[0].key(a[1]), b[0].key(b[1])
            add(self.diff(a, b, num(v.read(first)) - num(v.read(second))))

        lst(SERVER)
        lst(MIRROR)
        lst(LOCAL)
        for t in enc.tasks:
            pc = _PC_BY_CODE[num(v.pc[t])]
            add(self.eq(V.pc, t, PC_CODES[pc]))
            bound = true(v.bound[t])
            add(self.eq(V.bound, t, bound))
            for kind in KINDS:
                for i in range(enc.n):
                    add(self.eq(V.pend, (t, kind, i), true(v.pend[t, kind, i])))
            for i in range(enc.n):
                if enc.items[i] not in enc.config.call(t).drops:
                    add(self.eq(V.udel, (t, i), true(v.udel[t, i])))
            site = enc.config.site(t)
            waiting = pc in (Pc.WAIT_ACTIVITY, Pc.WAIT_PROVIDER)
            later = pc is Pc.WAIT_ACTIVITY and site.request is RequestSource.MIRROR_SNAPSHOT
            if waiting and not bound and not later:
                lst(request_list(t))
            if pc is Pc.COPIED:
                lst(copy_list(t))
        for lock in LOCKS:
            counters((V.tail, lock), (V.head, lock))
            for t in enc.tasks:
                queued = true(v.queued[lock, t])
                add(self.eq(V.queued, (lock, t), queued))
                if queued:
                    counters((V.ticket, (lock, t)), (V.head, lock))
        # the op FIFO and the outstanding ops: statuses, anchors, batch order
        busy_tasks = []
        for slot in enc.slots:
            t, kind, i = slot
            status = num(v.status[slot])
            sent, answered = status == SENT, status == ANSWERED
            add(self.status(V.status, slot, sent, answered))
            out = true(v.outstanding[slot])
            add(self.eq(V.outstanding, slot, out))
            if kind is OpKind.CREATE and (sent or (answered and not true(v.rejected[slot]))):
                same(V.anchor, slot)
            if answered:
                same(V.rejected, slot)
                counters((V.eseq, slot), (V.consumed, ()))
            if sent or out:
                if t not in busy_tasks:
                    busy_tasks.append(t)
                for other in enc.slots:
                    if other[0] != t or other[2] <= i:
                        continue
                    if num(v.status[other]) == SENT or true(v.outstanding[other]):
                        same(V.bord, (t, (i, other[2])))
        for t in busy_tasks:
            counters((V.dseq, t), (V.diffs, ()))
        counters((V.diffs, ()), (V.abatch, ()))
        counters((V.emitted, ()), (V.consumed, ()))
        for p in enc.pool:
            status = num(v.pool_status[p])
            add(self.eq(V.pool_status, p, status))
            same(V.learned, p)
            if status == IN_FLIGHT:
                counters((V.pool_seq, p), (V.consumed, ()))
                same(V.pool_anchor, p)
        for ghost in GHOSTS:
            for i in range(enc.n):
                same(V.ghost, (ghost, i))
        for guard in GUARDS:
            add(self.eq(V.guard, guard, False))
        return atoms


def _pcs_label(enc: Encoding, values: dict[str, bool | int]) -> str:
    parts = []
    for t in enc.tasks:
        pc = _PC_BY_CODE[int(values[Vars.pc.key(t)])]
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
        pcs = tuple(int(values[Vars.pc.key(t)]) for t in enc.tasks)
        by_pcs.setdefault(pcs, []).append(values)

    def pcs_formula(s: SymState, pcs: tuple[int, ...]) -> z3.BoolRef:
        return band(
            mk_eq(s.pc[t], enc.constant(Vars.pc.key(t), pc))
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
