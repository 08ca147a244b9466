"""One cell as z3 queries: its static axioms, initial states, fixed conjuncts, and each
action as a relation between a pre and a post vocabulary.

The scenario rules of `model.scenarios.validate` are axioms here, over every number
of calls: ids are fresh, one call adds an item, snapshot sites drop nothing. Beside
them, two assumptions the catalog's scenarios meet and the verdict names: every
local-context call (the cleanup) drops exactly the never-played items, and at the
start the local context is the server conversation less the never-played items.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import product
from typing import Any

import z3

from model import RequestSource
from proofs.engines.fol import agreement_z3, order_z3
from proofs.engines.fol.actions import actions
from proofs.engines.fol.system import (
    PCS,
    Action,
    Cell,
    Expr,
    FiniteSorts,
    Run,
    Sorts,
    relations,
    symbols,
)
from proofs.engines.fol.vocab import (
    ADDER,
    ITEM,
    TASK,
    VARIABLES,
    Clause,
    Literal,
    Relation,
    adder_parts,
    lit,
    neg,
    projected,
)

#: What every verdict of this engine rests on, beside the cell's own options.
ASSUMPTIONS: tuple[str, ...] = (
    "each call pushes once",
    "item ids are fresh and each is added by one call; snapshot sites drop nothing",
    "every cleanup drops exactly the never-played items, which are on the server at the "
    "start and nowhere else",
    "at the start the mirror is the server conversation and the local context is the "
    "server conversation less the never-played items (all of it where no site is a "
    "cleanup)",
    "the request of a mirror-diff push agrees with the mirror in order on common items "
    "(so the order-aware diff is the diff by membership)",
)


def fixed_conjuncts(cell: Cell) -> tuple[Clause, ...]:
    """Structure every state has: one program counter, `before` a strict total order, and
    (with locks) `aq` a strict total order on the activity lock's waiters."""
    out = [Clause(tuple(lit(pc, "t") for pc in PCS), "some program counter")]
    for a, first in enumerate(PCS):
        for second in PCS[a + 1 :]:
            out.append(Clause((neg(first, "t"), neg(second, "t")), f"not both {first}, {second}"))
    out += [
        Clause((neg("before", "t", "t"),), "before is irreflexive"),
        Clause(
            (neg("before", "t", "u"), neg("before", "u", "w"), lit("before", "t", "w")),
            "before is transitive",
        ),
        Clause((lit("=", "t", "u"), lit("before", "t", "u"), lit("before", "u", "t")), "total"),
    ]
    if not cell.three_way:
        # the activity lock's waiters in the order they came: a strict total order on them
        out += [
            Clause((neg("aq", "t", "t"),), "aq is irreflexive"),
            Clause(
                (neg("aq", "t", "u"), neg("aq", "u", "w"), lit("aq", "t", "w")),
                "aq is transitive",
            ),
            Clause((neg("aq", "t", "u"), lit("await", "t")), "aq orders waiters"),
            Clause((neg("aq", "t", "u"), lit("await", "u")), "aq orders waiters only"),
            Clause(
                (
                    neg("await", "t"),
                    neg("await", "u"),
                    lit("=", "t", "u"),
                    lit("aq", "t", "u"),
                    lit("aq", "u", "t"),
                ),
                "aq is total on waiters",
            ),
        ]
    return tuple(out)


SAFETY = Clause((neg("dack", "t", "i"), lit("drops", "t", "i")), "no unintended delete")


