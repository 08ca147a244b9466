"""The z3 encoding's state variables, each family declared once.

A *family* is a set of variables of one sort, indexed by the same axes (a task,
an item, an op slot, ...), with one name pattern and one meaning: `pend` is
"task t still waits for the ack of its (kind, item) op", one Boolean per (task,
kind, item). `Vars` gives typed access by family (`v.pc[t]`, `v.pend[t, kind,
i]`, `v.has[SERVER, i]`) over any store of values: z3 terms in a `SymState`,
Python values in an abstraction (`Values`).

`LAYOUT` fixes the order in which the variables are declared. z3's choice among
equally short counterexamples depends on the order in which terms are created,
so this order is the one `docs/variants.md` was generated with: change it and
the page's traces change. `Schema` expands the layout for one encoding's
dimensions (items, tasks, op slots, pool).

Each family also says which readers deliberately leave it out, and why:
`simulation.view` compares what a later step can observe, and `Encoding.describe`
shows what a person reading a trace needs. `tests/proofs/test_z3_schema.py`
checks that every other family is set by `Encoding.initial`, produced by
`Encoding.concrete`, read by `view` and `describe`, and constrained by
`reachset.Matcher`, and that these marks are true.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar, overload

import z3
from attrs import frozen

from model import OpKind, Pc
from proofs.errors import InternalError

__all__ = [
    "ACTIVITY",
    "KINDS",
    "KIND_CODES",
    "LAYOUT",
    "LOCAL",
    "LOCKS",
    "MIRROR",
    "PC_WIDTH",
    "PROVIDER",
    "READERS",
    "SERVER",
    "Axis",
    "Column",
    "Dims",
    "Family",
    "Group",
    "Schema",
    "Sort",
    "Values",
    "Vars",
    "copy_list",
    "families",
    "request_list",
]

X = TypeVar("X")

#: The shared lists, by their names in the encoding.
SERVER, MIRROR, LOCAL = "srv", "mir", "loc"
#: The two locks: the activity lock and the provider session's own lock.
ACTIVITY, PROVIDER = "al", "pl"
LOCKS: tuple[str, ...] = (ACTIVITY, PROVIDER)
#: The op kinds, in the order their variables are declared.
KINDS: tuple[OpKind, ...] = (OpKind.CREATE, OpKind.DELETE)
#: An op kind's letter in variable names.
KIND_CODES: dict[OpKind, str] = {OpKind.CREATE: "C", OpKind.DELETE: "D"}
#: The program counter is the model's `Pc` values, numbered in declaration order.
PC_WIDTH = max(1, (len(Pc) - 1).bit_length())


def request_list(task: int) -> str:
    """The name of a task's request list."""
    return f"T{task}.req"


def copy_list(task: int) -> str:
    """The name of a task's caller-supplied copy of the local context."""
    return f"T{task}.copy"


class Axis(enum.Enum):
    """What a family is indexed by."""

    #: an ordered list: the server conversation, the mirror, the local context, and
    #: each task's request and copy (`SERVER`, `request_list(t)`, ...)
    LIST = "list"
    #: an item of the scenario, by its index
    ITEM = "item"
    #: an unordered pair of items (i, j) with i < j
    PAIR = "pair"
    #: a push task, by its index
    TASK = "task"
    #: an op kind (`OpKind`)
    KIND = "kind"
    #: a lock (`LOCKS`)
    LOCK = "lock"
    #: an op slot (task, kind, item): every op that can ever exist
    SLOT = "slot"
    #: an item of the server pool (the model's own items), by its item index
    POOL = "pool"
    #: a ghost record (`GHOSTS` of the encoding)
    GHOST = "ghost"
    #: an exactness guard (`GUARDS` of the encoding)
    GUARD = "guard"


def _text(axis: Axis, value: Any) -> str:
    if axis is Axis.KIND:
        return KIND_CODES[value]
    if axis is Axis.PAIR:
        return f"{value[0]}.{value[1]}"
    if axis is Axis.SLOT:
        task, kind, item = value
        return f"T{task}.{KIND_CODES[kind]}.{item}"
    return str(value)


