"""z3 terms compared up to the names of bound variables (`cover.py`'s containment).

z3 keeps a name in each quantifier, and two quantified formulas built by the same code
at different times get different names, so `eq` tells them apart; their bodies refer
to the bound variables by index, so the same body is one term. `alpha` walks two terms
through z3's C API (the Python wrappers cost ten times the walk) with a memo.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import z3


def skeleton(formula: Any) -> tuple[object, ...]:
    """What alpha-equal formulas share: their quantifier prefix and its body (z3 refers to
    bound variables in a body by index, so the body is one term for both)."""
    prefix: list[object] = []
    while z3.is_quantifier(formula):
        prefix += [formula.is_forall(), formula.num_vars()]
        formula = formula.body()
    return (*prefix, formula.get_id())


def by_skeleton(formulas: Sequence[Any]) -> dict[tuple[object, ...], list[Any]]:
    """The formulas by `skeleton`: only those with a formula's skeleton can equal it."""
    out: dict[tuple[object, ...], list[Any]] = {}
    for formula in formulas:
        out.setdefault(skeleton(formula), []).append(formula)
    return out


def short(formula: Any) -> str:
    """A formula in one line of at most 80 characters, for a refusal's reason."""
    text = " ".join(str(formula).split())
    return text if len(text) <= 80 else text[:77] + "..."


class Memo:
    """Pairs of terms already compared, by id. z3 reuses the id of a term it has freed,
    so the memo keeps every term it was asked about alive (their subterms with them)."""

    def __init__(self) -> None:
        self.pairs: dict[tuple[int, int], bool] = {}
        self.alive: list[tuple[Any, Any]] = []


def alpha(a: Any, b: Any, memo: Memo) -> bool:
    """The same term up to the names of bound variables (z3 keeps them in a quantifier,
    while its body refers to them by index). Walked through z3's C API on raw terms:
    the Python wrappers cost ten times more than the walk."""
    memo.alive.append((a, b))
    return _same(a.ctx_ref(), a.as_ast(), b.as_ast(), memo.pairs)


def _same(ctx: Any, a: Any, b: Any, memo: dict[tuple[int, int], bool]) -> bool:
    if z3.Z3_is_eq_ast(ctx, a, b):
        return True
    pair = (z3.Z3_get_ast_id(ctx, a), z3.Z3_get_ast_id(ctx, b))
    if pair in memo:
        return memo[pair]
    kind = z3.Z3_get_ast_kind(ctx, a)
    result = False
    if kind != z3.Z3_get_ast_kind(ctx, b):
        pass
    elif kind == z3.Z3_QUANTIFIER_AST:
        bound = z3.Z3_get_quantifier_num_bound(ctx, a)
        result = (
            z3.Z3_is_quantifier_forall(ctx, a) == z3.Z3_is_quantifier_forall(ctx, b)
            and z3.Z3_is_quantifier_exists(ctx, a) == z3.Z3_is_quantifier_exists(ctx, b)
            and bound == z3.Z3_get_quantifier_num_bound(ctx, b)
            and z3.Z3_get_quantifier_num_patterns(ctx, a) == 0
            and z3.Z3_get_quantifier_num_patterns(ctx, b) == 0
            and all(
                z3.Z3_is_eq_sort(
                    ctx,
                    z3.Z3_get_quantifier_bound_sort(ctx, a, n),
                    z3.Z3_get_quantifier_bound_sort(ctx, b, n),
                )
                for n in range(bound)
            )
            and _same(
                ctx,
                z3.Z3_get_quantifier_body(ctx, a),
                z3.Z3_get_quantifier_body(ctx, b),
                memo,
            )
        )
    elif kind == z3.Z3_APP_AST:
        arity = z3.Z3_get_app_num_args(ctx, a)
        result = (
            z3.Z3_is_eq_func_decl(ctx, z3.Z3_get_app_decl(ctx, a), z3.Z3_get_app_decl(ctx, b))
            and arity == z3.Z3_get_app_num_args(ctx, b)
            and all(
                _same(ctx, z3.Z3_get_app_arg(ctx, a, n), z3.Z3_get_app_arg(ctx, b, n), memo)
                for n in range(arity)
            )
        )
    memo[pair] = result
    return result
