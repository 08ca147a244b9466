"""Order relations on items: the local context's, the mirror's, the server's, a copy's and
a request's order, and the creation order, as binary (and task-indexed) relations.

The views `S`, `M`, `L` of `system.py` are sets. Where a cell's requests come from the
local context (a cleanup, a replacement) and a site's items enter it by creation time
after younger items were pushed (`modelled.enters_out_of_order`), the session's
order-aware diff is the diff by membership only while the request agrees with the mirror
in order on their common items. These relations state that lemma and the facts it rests
on as clauses, so they are evaluated on the explorer's states exactly as the other
conjuncts are (`order_structure`, `reachable_born`), and a wrong one is caught.

- `born(i, j)`: i was created before j. The items of the start are older than every
  other, in the start's server order; the others in the order the run created them
  (the first step that shows them anywhere); an item not created yet is younger than
  every created one. A strict total order on all items, fixed for a run.
- `lo`, `mo`, `so`: the local context's, the mirror's and the server's order: a strict
  total order on the view's items and on nothing else.
- `co(t, i, j)`, `ro(t, i, j)`: the order of task t's copy and of its fixed request.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from model import Config, State
from proofs.engines.fol.data import reachable_with
from proofs.engines.fol.vocab import ITEM, TASK, Clause, Relation, Structure, lit, neg
from proofs.engines.trace import Trace

#: The order relations and what each is the order of.
RELATIONS: tuple[Relation, ...] = (
    Relation("born", (ITEM, ITEM), static=True, summary="created earlier than"),
    Relation("lo", (ITEM, ITEM), summary="ahead of, in the local context"),
    Relation("mo", (ITEM, ITEM), summary="ahead of, in the mirror"),
    Relation("so", (ITEM, ITEM), summary="ahead of, on the server"),
    Relation("co", (TASK, ITEM, ITEM), summary="ahead of, in the task's copy"),
    Relation("ro", (TASK, ITEM, ITEM), summary="ahead of, in the task's fixed request"),
)
#: Each view's order, by the view's (unary) relation.
VIEW_ORDERS: dict[str, str] = {"L": "lo", "M": "mo", "S": "so"}
#: Each task row's order, by the row's relation.
ROW_ORDERS: dict[str, str] = {"copy": "co", "req": "ro"}


def births(before: State, after: State, known: tuple[str, ...]) -> tuple[str, ...]:
    """`known` (the creation order so far) and every item `after` shows that `before`
    did not, in the order `after` shows them: its creation order, the local context,
    the requests and copies, the ops at the server, the mirror, the server."""
    seen = set(known)
    out = list(known)
    rows: list[tuple[str, ...]] = [after.born, after.local]
    for task in after.tasks:
        rows += [task.request or (), task.copy or ()]
    rows += [tuple(op.item for op in after.to_server), after.mirror, after.server]
    for row in rows:
        for item in row:
            if item not in seen:
                seen.add(item)
                out.append(item)
    return tuple(out)


def start_born(config: Config) -> tuple[str, ...]:
    """The creation order at the start: the start's items, the server's order first."""
    scenario = config.scenario
    start = set(scenario.server) | set(scenario.initial_local)
    return tuple(
        i for i in dict.fromkeys((*scenario.server, *scenario.initial_local)) if i in start
    )


def along(config: Config, trace: Trace) -> Iterator[tuple[State, tuple[str, ...]]]:
    """The states of `trace` (its start first), each with the creation order so far."""
    born = births(trace.start, trace.start, start_born(config))
    yield trace.start, born
    state = trace.start
    for step in trace.steps:
        born = births(state, step.state, born)
        state = step.state
        yield state, born


def reachable_born(config: Config, limit: int = 200_000) -> Iterator[tuple[State, tuple[str, ...]]]:
    """Every state the model reaches in `config`, breadth-first, with the creation order
    of the first run found to it (start items first, in the server's order)."""
    return reachable_with(
        config, lambda start: births(start, start, start_born(config)), births, limit
    )


def _pairs(row: tuple[str, ...]) -> set[tuple[object, ...]]:
    return {(a, b) for n, a in enumerate(row) for b in row[n + 1 :]}


def order_rows(
    state: State, config: Config, born: tuple[str, ...]
) -> dict[str, frozenset[tuple[object, ...]]]:
    """The order relations of `state`, a state of `config` whose run created items in
    the order `born` (items it did not create follow, in the scenario's order)."""
    scenario = config.scenario
    every = (*born, *(i for i in scenario.items() if i not in born))
    rows: dict[str, set[tuple[object, ...]]] = {
        "born": _pairs(every),
        "made": {(i,) for i in born},
        "lo": _pairs(state.local),
        "mo": _pairs(state.mirror),
        "so": _pairs(state.server),
        "co": set(),
        "ro": set(),
    }
    for t, task in enumerate(state.tasks):
        rows["co"] |= {(t, a, b) for a, b in _pairs(task.copy or ())}
        rows["ro"] |= {(t, a, b) for a, b in _pairs(task.request or ())}
    return {name: frozenset(value) for name, value in rows.items()}


def order_structure(s: Structure, state: State, config: Config, born: tuple[str, ...]) -> Structure:
    """`s` (the structure `data.structure` maps `state` to) with the order relations."""
    relations: Mapping[str, frozenset[tuple[object, ...]]] = {
        **s.relations,
        **order_rows(state, config, born),
    }
    return Structure(s.tasks, s.items, relations, s.label)


# -- clauses ------------------------------------------------------------------------


def strict_order(name: str, view: str) -> tuple[Clause, ...]:
    """`name` is a strict total order on the items of `view` and holds of nothing else."""
    return (
        Clause((neg(name, "i", "i"),), f"{name} irreflexive"),
        Clause(
            (neg(name, "i", "j"), neg(name, "j", "k"), lit(name, "i", "k")), f"{name} transitive"
        ),
        Clause((neg(name, "i", "j"), lit(view, "i")), f"{name} only on {view}"),
        Clause((neg(name, "i", "j"), lit(view, "j")), f"{name} only on {view} (second)"),
        Clause(
            (
                neg(view, "i"),
                neg(view, "j"),
                lit("=", "i", "j"),
                lit(name, "i", "j"),
                lit(name, "j", "i"),
            ),
            f"{name} total on {view}",
        ),
    )


def row_order(name: str, row: str) -> tuple[Clause, ...]:
    """`name(t, ., .)` is a strict total order on task t's `row` and holds of nothing else."""
    return (
        Clause((neg(name, "t", "i", "i"),), f"{name} irreflexive"),
        Clause(
            (neg(name, "t", "i", "j"), neg(name, "t", "j", "k"), lit(name, "t", "i", "k")),
            f"{name} transitive",
        ),
        Clause((neg(name, "t", "i", "j"), lit(row, "t", "i")), f"{name} only on {row}"),
        Clause((neg(name, "t", "i", "j"), lit(row, "t", "j")), f"{name} only on {row} (second)"),
        Clause(
            (
                neg(row, "t", "i"),
                neg(row, "t", "j"),
                lit("=", "i", "j"),
                lit(name, "t", "i", "j"),
                lit(name, "t", "j", "i"),
            ),
            f"{name} total on {row}",
        ),
    )


#: `born` is a strict total order on every item.
BORN: tuple[Clause, ...] = (
    Clause((neg("born", "i", "i"),), "born irreflexive"),
    Clause(
        (neg("born", "i", "j"), neg("born", "j", "k"), lit("born", "i", "k")), "born transitive"
    ),
    Clause((lit("=", "i", "j"), lit("born", "i", "j"), lit("born", "j", "i")), "born total"),
)


def axioms() -> tuple[Clause, ...]:
    """The order structure every state has: `born` total, each view's and row's order a
    strict total order on it."""
    out = list(BORN)
    for view, name in VIEW_ORDERS.items():
        out += strict_order(name, view)
    for row, name in ROW_ORDERS.items():
        out += row_order(name, row)
    return tuple(out)


#: The local context is in creation order: livekit's insert puts an item entering late
#: after the last item created no later than it, a replacement's copy keeps the order
#: and its own items are the youngest, a cleanup only removes (`model/local_order.py`).
LOCAL_BY_CREATION = Clause((neg("lo", "i", "j"), lit("born", "i", "j")), "local in creation order")
#: A copy of the local context keeps its order, so is in creation order too.
COPY_BY_CREATION = Clause(
    (neg("co", "t", "i", "j"), lit("born", "i", "j")), "a copy in creation order"
)
#: The lemma the mirror-diff session's diff by membership needs of a live-context
#: request, as a fact of every state: the local context agrees with the mirror in order
#: on their common items.
LOCAL_AGREES_WITH_MIRROR = Clause(
    (neg("lo", "i", "j"), neg("M", "i"), neg("M", "j"), lit("mo", "i", "j")),
    "the local context agrees with the mirror in order",
)
#: The same lemma for a copy of the local context (a replacement's request).
COPY_AGREES_WITH_MIRROR = Clause(
    (neg("co", "t", "i", "j"), neg("M", "i"), neg("M", "j"), lit("mo", "i", "j")),
    "a copy agrees with the mirror in order",
)
#: What makes both lemmas hold where they do: the mirror is in creation order.
MIRROR_BY_CREATION = Clause(
    (neg("mo", "i", "j"), lit("born", "i", "j")), "the mirror in creation order"
)
#: The same with the sorts' over-approximation in mind: the first-order FIFOs are exact
#: only at batch grain, so a push's create may pass its own delete of an older item, and
#: the mirror then holds both, out of creation order, until the deleted event comes. An
#: item with a delete in flight is left out.
MIRROR_BY_CREATION_SETTLED = Clause(
    (
        neg("mo", "i", "j"),
        lit("born", "i", "j"),
        lit("some:dfl", "i"),
        lit("some:dfl", "j"),
    ),
    "the mirror in creation order, but for items with a delete in flight",
)