class Sort(enum.Enum):
    """A family's z3 sort; the widths come from the encoding's dimensions."""

    BOOL = "Bool"
    #: the program counter (`PC_WIDTH` bits)
    PC = "pc"
    #: lock tickets and batch numbers (`Dims.lock_width` bits)
    LOCK = "lock"
    #: event positions (`Dims.seq_width` bits)
    SEQ = "seq"
    #: an op slot's or pool item's status (2 bits)
    STATUS = "status"
    #: an item reference, the value n meaning none (`Refs.sort`)
    REF = "ref"


#: The readers a family can be left out of, each with its reason.
READERS = ("view", "describe", "matcher")


class Family:
    """One family of state variables: a descriptor on `Vars`, declared once."""

    __slots__ = ("attr", "axes", "meaning", "names", "pattern", "skip", "sort", "where")

    def __init__(
        self,
        pattern: str,
        axes: tuple[Axis, ...],
        sort: Sort,
        meaning: str,
        *,
        where: Callable[[tuple[Any, ...]], bool] | None = None,
        skip: Mapping[str, str] | None = None,
    ) -> None:
        self.pattern = pattern
        self.axes = axes
        self.sort = sort
        self.meaning = meaning
        #: Only the indices this accepts exist (e.g. anchors only of create slots).
        self.where = where
        #: Reader (`READERS`) to why it does not read this family.
        self.skip: dict[str, str] = dict(skip or {})
        assert set(self.skip) <= set(READERS), self.skip
        self.attr = ""
        #: index -> variable name, filled as names are asked for
        self.names: dict[Any, str] = {}

    def __set_name__(self, owner: type, name: str) -> None:
        self.attr = name

    def __repr__(self) -> str:
        return f"Family({self.attr})"

    def key(self, index: Any) -> str:
        """The variable name at `index` (a tuple over `axes`, or one value)."""
        name = self.names.get(index)
        if name is None:
            values = index if len(self.axes) != 1 else (index,)
            if not isinstance(values, tuple) or len(values) != len(self.axes):
                raise InternalError(f"{self.attr}: index {index!r} does not match {self.axes}")
            fields = {axis.value: _text(axis, v) for axis, v in zip(self.axes, values, strict=True)}
            name = self.pattern.format(**fields)
            self.names[index] = name
        return name

    @overload
    def __get__(self, obj: None, owner: Any) -> Family: ...
    @overload
    def __get__(self, obj: Vars[X], owner: Any) -> Column[X]: ...
    def __get__(self, obj: Vars[X] | None, owner: Any) -> Family | Column[X]:
        if obj is None:
            return self
        return Column(self, obj)


class Column(Generic[X]):
    """A family bound to a store: read and write its variables by index."""

    __slots__ = ("family", "store")

    def __init__(self, family: Family, store: Vars[X]) -> None:
        self.family = family
        self.store = store

    def __getitem__(self, index: Any) -> X:
        return self.store.read(self.family.key(index))

    def __setitem__(self, index: Any, value: X) -> None:
        self.store.write(self.family.key(index), value)


def _creates(index: tuple[Any, ...]) -> bool:
    return bool(index[0][1] is OpKind.CREATE)