class Problem:
    """The z3 side of a cell over given sorts."""

    def __init__(self, cell: Cell, sorts: Sorts) -> None:
        self.cell = cell
        self.sorts = sorts
        self.relations: tuple[Relation, ...] = relations(cell)
        self.by_name: dict[str, Relation] = {r.name: r for r in self.relations}
        self.actions: tuple[Action, ...] = actions(cell, sorts)
        #: The pre-state symbols every query shares.
        self.pre: dict[str, Any] = self.symbols("")
        self._pre_clauses: dict[Clause, Expr] = {}
        self._changed: dict[str, frozenset[str]] = {}
        self._effects: dict[tuple[str, str], Run] = {}
        self._terms: dict[tuple[object, ...], Expr] = {}
        self._axioms: list[Expr] | None = None
        #: A finite instance's packed readers, by the vocabulary's symbol names (`solve.read`).
        self.packed: dict[tuple[str, ...], tuple[list[tuple[str, tuple[object, ...]]], Expr]] = {}

    def symbols(self, suffix: str) -> dict[str, Any]:
        return symbols(self.cell, self.sorts, suffix)

    # -- formulas over one vocabulary ------------------------------------------------

    def clause(self, clause: Clause, rels: Mapping[str, Any]) -> Expr:
        """`clause` over the vocabulary `rels`: one quantifier, or on a finite instance
        the conjunction of its ground instances (built from cached atoms)."""
        if isinstance(self.sorts, FiniteSorts):
            return self._ground(clause, rels)
        names = clause.variables

        def body(*values: Any) -> Expr:
            env = dict(zip(names, values, strict=True))
            disjuncts = []
            for literal in clause.literals:
                args = [env[a] for a in literal.atom.args]
                if literal.atom.name == "=":
                    atom = args[0] == args[1]
                    disjuncts.append(atom if literal.positive else z3.Not(atom))
                else:
                    disjuncts.append(self._literal(rels, literal, args))
            return z3.Or(*disjuncts) if len(disjuncts) > 1 else disjuncts[0]

        return self.sorts.forall_many([VARIABLES[v] for v in names], body)

    def _literal(self, rels: Mapping[str, Any], literal: Literal, args: Sequence[Any]) -> Expr:
        """A relation literal at `args`, built once per vocabulary and arguments."""
        name = literal.atom.name
        parts = adder_parts(name)
        inner = projected(name)
        key = (
            name[: len(name) - len(inner)] if inner else "",
            tuple(rels[p].name() for p in parts),
            tuple(a.get_id() for a in args),
            literal.positive,
        )
        if key not in self._terms:

            def atom_at(*xs: Any) -> Expr:
                atoms = [rels[p](*xs) for p in parts]
                return atoms[0] if len(atoms) == 1 else z3.Or(*atoms)

            if inner is None:
                atom = atom_at(*args)
            elif name.startswith(ADDER):
                adds = rels["adds"]
                atom = self.sorts.exists(TASK, lambda u: z3.And(adds(u, *args), atom_at(u)))
            else:
                atom = self.sorts.exists(TASK, lambda u: atom_at(u, *args))
            self._terms[key] = atom if literal.positive else z3.Not(atom)
        return self._terms[key]

    def _ground(self, clause: Clause, rels: Mapping[str, Any]) -> Expr:
        sorts = self.sorts
        assert isinstance(sorts, FiniteSorts)
        names = clause.variables
        pools = [sorts.elements(None, VARIABLES[v]) for v in names]
        instances = []
        for picks in product(*(range(len(pool)) for pool in pools)):
            env = dict(zip(names, picks, strict=True))
            disjuncts: list[Expr] = []
            for literal in clause.literals:
                at = [env[a] for a in literal.atom.args]
                if literal.atom.name == "=":
                    if (at[0] == at[1]) == literal.positive:
                        break  # this instance holds whatever the relations are
                    continue
                args = [
                    pools[names.index(a)][k] for a, k in zip(literal.atom.args, at, strict=True)
                ]
                disjuncts.append(self._literal(rels, literal, args))
            else:
                if not disjuncts:
                    return sorts.true(False)
                instances.append(disjuncts[0] if len(disjuncts) == 1 else z3.Or(*disjuncts))
        if not instances:
            return sorts.true()
        return instances[0] if len(instances) == 1 else z3.And(*instances)

    def pre_clause(self, clause: Clause) -> Expr:
        """`clause` over the pre-state symbols, built once."""
        if clause not in self._pre_clauses:
            self._pre_clauses[clause] = self.clause(clause, self.pre)
        return self._pre_clauses[clause]

    def pre_axioms(self) -> list[Expr]:
        """`axioms` over the pre-state symbols, built once (every action's solver has them)."""
        if self._axioms is None:
            self._axioms = self.axioms(self.pre)
        return self._axioms

    def axioms(self, rels: Mapping[str, Any]) -> list[Expr]:
        """The static facts, true in every state."""
        s = self.sorts
        cell = self.cell
        sites = [rels[cell.site_rel(site)] for site in cell.sites]
        adds, drops, np = rels["adds"], rels["drops"], rels["np"]
        out = [
            s.forall(TASK, lambda t: z3.Or(*(f(t) for f in sites))),
            s.forall(
                TASK,
                lambda t: s.forall(
                    ITEM,
                    lambda i: s.forall(
                        TASK, lambda u: z3.Implies(z3.And(adds(t, i), adds(u, i)), t == u)
                    ),
                ),
            ),
            s.forall(TASK, lambda t: s.forall(ITEM, lambda i: z3.Not(z3.And(adds(t, i), np(i))))),
        ]
        for a, first in enumerate(sites):
            for second in sites[a + 1 :]:
                out.append(_exclusive(s, first, second))
        if not cell.uses(RequestSource.LOCAL_CONTEXT):
            # never-played items are what a cleanup drops; with no cleanup there are none
            # (the local context starts as the server conversation)
            out.append(s.forall(ITEM, lambda i: z3.Not(np(i))))
        for site, f in zip(cell.sites, sites, strict=True):
            if site.request is RequestSource.MIRROR_SNAPSHOT:
                out.append(_drops_as(s, f, drops, None))
            if site.request is RequestSource.LOCAL_CONTEXT:
                out.append(_drops_as(s, f, drops, np))
        if cell.agreement:
            live = [
                f
                for site, f in zip(cell.sites, sites, strict=True)
                if site.request is RequestSource.LOCAL_CONTEXT
            ]
            out += agreement_z3.axioms(s, rels, live)
        if cell.server_items:
            pool = rels["pool"]
            out += [
                s.forall(
                    TASK, lambda t: s.forall(ITEM, lambda i: z3.Not(z3.And(adds(t, i), pool(i))))
                ),
                s.forall(ITEM, lambda i: z3.Not(z3.And(pool(i), np(i)))),
            ]
        return out

    def init(self, rels: Mapping[str, Any]) -> list[Expr]:
        """The initial states: every task idle, nothing in flight, views as the start has them."""
        s = self.sorts
        S, M, L, acked, np = rels["S"], rels["M"], rels["L"], rels["acked"], rels["np"]
        adds = rels["adds"]
        out = [
            s.forall(ITEM, lambda i: z3.And(M(i) == S(i), acked(i) == S(i))),
            s.forall(ITEM, lambda i: L(i) == z3.And(S(i), z3.Not(np(i)))),
            s.forall(ITEM, lambda i: z3.Implies(np(i), S(i))),
            s.forall(
                TASK, lambda t: s.forall(ITEM, lambda i: z3.Implies(adds(t, i), z3.Not(S(i))))
            ),
        ]
        if self.cell.server_items:
            pool = rels["pool"]
            out.append(s.forall(ITEM, lambda i: z3.Implies(pool(i), z3.Not(S(i)))))
        if self.cell.ordered:
            out += order_z3.init(s, rels)
        if self.cell.agreement:
            out += agreement_z3.init(s, rels)
        for rel in self.relations:
            if rel.static or rel.name in ("S", "M", "L", "acked", "before"):
                continue
            if self.cell.ordered and rel.name in order_z3.INITIALISED:
                continue
            if self.cell.agreement and rel.name in agreement_z3.INITIALISED:
                continue
            value = rel.name == "idle"
            f = rels[rel.name]
            out.append(self._all(rel, lambda *args, f=f, value=value: f(*args) == value))
        out += [self.clause(c, rels) for c in fixed_conjuncts(self.cell) if "before" in c.text()]
        return out

    def _all(self, rel: Relation, body: Any) -> Expr:
        return self.sorts.forall_many(rel.sorts, body)

    # -- one action as a relation ----------------------------------------------------

    def step(
        self, action: Action, pre: Mapping[str, Any], post: Mapping[str, Any], tag: str
    ) -> list[Expr]:
        """The action's guard over `pre`, and each changed relation of `post` defined from it;
        relations the action leaves alone are equal."""
        run = self.effect(action, tag) if pre is self.pre else self._effect(action, pre, tag)
        out = [run.guard]
        for rel in self.relations:
            if rel.static:
                continue
            fn = run[rel.name]
            target = post[rel.name]
            if fn is pre[rel.name] and target is pre[rel.name]:
                continue
            out.append(
                self.sorts.forall_many(
                    rel.sorts, lambda *xs, target=target, fn=fn: target(*xs) == fn(*xs)
                )
            )
        return out

    def effect(self, action: Action, tag: str) -> Run:
        """The action's effect on the pre-state symbols, its parameters named with `tag`,
        built once per (action, tag): `cover.py` builds the effects its check then asks
        with (`step`, `changed`). Elsewhere each is built where it was before, so the
        terms, and z3's search over them, are as they were."""
        key = (action.name, tag)
        if key not in self._effects:
            self._effects[key] = self._effect(action, self.pre, tag)
        return self._effects[key]

    def _effect(self, action: Action, pre: Mapping[str, Any], tag: str) -> Run:
        params = {
            name: z3.Const(f"{name}@{tag}", self.sorts.of(sort)) for name, sort in action.params
        }
        return action.effect(Run(dict(pre), self.sorts.true()), params)

    def changed(self, action: Action) -> frozenset[str]:
        """Relations the action may change (read off its effect, not written by hand)."""
        if action.name in self._changed:
            return self._changed[action.name]
        pre = self.pre
        # which relations change does not depend on the parameters' names: any effect
        # already built over the pre state will do
        built = [run for (name, _), run in self._effects.items() if name == action.name]
        run = built[0] if built else self.effect(action, "c")
        out = frozenset(r.name for r in self.relations if run[r.name] is not pre[r.name])
        self._changed[action.name] = out
        return out


def _exclusive(s: Sorts, first: Any, second: Any) -> Expr:
    return s.forall(TASK, lambda t: z3.Not(z3.And(first(t), second(t))))


def _drops_as(s: Sorts, site: Any, drops: Any, items: Any) -> Expr:
    """A call of `site` drops nothing (`items` None) or exactly `items`."""

    def row(t: Any) -> Expr:
        def one(i: Any) -> Expr:
            wanted = s.true(False) if items is None else items(i)
            return z3.Implies(site(t), drops(t, i) == wanted)

        return s.forall(ITEM, one)

    return s.forall(TASK, row)
