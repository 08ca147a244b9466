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
    "ghost": "the definition of the ghost owes (the call drops the item and its copy has "
    "it, and it waits for a lock), and the ghost implying one fact about its task or item "
    "(these families only with `candidates(..., ghosts=True)`, in cells with the ghost)",
    "task3": "three facts about one task (a call waiting for the activity lock waits in "
    "its queue or was handed the lock)",
    "queue": "the activity lock's queue: a task ahead of another has one or two facts, or "
    "two or three facts of one task rule out a fact of every other task",
    "item-owed": "one or two facts about an item, unless some task has an op slot of it or "
    "some call owes it (an item the mirror holds and the local context lacks is being "
    "deleted or owed by a waiting call); an op slot of an item implies one fact about it "
    "unless some call owes it",
    "row-owed": "a fact about an item and one or two about a task imply the task's row of "
    "the item (or its absence), unless some call owes the item or has an op of it in flight",
    "task-rows": "one or two facts about a task and one of its rows imply another row (a "
    "waiting call whose request is no longer the live local context still requests what "
    "its copy had and it keeps)",
    "queue-rows": "a task ahead of another in the lock's queue (or with a fact, the other "
    "with a fact) has a row of an item: then the other has a row of it, unless some call "
    "owes it (a waiter's copy has what the calls ahead of it added)",
    "queue-owed": "a call owes an item, and another call ahead of it in the lock's queue (or "
    "with one or two facts) has a fact about the item: then it has a row of it (a call "
    "waiting ahead of the one that removed an item still has the item in its request)",
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


def candidates(relations: Iterable[Relation], ghosts: bool = False) -> tuple[Clause, ...]:
    """Every instance of every family over `relations`, without duplicates. The families
    over the ghost `owes` (`GHOST_FAMILIES`) only with `ghosts`: they are many (about
    170,000 on lock5 {replacement}) and no proof needs them yet, so by default a cell
    with the ghost gets the same candidates as without it."""
    rels = [r for r in relations if r.sorts != (TASK, TASK) and (ghosts or r.name != "owes")]
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
    if ghosts and "owes" in present:
        for literals, family in _owed(item_lits, dynamic, ti, some):
            emit(literals, family)
    return tuple(out)


def _owed(
    item_lits: list[Literal], dynamic: list[Atom], ti: list[Atom], some: list[Atom]
) -> Iterator[tuple[tuple[Literal, ...], str]]:
    """The families over the ghost `owes` (`ghosts.py`), only in cells that have it."""
    owes, drops, copy = (Atom(name, ("t", "i")) for name in ("owes", "drops", "copy"))
    waits = [a for a in dynamic if a.name in ("wact", "wprov")]
    yield (Literal(False, owes), *(Literal(True, w) for w in waits)), "ghost"
    for w in waits:
        yield (
            (Literal(False, drops), Literal(False, copy), Literal(False, w), Literal(True, owes)),
            "ghost",
        )
    for beside in [*_literals([a for a in ti if a != owes]), *item_lits]:
        yield (Literal(False, owes), beside), "ghost"
    for three in combinations(_literals(dynamic), 3):
        if any(not x.positive for x in three):
            yield three, "task3"
    ahead, behind = Atom("aq", ("t", "u")), Atom("aq", ("u", "t"))
    eq = Literal(True, Atom("=", ("t", "u")))
    dynamic_u = [Atom(a.name, ("u",)) for a in dynamic]
    for order in (ahead, behind):
        for fact in _literals([*dynamic, *dynamic_u]):
            yield (Literal(False, order), fact), "queue"
    premises = [Literal(False, a) for a in dynamic]
    dynamic_pos = [Literal(True, a) for a in dynamic]
    several: list[tuple[Literal, ...]] = [*combinations(premises, 2), *combinations(premises, 3)]
    for facts_t in several:
        for other in dynamic_u:
            yield (*facts_t, Literal(False, other), eq), "queue"
    owed = Literal(True, Atom(SOME + "owes", ("i",)))
    others = [Literal(True, a) for a in some if a.name != SOME + "owes"]
    for about in _clauses(item_lits, 1, 2):
        yield (*about, owed), "item-owed"
        for extra in others:
            yield (*about, extra, owed), "item-owed"
    for slot in [a for a in ti if a.name in SLOTS | {"owes"}]:
        for item in item_lits:
            yield (Literal(False, slot), item, owed), "item-owed"
    rows = [a for a in ti if a.name in ("req", "base", "copy", "adds", "drops")]
    task_combos = list(_clauses(_literals(dynamic), 1, 2))
    flights = [Literal(True, a) for a in some if a.name in (SOME + "cfl", SOME + "dfl")]
    for item in item_lits:
        for row in _literals(rows):
            for combo in task_combos:
                yield (item, *combo, row), "row-owed"
                yield (item, *combo, row, owed), "row-owed"
                for extra in flights:
                    yield (item, *combo, row, extra, owed), "row-owed"
    premise_rows = [Literal(False, a) for a in rows]
    facts: list[list[Literal]] = [
        *([x] for x in _literals(dynamic)),
        *([p, q] for p in premises for q in dynamic_pos),
    ]
    for premise in premise_rows:
        for concl in _clauses([Literal(True, a) for a in rows if a != premise.atom], 1, 2):
            for fact_list in facts:
                yield (premise, *concl, *fact_list), "task-rows"
    rows_u = [Atom(a.name, ("u", "i")) for a in rows]
    ahead_of: list[list[Literal]] = [
        [Literal(False, ahead)],
        *([p, Literal(False, q)] for p in premises for q in dynamic_u),
    ]
    for placed in ahead_of:
        for row in _literals(rows):
            for row_u in _literals(rows_u):
                yield (*placed, row, row_u), "queue-rows"
                yield (*placed, row, row_u, owed), "queue-rows"
    owes_u = Literal(False, Atom("owes", ("u", "i")))
    for item in item_lits:
        for row in _literals(rows):
            for queue in (ahead, behind):
                yield (owes_u, Literal(False, queue), item, row), "queue-owed"
            some_facts: list[tuple[Literal, ...]] = [
                *combinations(premises, 1),
                *combinations(premises, 2),
            ]
            for facts_t in some_facts:
                yield (owes_u, *facts_t, item, row), "queue-owed"
                yield (owes_u, *facts_t, item, row, eq), "queue-owed"


def _clauses(literals: list[Literal], low: int, high: int) -> Iterator[tuple[Literal, ...]]:
    for size in range(low, high + 1):
        yield from combinations(literals, size)