class Vars(Generic[X]):
    """Typed access to the state variables by family, over a store of values."""

    __slots__ = ()

    # -- the ordered lists -----------------------------------------------------------
    has = Family("{list}.has.{item}", (Axis.LIST, Axis.ITEM), Sort.BOOL, "the item is in the list")
    prec = Family(
        "{list}.prec.{pair}",
        (Axis.LIST, Axis.PAIR),
        Sort.BOOL,
        "item i comes before item j in the list (read only when both are in it)",
    )
    # -- each task -------------------------------------------------------------------
    pc = Family("T{task}.pc", (Axis.TASK,), Sort.PC, "the task's program counter (`Pc`)")
    bound = Family(
        "T{task}.bound",
        (Axis.TASK,),
        Sort.BOOL,
        "the task's request is the live local context, not its own list",
    )
    dseq = Family(
        "T{task}.dseq",
        (Axis.TASK,),
        Sort.LOCK,
        "the number of the task's batch of ops in the op FIFO",
    )
    bord = Family(
        "T{task}.bord.{pair}",
        (Axis.TASK, Axis.PAIR),
        Sort.BOOL,
        "within the task's batch, the op on item i is sent before the op on item j",
    )
    base = Family(
        "T{task}.base.{item}",
        (Axis.TASK, Axis.ITEM),
        Sort.BOOL,
        "the item is in the task's base (what its request was built from)",
        skip={
            "describe": "an internal of the three-way diff, not part of a trace's picture",
            "matcher": "left free: a weaker candidate invariant, still sound",
        },
    )
    pend = Family(
        "T{task}.pend.{kind}.{item}",
        (Axis.TASK, Axis.KIND, Axis.ITEM),
        Sort.BOOL,
        "the task waits for the ack of its op of this kind on the item",
    )
    udel = Family(
        "udel.T{task}.{item}",
        (Axis.TASK, Axis.ITEM),
        Sort.BOOL,
        "the task sent a delete for the item while it was acknowledged (invariant 1's ghost)",
        skip={"describe": "invariant 1's ghost; a violation is named by the verdict"},
    )
    # -- the locks (ticket dispensers) -------------------------------------------------
    head = Family("{lock}.head", (Axis.LOCK,), Sort.LOCK, "the ticket being served")
    tail = Family("{lock}.tail", (Axis.LOCK,), Sort.LOCK, "the next ticket")
    ticket = Family("{lock}.tkt.{task}", (Axis.LOCK, Axis.TASK), Sort.LOCK, "the task's ticket")
    queued = Family(
        "{lock}.q.{task}", (Axis.LOCK, Axis.TASK), Sort.BOOL, "the task holds or waits for it"
    )
    # -- the op slots ------------------------------------------------------------------
    status = Family(
        "op.{slot}.st",
        (Axis.SLOT,),
        Sort.STATUS,
        "unsent, sent (in the op FIFO), answered (its event in the event FIFO), or done",
    )
    eseq = Family(
        "op.{slot}.eseq",
        (Axis.SLOT,),
        Sort.SEQ,
        "the position of its answer in the event FIFO",
    )
    rejected = Family("op.{slot}.rej", (Axis.SLOT,), Sort.BOOL, "its answer is a rejection")
    outstanding = Family(
        "op.{slot}.out",
        (Axis.SLOT,),
        Sort.BOOL,
        "three-way: sent and its answer not yet applied (part of the expected view)",
        skip={"describe": "an internal of the three-way diff, not part of a trace's picture"},
    )
    anchor = Family(
        "op.{slot}.after",
        (Axis.SLOT,),
        Sort.REF,
        "a create's anchor: the item it follows (none: the head)",
        where=_creates,
    )
    # -- FIFO counters -----------------------------------------------------------------
    diffs = Family(
        "diffs",
        (),
        Sort.LOCK,
        "the number of the next batch of ops",
        skip={"describe": "a counter; the ops show the FIFO"},
    )
    abatch = Family(
        "abatch",
        (),
        Sort.LOCK,
        "the number of the batch at the head of the op FIFO",
        skip={"describe": "a counter; the ops show the FIFO"},
    )
    emitted = Family(
        "emitted",
        (),
        Sort.SEQ,
        "the position of the next event",
        skip={"describe": "a counter; the events show the FIFO"},
    )
    consumed = Family(
        "consumed",
        (),
        Sort.SEQ,
        "the position of the event at the head of the event FIFO",
        skip={"describe": "a counter; the events show the FIFO"},
    )
    # -- the server pool ---------------------------------------------------------------
    pool_status = Family(
        "pool.{pool}.st",
        (Axis.POOL,),
        Sort.STATUS,
        "not created, its event in flight, or applied by the session",
    )
    pool_seq = Family(
        "pool.{pool}.seq",
        (Axis.POOL,),
        Sort.SEQ,
        "the position of its event in the event FIFO",
    )
    pool_anchor = Family(
        "pool.{pool}.after",
        (Axis.POOL,),
        Sort.REF,
        "the item it follows on the server",
        skip={"describe": "the server list shows where it is"},
    )
    learned = Family(
        "pool.{pool}.learned",
        (Axis.POOL,),
        Sort.BOOL,
        "the local context has learned it",
        skip={"describe": "the local list shows it"},
    )
    # -- ghosts and exactness guards ---------------------------------------------------
    ghost = Family(
        "{ghost}.{item}",
        (Axis.GHOST, Axis.ITEM),
        Sort.BOOL,
        "the item's ghost record (`GHOSTS`: acked, reached, removed, gone, rec, refused)",
    )
    guard = Family("{guard}", (Axis.GUARD,), Sort.BOOL, "an exactness guard was set (`GUARDS`)")

    def read(self, name: str) -> X:
        """The value of the variable `name`."""
        raise NotImplementedError

    def write(self, name: str, value: X) -> None:
        """Set the variable `name`."""
        raise NotImplementedError


