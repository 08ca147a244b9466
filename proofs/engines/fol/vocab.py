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
VARIABLES: dict[str, str] = {"t": TASK, "u": TASK, "w": TASK, "i": ITEM, "j": ITEM, "k": ITEM}


#: Relations defined by others (a disjunction of same-signature ones): a create of the
#: item by the task in flight anywhere, a delete likewise.
DERIVED: dict[str, tuple[str, ...]] = {
    "cfl": ("tsc", "evc", "erc"),
    "dfl": ("tsd", "evd", "erd"),
}


#: Existential atoms: `some:R(i)` is `exists u. R(u, i)` for a task-item relation R, and
#: `any:P` is `exists u. P(u)` for a task relation P. They appear only positively in
#: the templates, so an invariant has `forall item exists task` (a Skolem function from
#: items to tasks, none back) and stays in the fragment z3 decides.
SOME = "some:"
ANY = "any:"
#: `adder:P(i)` is `exists u. adds(u, i) & P(u)`: the call that adds item i is at point
#: P (or holds the lock P, ...). Also only positive in the templates, so it is one more
#: Skolem function from items to tasks ("a push waiting for its acks has i as its own").
ADDER = "adder:"
#: The task relations an `adder:` atom may name.
ADDER_OF = frozenset(
    {"idle", "copied", "wact", "wprov", "wacks", "done", "failed", "bound"}
    | {"aown", "await", "pown", "pwait"}
)


def projected(name: str) -> str | None:
    """The relation an existential atom projects, or None for any other atom."""
    for prefix in (SOME, ANY, ADDER):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return None


def with_derived(
    relations: Mapping[str, frozenset[tuple[object, ...]]],
) -> dict[str, frozenset[tuple[object, ...]]]:
    """`relations` and every derived and existential relation computed from them."""
    out = dict(relations)
    for name, parts in DERIVED.items():
        if all(p in out for p in parts):
            out[name] = frozenset().union(*(out[p] for p in parts))
    adds = out.get("adds", frozenset())
    for name, rows in list(out.items()):
        if name in _PAIRS:
            out[SOME + name] = frozenset((row[1],) for row in rows)
        elif name not in ("before", "aq"):
            out[ANY + name] = frozenset({()}) if rows else frozenset()
        if name in ADDER_OF:
            out[ADDER + name] = frozenset((i,) for t, i in adds if (t,) in rows)
    return out


#: Task-item relations by name, so an empty one still gets its `some:` projection.
_PAIRS = frozenset(
    {
        *("adds", "drops", "req", "base", "copy", "tsc", "tsd", "evc", "evd", "erc", "erd"),
        *("pc", "pd", "dack", "oc", "od", "cfl", "dfl", "owes"),
    }
)


def base_names(name: str) -> tuple[str, ...]:
    """The base relations an atom reads (derived and existential ones expanded; an
    `adder:` atom reads `adds` too, which `adder_parts` leaves out)."""
    inner = projected(name) or name
    parts = DERIVED.get(inner, (inner,))
    return ("adds", *parts) if name.startswith(ADDER) else parts


def adder_parts(name: str) -> tuple[str, ...]:
    """The relations an existential atom's disjunction is over (`adds` aside)."""
    inner = projected(name) or name
    return DERIVED.get(inner, (inner,))


def names(clause: Clause) -> frozenset[str]:
    """The base relations a clause reads (derived ones expanded)."""
    out: set[str] = set()
    for literal in clause.literals:
        out.update(base_names(literal.atom.name))
    return frozenset(out)


@frozen
class Relation:
    """A relation symbol: its name, argument sorts, and whether it never changes."""

    name: str
    sorts: tuple[str, ...]
    static: bool = False
    summary: str = ""


@frozen(order=True, cache_hash=True)
class Atom:
    """`name(args)`, or `args[0] = args[1]` when `name` is '='."""

    name: str
    args: tuple[str, ...]

    def text(self) -> str:
        if self.name == "=":
            return f"{self.args[0]} = {self.args[1]}"
        return f"{self.name}({', '.join(self.args)})"


@frozen(order=True, cache_hash=True)
class Literal:
    """An atom or its negation: the unit the clause templates are built from."""

    positive: bool
    atom: Atom

    def text(self) -> str:
        if self.atom.name == "=" and not self.positive:
            return f"{self.atom.args[0]} != {self.atom.args[1]}"
        return self.atom.text() if self.positive else f"~{self.atom.text()}"


#: A clause's variables by its literals (asked for in every evaluation, so kept).
_CLAUSE_VARIABLES: dict[tuple[Literal, ...], tuple[str, ...]] = {}


@frozen(order=True, cache_hash=True)
class Clause:
    """A universally quantified disjunction, with a name for reports."""

    literals: tuple[Literal, ...]
    name: str = ""

    @property
    def variables(self) -> tuple[str, ...]:
        found = _CLAUSE_VARIABLES.get(self.literals)
        if found is None:
            seen: list[str] = []
            for literal in self.literals:
                for arg in literal.atom.args:
                    if arg not in seen:
                        seen.append(arg)
            found = _CLAUSE_VARIABLES[self.literals] = tuple(seen)
        return found

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
