"""The first-order transition system of one cell, generated from the model's records.

A cell is a variant, a set of sites that calls may be of (any number of calls of
each), and an environment. Every action below is written once, over the fields of
`model.sites.Site` (request source, local update), `model.variants.Variant`
(which sites lock, local-update overrides, session kind) and
`model.environment.Environment` (which options add actions), as the twin of the
function of the same name in `model/moves.py`. Nothing is written per variant.

The state is relations over two uninterpreted sorts, tasks and items; an op is
its static slot (task, kind, item), since each call pushes once and sends at
most one op per (kind, item). `docs/proofs.md` ("Proofs for every number of
calls") lists every over-approximation made here and why safety survives it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import product
from typing import Any

import z3
from attrs import field, frozen

from model import (
    SHAPES_BY_NAME,
    Diff,
    Environment,
    RequestSource,
    SessionShape,
    Site,
    Variant,
)
from proofs.engines.fol import ghosts
from proofs.engines.fol.vocab import ITEM, TASK, Relation

Expr = Any  # a z3 BoolRef; z3's stubs are loose, so the alias keeps signatures readable
Fn = Callable[..., Expr]

PCS: tuple[str, ...] = ("idle", "copied", "wact", "wprov", "wacks", "done", "failed")

#: Mutants: deliberate faults, each a check that the proof can fail.
MUTANTS: dict[str, str] = {
    "no-base": "three-way without the base: delete what the expected view has and the "
    "request lacks",
    "diff-mirror": "three-way diffing against the mirror instead of the expected view",
    "events-out-of-order": "the session may apply any event in flight, not only the next",
    "early-release": "the push releases its locks when it sends, before the acks",
    "copy-first": "under stale-copies a caller-copy call must follow a copy step (no call "
    "from idle), so an option changes a shared action",
    "refuse-anchored": "the server refuses a create whose anchor it holds, and counts it "
    "pushed (cells with the anchor rule only)",
}


@frozen
class Cell:
    """What one parameterized proof is about."""

    variant: Variant
    sites: tuple[Site, ...]
    environment: Environment
    mutant: str | None = None
    #: The provider session's shape; by default the variant's own. The actions are
    #: written for two shapes only (`modelled.SHAPES_MODELLED`); any other is unknown.
    shape: SessionShape = field()
    #: With the order relations of `order_z3.py` (creation order, the mirror's and each
    #: request's order): only cells that ask for them get the larger vocabulary.
    ordered: bool = field(default=False, kw_only=True)
    #: With the ghosts invariant 2 reads and the server's anchor rule (`agreement_z3.py`):
    #: only cells that ask for them get the larger vocabulary.
    agreement: bool = field(default=False, kw_only=True)

    @shape.default
    def _default_shape(self) -> SessionShape:
        return SHAPES_BY_NAME[self.variant.shape]

    @property
    def three_way(self) -> bool:
        return self.shape.diff is Diff.THREE_WAY

    def site_rel(self, site: Site) -> str:
        return "site:" + site.name

    def uses(self, source: RequestSource) -> bool:
        return any(site.request is source for site in self.sites)

    @property
    def server_items(self) -> bool:
        return self.environment.server_items


def relations(cell: Cell) -> tuple[Relation, ...]:
    """The vocabulary of a cell: only what its sites, session and environment can change."""
    rels: list[Relation] = [
        Relation("S", (ITEM,), summary="on the server"),
        Relation("M", (ITEM,), summary="in the mirror"),
        Relation("L", (ITEM,), summary="in the local context"),
        Relation("acked", (ITEM,), summary="acknowledged once (ghost)"),
        Relation("np", (ITEM,), static=True, summary="never played: what every cleanup drops"),
    ]
    if cell.server_items:
        rels += [
            Relation("pool", (ITEM,), static=True, summary="the model may create it"),
            Relation("created", (ITEM,), summary="the model created it"),
            Relation("learned", (ITEM,), summary="the local context learned it"),
            Relation("evm", (ITEM,), summary="its added event (the model's) is in flight"),
        ]
    if cell.three_way:
        rels.append(Relation("gone", (ITEM,), summary="its delete was acknowledged"))
    rels += [Relation(pc, (TASK,), summary=f"program counter {pc}") for pc in PCS]
    rels += [
        Relation(cell.site_rel(site), (TASK,), static=True, summary=f"a {site.name} call")
        for site in cell.sites
    ]
    rels.append(Relation("bound", (TASK,), summary="its request is the live local context"))
    if not cell.three_way:
        rels += [
            Relation("aown", (TASK,), summary="owns the activity lock"),
            Relation("await", (TASK,), summary="waits for the activity lock"),
            Relation("aq", (TASK, TASK), summary="waits for the activity lock ahead of (its FIFO)"),
            Relation("pown", (TASK,), summary="owns the provider lock"),
            Relation("pwait", (TASK,), summary="waits for the provider lock"),
        ]
    rels += [
        Relation("adds", (TASK, ITEM), static=True, summary="the call adds it"),
        Relation("drops", (TASK, ITEM), static=True, summary="the call means to remove it"),
        Relation("req", (TASK, ITEM), summary="in its fixed request"),
        Relation("base", (TASK, ITEM), summary="in its base"),
        Relation("tsc", (TASK, ITEM), summary="its create is at the server"),
        Relation("tsd", (TASK, ITEM), summary="its delete is at the server"),
        Relation("evc", (TASK, ITEM), summary="the added event of its create is in flight"),
        Relation("evd", (TASK, ITEM), summary="the deleted event of its delete is in flight"),
        Relation("erc", (TASK, ITEM), summary="the rejection of its create is in flight"),
        Relation("erd", (TASK, ITEM), summary="the rejection of its delete is in flight"),
        Relation("pc", (TASK, ITEM), summary="waits for the ack of its create"),
        Relation("pd", (TASK, ITEM), summary="waits for the ack of its delete"),
        Relation("dack", (TASK, ITEM), summary="sent a delete of it while acknowledged (ghost)"),
        Relation("before", (TASK, TASK), summary="its batch was sent earlier"),
    ]
    if cell.uses(RequestSource.CALLER_COPY):
        rels.append(Relation("copy", (TASK, ITEM), summary="in the application's copy"))
    if cell.three_way:
        rels += [
            Relation("oc", (TASK, ITEM), summary="its create is outstanding (expected view)"),
            Relation("od", (TASK, ITEM), summary="its delete is outstanding (expected view)"),
        ]
    if cell.ordered:
        rels += [
            Relation("born", (ITEM, ITEM), static=True, summary="created earlier than"),
            Relation("made", (ITEM,), summary="created"),
            Relation("mo", (ITEM, ITEM), summary="ahead of, in the mirror"),
            Relation("ro", (TASK, ITEM, ITEM), summary="ahead of, in the task's request"),
        ]
    if cell.agreement:
        rels += [
            Relation("reached", (ITEM,), summary="has been on the server (ghost)"),
            Relation("removed", (ITEM,), summary="a delete removed it from the server (ghost)"),
            Relation("sent", (ITEM,), summary="a create of it was sent, or it was on the server"),
            Relation("refused", (ITEM,), summary="its create was refused, its anchor deleted"),
            Relation("pa", (TASK, ITEM), summary="may anchor the task's creates"),
        ]
    rels += ghosts.relations(cell)
    return tuple(rels)


class Sorts:
    """The two uninterpreted z3 sorts a system is built over, with quantifiers over them.

    Each instance lives in a z3 context of its own (`ctx`): every term, solver and model
    of a problem is built there, so what z3 answers (and so the invariant inference
    finds) depends on the problem alone, not on what else ran in the process before."""

    def __init__(self, task: Any, item: Any, ctx: Any) -> None:
        self.task = task
        self.item = item
        self.ctx = ctx
        self._fresh = 0

    def true(self, value: bool = True) -> Expr:
        """A Boolean constant of this context."""
        return z3.BoolVal(value, self.ctx)

    def of(self, sort: str) -> Any:
        return self.task if sort == TASK else self.item

    def var(self, sort: str) -> Any:
        self._fresh += 1
        return z3.Const(f"{sort[0]}!{self._fresh}", self.of(sort))

    def forall_many(self, sorts: Sequence[str], body: Callable[..., Expr]) -> Expr:
        if not sorts:
            return body()
        xs = [self.var(sort) for sort in sorts]
        return z3.ForAll(xs, body(*xs))

    def forall(self, sort: str, body: Callable[[Any], Expr]) -> Expr:
        return self.forall_many((sort,), body)

    def exists(self, sort: str, body: Callable[[Any], Expr]) -> Expr:
        x = self.var(sort)
        return z3.Exists([x], body(x))

    def elements(self, model: Any, sort: str) -> list[Any]:
        """The elements of `sort` in a model (at least one)."""
        elems = model.get_universe(self.of(sort))
        return list(elems) if elems else [z3.Const(f"{sort}!any", self.of(sort))]


class FiniteSorts(Sorts):
    """Sorts of a fixed finite size, every quantifier expanded: a quantifier-free
    instance, for fast search (Houdini's first rounds). A model of it is a model of the
    unbounded query too, so what it refutes is refuted for every size."""

    def __init__(self, tasks: int, items: int, ctx: Any = None) -> None:
        ctx = z3.Context() if ctx is None else ctx
        task, self.task_elems = z3.EnumSort("Task", [f"T{n}" for n in range(tasks)], ctx)
        item, self.item_elems = z3.EnumSort("Item", [f"i{n}" for n in range(items)], ctx)
        super().__init__(task, item, ctx)

    def _elems(self, sort: str) -> list[Any]:
        return list(self.task_elems if sort == TASK else self.item_elems)

    def forall_many(self, sorts: Sequence[str], body: Callable[..., Expr]) -> Expr:
        return z3.And(*(body(*combo) for combo in product(*(self._elems(s) for s in sorts))))

    def exists(self, sort: str, body: Callable[[Any], Expr]) -> Expr:
        return z3.Or(*(body(x) for x in self._elems(sort)))

    def elements(self, model: Any, sort: str) -> list[Any]:
        return self._elems(sort)


def unbounded_sorts(ctx: Any = None) -> Sorts:
    """Tasks and items as uninterpreted sorts: a proof over them holds for every size
    (in a fresh z3 context unless given one)."""
    ctx = z3.Context() if ctx is None else ctx
    return Sorts(z3.DeclareSort("Task", ctx), z3.DeclareSort("Item", ctx), ctx)


def symbols(cell: Cell, sorts: Sorts, suffix: str) -> dict[str, Any]:
    """One z3 function per relation, named with `suffix` (pre state, post state, step k)."""
    out: dict[str, Any] = {}
    for rel in relations(cell):
        name = rel.name if rel.static else f"{rel.name}{suffix}"
        out[rel.name] = z3.Function(name, *(sorts.of(s) for s in rel.sorts), z3.BoolSort(sorts.ctx))
    return out


def view(table: dict[str, Any]) -> dict[str, Fn]:
    """Relations as callables (a z3 function already is one)."""
    return dict(table)


class Run:
    """The state inside one action, statement by statement: each relation as a callable
    from z3 arguments to a formula over the pre state, and the side conditions so far."""

    def __init__(self, rels: dict[str, Fn], guard: Expr) -> None:
        self.rels = dict(rels)
        self.guard = guard

    def copy(self) -> Run:
        return Run(self.rels, self.guard)

    def __getitem__(self, name: str) -> Fn:
        return self.rels[name]

    def set(self, name: str, fn: Fn) -> None:
        self.rels[name] = memo(fn)

    def require(self, condition: Expr) -> None:
        self.guard = z3.And(self.guard, condition)


def merge(condition: Expr, then: Run, other: Run) -> Run:
    """If `condition` (over the state before the split) then one run, else the other."""
    rels: dict[str, Fn] = {}
    for name, fn in then.rels.items():
        alt = other.rels[name]
        if fn is alt:
            rels[name] = fn
        else:
            rels[name] = _ite(condition, fn, alt)
    return Run(rels, z3.If(condition, then.guard, other.guard))


def _ite(condition: Expr, a: Fn, b: Fn) -> Fn:
    return memo(lambda *args: z3.If(condition, a(*args), b(*args)))


def memo(fn: Fn) -> Fn:
    """`fn` evaluated once per arguments: the effects nest (a diff reads the expected view
    in five relations), and on a finite instance each is applied to every ground tuple."""
    cache: dict[tuple[int, ...], tuple[tuple[Any, ...], Expr]] = {}

    def cached(*args: Any) -> Expr:
        key = tuple(a.get_id() for a in args)
        if key not in cache:
            cache[key] = (args, fn(*args))  # the arguments stay alive, so ids stay theirs
        return cache[key][1]

    return cached


@frozen
class Action:
    """One action: a name, its parameters (sorts), and its effect on a state."""

    name: str
    params: tuple[tuple[str, str], ...]
    effect: Callable[[Run, dict[str, Any]], Run]
    summary: str = ""