class Values(Vars[X]):
    """Typed access over a plain dict of values, logging what is read and written."""

    __slots__ = ("declared", "reads", "vals", "writes")

    def __init__(self, vals: dict[str, X], declared: Container[str] | None = None) -> None:
        self.vals = vals
        #: When given, a write to a name outside it raises (a typo, or a family
        #: written where its index does not exist).
        self.declared = declared
        self.reads: set[str] = set()
        self.writes: set[str] = set()

    def read(self, name: str) -> X:
        self.reads.add(name)
        return self.vals[name]

    def write(self, name: str, value: X) -> None:
        if self.declared is not None and name not in self.declared:
            raise InternalError(f"{name} is not a state variable of the schema")
        self.writes.add(name)
        self.vals[name] = value


@frozen
class Group:
    """Members declared once per value of an axis (the value binds that axis)."""

    axis: Axis
    members: tuple[Family | Group, ...]


V = Vars
#: Every family, in declaration order; the nesting is the order of today's names.
LAYOUT: tuple[Family | Group, ...] = (
    Group(Axis.LIST, (V.has, V.prec)),
    Group(
        Axis.TASK,
        (V.pc, V.bound, V.dseq, V.bord, Group(Axis.ITEM, (V.base, V.pend, V.udel))),
    ),
    Group(Axis.LOCK, (V.head, V.tail, Group(Axis.TASK, (V.ticket, V.queued)))),
    Group(Axis.SLOT, (V.status, V.eseq, V.rejected, V.outstanding, V.anchor)),
    V.diffs,
    V.abatch,
    V.emitted,
    V.consumed,
    Group(Axis.POOL, (V.pool_status, V.pool_seq, V.pool_anchor, V.learned)),
    V.ghost,
    V.guard,
)
del V


def families(layout: Sequence[Family | Group] = LAYOUT) -> Iterator[Family]:
    """The families of a layout, in order."""
    for member in layout:
        if isinstance(member, Group):
            yield from families(member.members)
        else:
            yield member


def _check_layout() -> None:
    declared = [f for f in vars(Vars).values() if isinstance(f, Family)]
    laid = list(families())
    if sorted(map(id, laid)) != sorted(map(id, declared)):
        names = sorted({f.attr for f in laid} ^ {f.attr for f in declared})
        raise InternalError(f"LAYOUT and Vars differ (each family once): {names}")


_check_layout()


