"""Symbolic building blocks: folding connectives, item references, ordered lists.

An ordered list of distinct items (the server conversation, the mirror, the
local context, a request) is encoded by *membership* (one Boolean per item of
the scenario) and a *precedence* relation (one Boolean per unordered pair of
items, read only when both are present). Every list operation of the model
(filter, upsert at the tail, remove, insert after an anchor) has an exact
counterpart here; `docs/proofs.md` argues why the relation stays a strict total
order on the present items.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import z3
from z3 import z3core

#: The only Boolean constants the encoding uses: folding below tests identity with
#: these objects (z3's own constructors never return them), which keeps building
#: the formulas cheap.
TRUE = z3.BoolVal(True)
FALSE = z3.BoolVal(False)

Pair = tuple[int, int]

# Thin constructors over z3's C API: z3's Python constructors coerce and check
# sorts on every call, which dominated the time to build an encoding.
_CTX = z3.main_ctx()


def _ast_array(args: Sequence[z3.ExprRef]) -> Any:
    array = (z3.Ast * len(args))()
    for position, arg in enumerate(args):
        array[position] = arg.as_ast()
    return array


def mk_and(args: Sequence[z3.BoolRef]) -> z3.BoolRef:
    return z3.BoolRef(z3core.Z3_mk_and(_CTX.ref(), len(args), _ast_array(args)), _CTX)


def mk_or(args: Sequence[z3.BoolRef]) -> z3.BoolRef:
    return z3.BoolRef(z3core.Z3_mk_or(_CTX.ref(), len(args), _ast_array(args)), _CTX)


def mk_not(arg: z3.BoolRef) -> z3.BoolRef:
    return z3.BoolRef(z3core.Z3_mk_not(_CTX.ref(), arg.as_ast()), _CTX)


def mk_eq(a: z3.ExprRef, b: z3.ExprRef) -> z3.BoolRef:
    """a == b for two terms of one sort."""
    return z3.BoolRef(z3core.Z3_mk_eq(_CTX.ref(), a.as_ast(), b.as_ast()), _CTX)


def mk_ite(cond: z3.BoolRef, then: Any, other: Any) -> Any:
    ast = z3core.Z3_mk_ite(_CTX.ref(), cond.as_ast(), then.as_ast(), other.as_ast())
    return type(then)(ast, _CTX)


def mk_ult(a: z3.BitVecRef, b: z3.BitVecRef) -> z3.BoolRef:
    return z3.BoolRef(z3core.Z3_mk_bvult(_CTX.ref(), a.as_ast(), b.as_ast()), _CTX)


def mk_inc(a: z3.BitVecRef) -> z3.BitVecRef:
    one = z3.BitVecVal(1, a.size())
    return z3.BitVecRef(z3core.Z3_mk_bvadd(_CTX.ref(), a.as_ast(), one.as_ast()), _CTX)


def const_bool(value: bool) -> z3.BoolRef:
    return TRUE if value else FALSE


def band(*args: z3.BoolRef | Iterable[z3.BoolRef]) -> z3.BoolRef:
    """Conjunction that folds the constants true and false away."""
    kept: list[z3.BoolRef] = []
    for arg in _flatten(args):
        if arg is FALSE:
            return FALSE
        if arg is not TRUE:
            kept.append(arg)
    if not kept:
        return TRUE
    if len(kept) == 1:
        return kept[0]
    return mk_and(kept)


def bor(*args: z3.BoolRef | Iterable[z3.BoolRef]) -> z3.BoolRef:
    """Disjunction that folds the constants true and false away."""
    kept: list[z3.BoolRef] = []
    for arg in _flatten(args):
        if arg is TRUE:
            return TRUE
        if arg is not FALSE:
            kept.append(arg)
    if not kept:
        return FALSE
    if len(kept) == 1:
        return kept[0]
    return mk_or(kept)


def bnot(arg: z3.BoolRef) -> z3.BoolRef:
    if arg is TRUE:
        return FALSE
    if arg is FALSE:
        return TRUE
    return mk_not(arg)


def ite(cond: z3.BoolRef, then: Any, other: Any) -> Any:
    """If-then-else that folds a constant condition and equal branches."""
    if cond is TRUE or then is other:
        return then
    if cond is FALSE:
        return other
    if then is TRUE and other is FALSE:
        return cond
    if then is FALSE and other is TRUE:
        return bnot(cond)
    if then is TRUE:
        return bor(cond, other)
    if then is FALSE:
        return band(bnot(cond), other)
    if other is TRUE:
        return bor(bnot(cond), then)
    if other is FALSE:
        return band(cond, then)
    return mk_ite(cond, then, other)


def _flatten(args: Iterable[Any]) -> Iterable[z3.BoolRef]:
    for arg in args:
        if isinstance(arg, z3.ExprRef):
            yield arg
        else:
            yield from arg


def count(conds: Iterable[z3.BoolRef], width: int) -> z3.BitVecRef:
    """How many of the conditions hold, as a bit-vector of the given width."""
    one = z3.BitVecVal(1, width)
    zero = z3.BitVecVal(0, width)
    terms = [c for c in conds if c is not FALSE]
    constant = sum(1 for c in terms if c is TRUE)
    total: z3.BitVecRef = z3.BitVecVal(constant, width)
    for cond in terms:
        if cond is not TRUE:
            total = total + mk_ite(cond, one, zero)
    return total


class Refs:
    """References to items 0..n-1 as bit-vectors; the value n means none."""

    def __init__(self, items: Sequence[str]) -> None:
        self.items = tuple(items)
        self.n = len(self.items)
        self.none = self.n
        self.width = max(1, self.n.bit_length())
        self.sort = z3.BitVecSort(self.width)
        self._vals = [z3.BitVecVal(i, self.width) for i in range(self.n + 1)]

    def val(self, index: int | None) -> z3.BitVecRef:
        return self._vals[self.none if index is None else index]

    def index(self, item: str | None) -> int | None:
        return None if item is None else self.items.index(item)

    def is_(self, ref: z3.BitVecRef, index: int | None) -> z3.BoolRef:
        return mk_eq(ref, self._vals[self.none if index is None else index])

    def select(self, ref: z3.BitVecRef, values: Sequence[z3.BoolRef]) -> z3.BoolRef:
        """values[ref] for a symbolic reference (false for none)."""
        return bor(band(self.is_(ref, j), values[j]) for j in range(self.n))

    def choose(self, options: Sequence[tuple[z3.BoolRef, int | None]]) -> z3.BitVecRef:
        """The first option whose condition holds, else none."""
        result: z3.BitVecRef = self.val(None)
        for cond, index in reversed(options):
            result = ite(cond, self.val(index), result)
        return result


class SList:
    """An ordered list of distinct items: membership and a precedence relation."""

    __slots__ = ("has", "prec")

    def __init__(self, has: Sequence[z3.BoolRef], prec: dict[Pair, z3.BoolRef]) -> None:
        self.has = tuple(has)
        #: prec[(i, j)] for i < j: item i comes before item j.
        self.prec = prec

    @staticmethod
    def of(order: Sequence[int], n: int) -> SList:
        """A constant list with the given items in the given order."""
        position = {item: pos for pos, item in enumerate(order)}
        has = [const_bool(i in position) for i in range(n)]
        prec = {
            (i, j): const_bool(position.get(i, n + i) < position.get(j, n + j))
            for i in range(n)
            for j in range(i + 1, n)
        }
        return SList(has, prec)

    @property
    def n(self) -> int:
        return len(self.has)

    def before(self, i: int, j: int) -> z3.BoolRef:
        """Item i comes before item j (read only when both are present)."""
        if i < j:
            return self.prec[(i, j)]
        return bnot(self.prec[(j, i)])

    def filter(self, keep: Sequence[z3.BoolRef]) -> SList:
        return SList([band(h, k) for h, k in zip(self.has, keep, strict=True)], self.prec)

    def remove(self, item: int) -> SList:
        has = list(self.has)
        has[item] = FALSE
        return SList(has, self.prec)

    def _place(self, item: int, after_of: Sequence[z3.BoolRef]) -> SList:
        """Insert `item`, with after_of[y] saying whether y goes before it."""
        has = list(self.has)
        has[item] = TRUE
        prec = dict(self.prec)
        for other in range(self.n):
            if other == item:
                continue
            first = band(self.has[other], after_of[other])
            if other < item:
                prec[(other, item)] = first
            else:
                prec[(item, other)] = bnot(first)
        return SList(has, prec)

    def append(self, item: int, cond: z3.BoolRef = TRUE) -> SList:
        """Add `item` at the tail when cond holds (the item must be absent then)."""
        placed = self._place(item, [TRUE] * self.n)
        return SList.ite(cond, placed, self)

    def upsert(self, items: Iterable[int]) -> SList:
        """Append each item that is absent, in order (the model's `_upsert`)."""
        result = self
        for item in items:
            result = result.append(item, bnot(result.has[item]))
        return result

    def insert_after(self, item: int, anchor: z3.BitVecRef, refs: Refs) -> SList:
        """The model's `insert_after`: after the anchor; at the head for none; at
        the tail when the anchor is absent."""
        anchor_none = refs.is_(anchor, None)
        anchor_present = refs.select(anchor, self.has)
        after_of = []
        for other in range(self.n):
            before_anchor = bor(
                band(refs.is_(anchor, j), self.before(other, j))
                for j in range(self.n)
                if j != other and j != item
            )
            at_or_before = bor(refs.is_(anchor, other), before_anchor)
            after_of.append(ite(anchor_none, FALSE, ite(anchor_present, at_or_before, TRUE)))
        return self._place(item, after_of)

    def last(self, refs: Refs) -> z3.BitVecRef:
        """The last item, or none when the list is empty."""
        options = []
        for item in range(self.n):
            is_last = band(
                self.has[item],
                *(
                    bnot(band(self.has[other], self.before(item, other)))
                    for other in range(self.n)
                    if other != item
                ),
            )
            options.append((is_last, item))
        return refs.choose(options)

    def pred(self, item: int, within: Sequence[z3.BoolRef], refs: Refs) -> z3.BitVecRef:
        """The nearest item before `item` among those `within` (present ones), or none."""
        options = []
        for cand in range(self.n):
            if cand == item:
                continue
            nearest = band(
                within[cand],
                self.before(cand, item),
                *(
                    bnot(band(within[mid], self.before(cand, mid), self.before(mid, item)))
                    for mid in range(self.n)
                    if mid not in (cand, item)
                ),
            )
            options.append((nearest, cand))
        return refs.choose(options)

    def rank(self, item: int, among: Sequence[z3.BoolRef], width: int) -> z3.BitVecRef:
        """How many items `among` come before `item`."""
        return count(
            (
                band(among[other], self.before(other, item))
                for other in range(self.n)
                if other != item
            ),
            width,
        )

    @staticmethod
    def ite(cond: z3.BoolRef, then: SList, other: SList) -> SList:
        if cond is TRUE:
            return then
        if cond is FALSE:
            return other
        return SList(
            [ite(cond, a, b) for a, b in zip(then.has, other.has, strict=True)],
            {pair: ite(cond, then.prec[pair], other.prec[pair]) for pair in then.prec},
        )

    def order(self, model: z3.ModelRef) -> list[int]:
        """The present items in order, read from a z3 model."""
        present = [i for i in range(self.n) if z3.is_true(model.eval(self.has[i], True))]
        key = {
            i: sum(
                1
                for j in present
                if j != i and z3.is_true(model.eval(self.before(j, i), model_completion=True))
            )
            for i in present
        }
        return sorted(present, key=lambda i: key[i])
