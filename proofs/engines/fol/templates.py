"""The library of conjunct templates, instantiated over a cell's vocabulary.

Each family is a clause shape over sorted variables; instantiating it over the
cell's relations gives the candidates Houdini starts from. Nothing here names a
variant, a site or a cell: the same families serve every cell, and the cell's
vocabulary (which follows from its records) decides what they become.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import combinations

from proofs.engines.fol.vocab import (
    ADDER,
    ADDER_OF,
    ANY,
    DERIVED,
    ITEM,
    SOME,
    TASK,
    Atom,
    Clause,
    Literal,
    Relation,
)

FAMILIES: dict[str, str] = {
    "item": "one or two facts about one item",
    "task": "two facts about one task, or its site and one or two more",
    "task-item": "an op slot (or delete record) and one more fact about its task or item; "
    "a task's copy, request or base row and one fact about the task",
    "same-item": "two tasks' facts about one item: they are the same task, or ordered",
    "fifo": "two tasks' facts about two items: not in this batch order, or the same task",
    "at-most-one": "two tasks' facts: the same task",
    "fresh": "while a call is at some point, no task has its items anywhere, or its items "
    "are (or are not) in some view",
    "item-flight": "one or two facts about one item, unless some task has an op slot of it "
    "(an existential: exists u. slot(u, i)) or some task is at some point (exists u. P(u))",
    "item3": "three facts about one item, or three unless some task is at some point",
    "item-adder": "one or two facts about one item, or one implying one of two others, unless "
    "the call that adds it is at some point (an existential: exists u. adds(u, i) & P(u))",
    "slot-adder": "a task's op slot of an item implies one fact about the item, unless the "
    "call that adds the item is at some point (a create in flight is of an item the local "
    "context has, or its adder still waits for its acks)",
    "slot-item": "a task's op slot of an item of a static kind (the model's pool, the "
    "never-played items) implies one fact about the item (a delete in flight of an item the "
    "model may create is of one it has created)",
}


def _literals(atoms: Iterable[Atom]) -> list[Literal]:
    out: list[Literal] = []
    for atom in atoms:
        out += [Literal(True, atom), Literal(False, atom)]
    return out


def _of(rels: Iterable[Relation], sorts: tuple[str, ...]) -> list[Relation]:
    return [r for r in rels if r.sorts == sorts]


#: Relations of an op slot, the ghost record of deletes, and what a call adds: the
#: facts compared across tasks and items.
SLOTS = frozenset(
    {"tsc", "tsd", "evc", "evd", "erc", "erd", "pc", "pd", "oc", "od", "dack", "adds", "cfl", "dfl"}
)


def candidates(relations: Iterable[Relation]) -> tuple[Clause, ...]:
    """Every instance of every family over `relations`, without duplicates."""
    rels = [r for r in relations if r.sorts != (TASK, TASK)]
    items = [Atom(r.name, ("i",)) for r in _of(rels, (ITEM,))]
    dynamic = [Atom(r.name, ("t",)) for r in _of(rels, (TASK,)) if not r.static]
    sites = [Atom(r.name, ("t",)) for r in _of(rels, (TASK,)) if r.static]
    pairs = _of(rels, (TASK, ITEM))
    present = {r.name for r in pairs}
    pairs += [
        Relation(name, (TASK, ITEM), summary="derived")
        for name, parts in DERIVED.items()
        if set(parts) <= present
    ]
    ti = [Atom(r.name, ("t", "i")) for r in pairs]
    slots_ti = [Atom(r.name, ("t", "i")) for r in pairs if r.name in SLOTS]
    slots_ui = [Atom(r.name, ("u", "i")) for r in pairs if r.name in SLOTS]
    slots_uj = [Atom(r.name, ("u", "j")) for r in pairs if r.name in SLOTS]
    ui = [Atom(r.name, ("u", "i")) for r in pairs if r.name != "adds"]
    dynamic_u = [Atom(a.name, ("u",)) for a in dynamic]
    eq = Literal(True, Atom("=", ("t", "u")))
    earlier = Atom("before", ("t", "u"))
    adds = Atom("adds", ("t", "i"))
    seen: set[frozenset[Literal]] = set()
    out: list[Clause] = []

    def emit(literals: Iterable[Literal], family: str) -> None:
        key = frozenset(literals)
        atoms = [lit.atom for lit in key]
        if len(set(atoms)) < len(atoms) or key in seen:
            return
        seen.add(key)
        out.append(Clause(tuple(sorted(key)), family))

    item_lits = _literals(items)
    for combo in _clauses(item_lits, 1, 2):
        emit(combo, "item")
    for combo in _clauses(_literals(dynamic), 1, 2):
        emit(combo, "task")
    for site in sites:
        for combo in _clauses(_literals(dynamic), 1, 2):
            emit((Literal(False, site), *combo), "task")
    for slot in slots_ti:
        emit((Literal(False, slot),), "task-item")
        for other in [*_literals(ti), *item_lits, *_literals(dynamic), *_literals(sites)]:
            emit((Literal(False, slot), other), "task-item")
    for row in [a for a in ti if a.name not in SLOTS]:
        for other in [*_literals(dynamic), *_literals(sites)]:
            emit((Literal(False, row), other), "task-item")
    for a in slots_ti:
        for b in slots_ui:
            emit((Literal(False, a), Literal(False, b), eq), "same-item")
            emit((Literal(False, a), Literal(False, b), Literal(True, earlier)), "same-item")
        for b in slots_uj:
            emit((Literal(False, a), Literal(False, b), Literal(False, earlier)), "fifo")
    some = [Atom(SOME + a.name, ("i",)) for a in slots_ti if a.name != "adds"]
    anyone = [Atom(ANY + a.name, ()) for a in dynamic]
    adders = [Atom(ADDER + a.name, ("i",)) for a in dynamic if a.name in ADDER_OF]
    for combo in _clauses(item_lits, 1, 2):
        for extra in [*some, *anyone]:
            emit((*combo, Literal(True, extra)), "item-flight")
        for extra in adders:
            emit((*combo, Literal(True, extra)), "item-adder")
    for slot in slots_ti:
        for item in item_lits:
            for extra in adders:
                emit((Literal(False, slot), item, Literal(True, extra)), "slot-adder")
    kinds = [Literal(False, Atom(r.name, ("i",))) for r in _of(rels, (ITEM,)) if r.static]
    for slot in slots_ti:
        for kind in kinds:
            for item in item_lits:
                emit((Literal(False, slot), kind, item), "slot-item")
    for combo in combinations(item_lits, 3):
        emit(combo, "item3")
        for extra in anyone:
            emit((*combo, Literal(True, extra)), "item3")
        if sum(not x.positive for x in combo) == 1:
            # one fact implies one of two others, unless its adder is at some point:
            # "the mirror is inside the local context and the never-played items, except
            # a waiting push's own items"
            for extra in adders:
                emit((*combo, Literal(True, extra)), "item-adder")
    for pc in dynamic:
        for b in ui:
            emit((Literal(False, pc), Literal(False, adds), Literal(False, b)), "fresh")
        for item in item_lits:
            emit((Literal(False, pc), Literal(False, adds), item), "fresh")
        for b in dynamic_u:
            emit((Literal(False, pc), Literal(False, b), eq), "at-most-one")
    return tuple(out)


def _clauses(literals: list[Literal], low: int, high: int) -> Iterator[tuple[Literal, ...]]:
    for size in range(low, high + 1):
        yield from combinations(literals, size)