@frozen
class Dims:
    """One encoding's dimensions: what each axis ranges over, and the widths."""

    items: int
    tasks: tuple[int, ...]
    slots: tuple[tuple[int, OpKind, int], ...]
    pool: tuple[int, ...]
    ghosts: tuple[str, ...]
    guards: tuple[str, ...]
    lock_width: int
    seq_width: int
    ref_sort: z3.SortRef

    @property
    def pairs(self) -> list[tuple[int, int]]:
        n = self.items
        return [(i, j) for i in range(n) for j in range(i + 1, n)]

    def axis(self, axis: Axis) -> Sequence[Any]:
        """The values an axis ranges over, in order."""
        if axis is Axis.LIST:
            lists = [SERVER, MIRROR, LOCAL]
            for t in self.tasks:
                lists += [request_list(t), copy_list(t)]
            return lists
        ranges: dict[Axis, Sequence[Any]] = {
            Axis.ITEM: range(self.items),
            Axis.PAIR: self.pairs,
            Axis.TASK: self.tasks,
            Axis.KIND: KINDS,
            Axis.LOCK: LOCKS,
            Axis.SLOT: self.slots,
            Axis.POOL: self.pool,
            Axis.GHOST: self.ghosts,
            Axis.GUARD: self.guards,
        }
        return ranges[axis]

    def sort(self, sort: Sort) -> z3.SortRef:
        if sort is Sort.BOOL:
            return z3.BoolSort()
        widths = {
            Sort.PC: PC_WIDTH,
            Sort.LOCK: self.lock_width,
            Sort.SEQ: self.seq_width,
            Sort.STATUS: 2,
        }
        if sort is Sort.REF:
            return self.ref_sort
        return z3.BitVecSort(widths[sort])


class Schema:
    """The layout expanded for one encoding: every variable's name and sort, in order."""

    def __init__(self, dims: Dims, layout: Sequence[Family | Group] | None = None) -> None:
        self.dims = dims
        self.layout = tuple(LAYOUT if layout is None else layout)
        #: name -> z3 sort, in declaration order
        self.sorts: dict[str, z3.SortRef] = {}
        #: name -> its family
        self.family_of: dict[str, Family] = {}
        #: family -> its indices, in declaration order
        self.indices: dict[Family, list[Any]] = {}
        sorts: dict[Sort, z3.SortRef] = {}
        for family, index in self._walk(self.layout, {}):
            name = family.key(index)
            if name in self.sorts:
                raise InternalError(f"state variable {name} declared twice")
            if family.sort not in sorts:
                sorts[family.sort] = dims.sort(family.sort)
            self.sorts[name] = sorts[family.sort]
            self.family_of[name] = family
            self.indices.setdefault(family, []).append(index)
        for family in families(self.layout):
            self.indices.setdefault(family, [])

    def _walk(
        self, members: Sequence[Family | Group], bound: dict[Axis, Any]
    ) -> Iterator[tuple[Family, Any]]:
        for member in members:
            if isinstance(member, Group):
                for value in self.dims.axis(member.axis):
                    yield from self._walk(member.members, {**bound, member.axis: value})
                continue
            free = [axis for axis in member.axes if axis not in bound]
            for values in itertools.product(*(self.dims.axis(axis) for axis in free)):
                chosen = dict(zip(free, values, strict=True))
                full = tuple(bound[a] if a in bound else chosen[a] for a in member.axes)
                if member.where is not None and not member.where(full):
                    continue
                yield member, full[0] if len(full) == 1 else full

    @property
    def families(self) -> tuple[Family, ...]:
        return tuple(families(self.layout))

    def names(self, family: Family) -> list[str]:
        """The names of a family's variables, in declaration order."""
        return [family.key(index) for index in self.indices[family]]

    def missing(self, names: set[str] | Mapping[str, Any]) -> list[str]:
        """The declared variables not among `names`, in declaration order."""
        return [name for name in self.sorts if name not in names]

    def families_in(self, names: set[str] | Mapping[str, Any]) -> set[Family]:
        """The families with a variable among `names` (unknown names raise)."""
        return {self.family_of[name] for name in names}
