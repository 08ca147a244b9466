"""The first-order vocabulary: two sorts, relations over them, and clauses as data.

A relation has a signature over the sorts `task` and `item`; a clause is a
disjunction of literals over sorted variables, universally quantified. Clauses
are data so that the same conjunct is checked by z3 and evaluated on concrete
structures (the explorer's states mapped to relations) without a second copy.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from itertools import product

from attrs import frozen

TASK = "task"
ITEM = "item"

#: Variables by sort; a clause uses at most these.
VARIABLES: dict[str, str] = {"t": TASK, "u": TASK, "w": TASK, "i": ITEM, "j": ITEM}


#: Relations defined by others (a disjunction of same-signature ones): a create of the
#: item by the task in flight anywhere, a delete likewise.
DERIVED: dict[str, tuple[str, ...]] = {
    "cfl": ("tsc", "evc", "erc"),
    "dfl": ("tsd", "evd", "erd"),
}


def with_derived(
    relations: Mapping[str, frozenset[tuple[object, ...]]],
) -> dict[str, frozenset[tuple[object, ...]]]:
    """`relations` and every derived relation computed from them."""
    out = dict(relations)
    for name, parts in DERIVED.items():
        if all(p in out for p in parts):
            out[name] = frozenset().union(*(out[p] for p in parts))
    return out


def names(clause: Clause) -> frozenset[str]:
    """The base relations a clause reads (derived ones expanded)."""
    out: set[str] = set()
    for literal in clause.literals:
        out.update(DERIVED.get(literal.atom.name, (literal.atom.name,)))
    return frozenset(out)


@frozen
class Relation:
    """A relation symbol: its name, argument sorts, and whether it never changes."""

    name: str
    sorts: tuple[str, ...]
    static: bool = False
    summary: str = ""


@frozen(order=True)
class Atom:
    """`name(args)`, or `args[0] = args[1]` when `name` is '='."""

    name: str
    args: tuple[str, ...]

    def text(self) -> str:
        if self.name == "=":
            return f"{self.args[0]} = {self.args[1]}"
        return f"{self.name}({', '.join(self.args)})"


@frozen(order=True)
class Literal:
    """An atom or its negation: the unit the clause templates are built from."""

    positive: bool
    atom: Atom

    def text(self) -> str:
        if self.atom.name == "=" and not self.positive:
            return f"{self.atom.args[0]} != {self.atom.args[1]}"
        return self.atom.text() if self.positive else f"~{self.atom.text()}"


@frozen(order=True)
class Clause:
    """A universally quantified disjunction, with a name for reports."""

    literals: tuple[Literal, ...]
    name: str = ""

    @property
    def variables(self) -> tuple[str, ...]:
        seen: list[str] = []
        for literal in self.literals:
            for arg in literal.atom.args:
                if arg not in seen:
                    seen.append(arg)
        return tuple(seen)

    def text(self) -> str:
        """As an implication: negative literals on the left, positive on the right."""
        left = [lit.atom.text() for lit in self.literals if not lit.positive]
        right = [lit.text() for lit in self.literals if lit.positive]
        body = " | ".join(right) if right else "false"
        quantified = ", ".join(self.variables)
        head = f"forall {quantified}. " if quantified else ""
        return head + (f"{' & '.join(left)} -> {body}" if left else body)


def lit(name: str, *args: str, positive: bool = True) -> Literal:
    return Literal(positive, Atom(name, tuple(args)))


def neg(name: str, *args: str) -> Literal:
    return Literal(False, Atom(name, tuple(args)))


@frozen
class Structure:
    """A finite first-order structure: universes and the tuples each relation holds."""

    tasks: tuple[object, ...]
    items: tuple[object, ...]
    relations: Mapping[str, frozenset[tuple[object, ...]]]
    #: What each element is called in reports (T0, msg0, ...).
    label: str = ""

    def holds(self, atom: Atom, env: Mapping[str, object]) -> bool:
        values = tuple(env[arg] for arg in atom.args)
        if atom.name == "=":
            return values[0] == values[1]
        return values in self.relations.get(atom.name, frozenset())

    def universe(self, sort: str) -> tuple[object, ...]:
        return tuple(self.tasks) if sort == TASK else tuple(self.items)

    def assignments(self, variables: tuple[str, ...]) -> Iterator[dict[str, object]]:
        pools = [self.universe(VARIABLES[v]) for v in variables]
        for values in product(*pools):
            yield dict(zip(variables, values, strict=True))

    def satisfies(self, clause: Clause) -> bool:
        return self.witness(clause) is None

    def witness(self, clause: Clause) -> dict[str, object] | None:
        """An assignment that falsifies the clause, or None."""
        for env in self.assignments(clause.variables):
            if not any(self.holds(x.atom, env) == x.positive for x in clause.literals):
                return env
        return None
