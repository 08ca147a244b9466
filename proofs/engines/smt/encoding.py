"""The model's transition relation in z3, generated from a `model.Config`.

Nothing here is written per variant or per site: every formula comes from the
config's data (each call's site record, the variant's locks, local updates and
session kind, the scenario's items and server pool) by the same case analysis
the model's own code performs in `model/moves.py`. Each task step below is the
symbolic twin of the model function of the same name.

State variables (one copy per BMC step; `schema` declares each family once):

- the server conversation, the mirror, the local context, each task's request
  and copy: `SList`s (membership and precedence Booleans per item);
- each task: its program counter (the model's `Pc` values as a 3-bit
  enumeration), whether its request is the live local context, its base, its
  pending acks (one Boolean per (kind, item));
- each lock (activity, provider): an asyncio FIFO lock as a ticket dispenser,
  `head`/`tail` counters, per task a ticket and a queued flag;
- both websocket FIFOs as *op slots*: a push sends at most one op per (kind,
  item) and each task pushes once, so every op that can ever exist has a static
  slot (task, kind, item) holding its status, its anchor, whether it was
  rejected or is outstanding, and its position in the event FIFO; each task's
  batch has a number and an order over its items; events of server-created
  items have one slot per item of the server pool;
- ghost state for the invariants, and three *exactness guards* that a step sets
  when the encoding might not match the model (see `GUARDS`).

The transition relation has one disjunct per move instance (a move kind applied
to a task, op slot or pool item, and a branch of it), selected by a bit-vector
`mv` per step, which is also how a z3 model is decoded back into `Move`s.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import attrs
import z3
from attrs import frozen
from z3 import z3core

from model import (
    SHAPES_BY_NAME,
    Config,
    EventKind,
    Invariant,
    LocalUpdate,
    Move,
    MoveKind,
    OpKind,
    Pc,
    RequestSource,
    SessionShape,
    State,
)
from model.environment import OPTION_NAMES, OPTIONS, Environment
from model.move_table import MOVES
from proofs.engines.smt.schema import (
    ACTIVITY,
    KINDS,
    LOCAL,
    LOCKS,
    MIRROR,
    PC_WIDTH,
    PROVIDER,
    SERVER,
    Dims,
    Schema,
    Values,
    Vars,
    copy_list,
    request_list,
)
from proofs.engines.smt.symbolic import (
    FALSE,
    TRUE,
    Refs,
    SList,
    band,
    bnot,
    bor,
    const_bool,
    ite,
    mk_eq,
    mk_inc,
    mk_ite,
    mk_ult,
)
from proofs.errors import InternalError, UnsupportedConfig

# op slot status (2 bits)
UNSENT, SENT, ANSWERED, DONE = 0, 1, 2, 3
# pool item status (2 bits)
NOT_CREATED, IN_FLIGHT, CONSUMED = 0, 1, 2
_STATUS = [z3.BitVecVal(code, 2) for code in range(4)]


def _status(code: int) -> z3.BitVecRef:
    return _STATUS[code]


#: Per-item ghost and bookkeeping Booleans, as in the model's `State`: items
#: acknowledged, ever on the server, removed by a delete, deleted on purpose
#: (three-way), re-created after a delete, and refused for a deleted anchor.
GHOSTS = ("acked", "reached", "removed", "gone", "rec", "refused")

#: Exactness guards: a step sets one when the encoding might not do what the model
#: does. While none is reachable the encoding is exact (see docs/proofs.md).
GUARDS: dict[str, str] = {
    "guard.lcs": "a mirror diff where the mirror and the request order common items "
    "differently (the LCS diff is then not the membership diff)",
    "guard.order": "a three-way diff deleting two or more items, one of them touched by an "
    "op in flight (the expected view's order is not encoded)",
    "guard.assert": "a mirror-diff push sending an op another waiting push already waits an "
    "ack for (the model asserts this never happens)",
}


#: The program counter is an enumeration: the model's `Pc` values, numbered in
#: declaration order, as a bit-vector (so the whole encoding is QF_BV and z3's
#: incremental SAT-based bit-vector solver applies).
PC_CODES: dict[Pc, int] = {pc: code for code, pc in enumerate(Pc)}
_PC_VALUES = {pc: z3.BitVecVal(code, PC_WIDTH) for pc, code in PC_CODES.items()}


def _pc(pc: Pc) -> z3.BitVecRef:
    return _PC_VALUES[pc]


class _Logged(dict[str, z3.BoolRef]):
    """A dict that remembers which keys were read."""

    def __init__(self, values: dict[str, z3.BoolRef]) -> None:
        super().__init__(values)
        self.used: set[str] = set()

    def __getitem__(self, key: str) -> z3.BoolRef:
        self.used.add(key)
        return super().__getitem__(key)


@functools.cache
def _bv_constant(value: int, width: int) -> z3.BitVecRef:
    return z3.BitVecVal(value, width)


def _sub(a: Any, b: Any) -> z3.BitVecRef:
    return z3.BitVecRef(z3core.Z3_mk_bvsub(_CTX.ref(), a.as_ast(), b.as_ast()), _CTX)


_CTX = z3.main_ctx()


def _options(environment: Environment) -> dict[str, bool]:
    """Every option (`model.OPTIONS`) and whether it is on."""
    return {spec.name: environment.on(spec.name) for spec in OPTIONS}


#: Branches of a step: a label, the condition (over the step's start state) and
#: the resulting state. Each becomes an instance of its own.
Paths = list[tuple[str, z3.BoolRef, "SymState"]]


#: What building a move instance gives: its guard, and its effect or branches.
Built = tuple[z3.BoolRef, "Paths | SymState"]
Builder = Callable[[], Built]
Slot = tuple[int, OpKind, int]
#: A move instance before it is built: its move, a finer name, and its builder.
Named = tuple[Move, str, Builder]


@frozen
class PoolItem:
    """An item of the server pool: its position in the pool and its item index."""

    position: int
    item: int


#: What a move instance is about: a task, an op slot or a pool item.
Subject = int | Slot | PoolItem


def _when(cond: z3.BoolRef, paths: Paths, label: str) -> Paths:
    return [(label + more, band(cond, inner), state) for more, inner, state in paths]


@frozen(eq=False)
class Instance:
    """One disjunct of the transition relation."""

    move: Move
    #: A finer name than the move's label, for diagnostics (e.g. "wake T1 (provider)").
    name: str
    guard: z3.BoolRef
    effect: SymState
    #: State variables its guard and effect read, and those it changes.
    reads: frozenset[str] = frozenset()
    writes: frozenset[str] = frozenset()


class SymState(Vars[Any]):
    """A symbolic state: state variable names to z3 expressions, read and written by
    family (`s.pc[t]`, `s.pend[t, kind, i]`; see `schema.Vars`)."""

    __slots__ = ("enc", "reads", "vals")

    def __init__(self, enc: Encoding, vals: dict[str, Any], reads: set[str] | None = None) -> None:
        self.enc = enc
        self.vals = vals
        #: When set, every variable read is logged here (copies share the log).
        self.reads = reads

    def copy(self) -> SymState:
        return SymState(self.enc, dict(self.vals), self.reads)

    def read(self, name: str) -> Any:
        if self.reads is not None:
            self.reads.add(name)
        return self.vals[name]

    def write(self, name: str, value: Any) -> None:
        if name not in self.enc.schema.sorts:
            raise InternalError(f"{name} is not a state variable of the schema")
        self.vals[name] = value

    def __getitem__(self, name: str) -> Any:
        return self.read(name)

    def lst(self, name: str) -> SList:
        """The ordered list `name` (`schema.SERVER`, `schema.request_list(t)`, ...)."""
        enc = self.enc
        return SList(
            [self.has[name, i] for i in range(enc.n)],
            {(i, j): self.prec[name, (i, j)] for i, j in enc.pairs},
        )

    def set_lst(self, name: str, value: SList) -> None:
        for i in range(self.enc.n):
            self.has[name, i] = value.has[i]
        for i, j in self.enc.pairs:
            self.prec[name, (i, j)] = value.prec[(i, j)]

    def pc_is(self, task: int, *pcs: Pc) -> z3.BoolRef:
        return bor(mk_eq(self.pc[task], _pc(pc)) for pc in pcs)

    @staticmethod
    def ite(cond: z3.BoolRef, then: SymState, other: SymState) -> SymState:
        if cond is TRUE:
            return then
        if cond is FALSE:
            return other
        return SymState(
            then.enc,
            {name: ite(cond, value, other.vals[name]) for name, value in then.vals.items()},
            then.reads,
        )


#: The session shapes this encoding models, by name: their fields, not their names,
#: are compared, so a record equal to one of them but for its name is modelled too.
MODELLED_SHAPES: tuple[str, ...] = ("openai", "three-way")


#: Invariants the encoding has no property for: `bad` refuses them, and the bmc and
#: invariant methods leave their cells to the explorer, saying so.
UNENCODED: dict[Invariant, str] = {
    Invariant.REMOVED_AT_REST: "the z3 encoding has no property for removed-at-rest (invariant "
    "5): the explorer decided this cell",
    # it keeps no history of which answers reached the session, so it cannot say a
    # push waited on a settled op
    Invariant.NO_WAIT_ON_SETTLED: "the z3 encoding has no property for no-wait-on-settled "
    "(invariant 6): the explorer decided this cell",
}
#: What the encoding leaves to the explorer beside those invariants: the local
#: context's creation order (`model.local_order`, `State.born`). It appends every
#: item and creates it at its call, with no `before-call` step, as the model did
#: before it followed livekit's `ChatContext.insert`; over the catalog's scenarios
#: the two orders give the same verdict and shortest depth in every cell
#: (`benchmarks/local_order_states.py`), and a mix where they differ is the
#: explorer's to judge.
ORDER_UNENCODED = (
    "the z3 encoding appends to the local context and creates every item at its call; "
    "the creation-time order of livekit's ChatContext is the explorer's"
)
#: The invariants the encoding has a property for: what its engines check by default.
ENCODED: tuple[Invariant, ...] = tuple(i for i in Invariant if i not in UNENCODED)


def refuse_unmodelled(config: Config) -> None:
    """`UnsupportedConfig` (one line) for a session shape or option the encoding
    does not model: only the openai and three-way shapes, and no reconnect."""
    shape = config.shape

    def bare(record: SessionShape) -> SessionShape:
        return attrs.evolve(record, name="", summary="", source="")

    if all(bare(shape) != bare(SHAPES_BY_NAME[name]) for name in MODELLED_SHAPES):
        raise UnsupportedConfig(
            f"the z3 encoding models only the {' and '.join(MODELLED_SHAPES)} session shapes, "
            f"not {shape.name}; use the explorer"
        )
    if config.reconnects():
        raise UnsupportedConfig(
            "the z3 encoding does not model the reconnects option; use the explorer"
        )


class Encoding:
    """The transition system of one config, over named state variables."""

    def __init__(self, config: Config, specialize: bool = False, symmetry: bool = True) -> None:
        refuse_unmodelled(config)
        self.config = config
        scenario = config.scenario
        self.items: tuple[str, ...] = scenario.items()
        self.refs = Refs(self.items)
        self.n = len(self.items)
        self.pairs = [(i, j) for i in range(self.n) for j in range(i + 1, self.n)]
        self.tasks = tuple(range(len(scenario.calls)))
        self.pool = tuple(self.items.index(item) for item in scenario.server_pool)
        self.three_way = config.three_way()
        #: Symmetry reduction: of two identical calls (same site, adds and drops), the
        #: later one may start only once the earlier one has. Swapping the two tasks
        #: maps runs to runs of the same length and violations to violations, so
        #: every run has a twin that keeps this order: the shortest depths and the
        #: longest run are unchanged. `symmetry=False` keeps every run (the tests
        #: that compare single steps with the model need that).
        self.twin: dict[int, int] = {}
        if symmetry:
            for t, call in enumerate(scenario.calls):
                for earlier in range(t - 1, -1, -1):
                    if scenario.calls[earlier] == call:
                        self.twin[t] = earlier
                        break
        self.slots: tuple[tuple[int, OpKind, int], ...] = tuple(
            (t, kind, i) for t in self.tasks for kind in KINDS for i in range(self.n)
        )
        ops = len(self.slots)
        self.seq_width = (ops + len(self.pool) + 1).bit_length() + 1
        self.lock_width = (len(self.tasks) + 1).bit_length() + 1
        #: The environment options: free Booleans fixed per query by `env_literals`, or,
        #: when specialized, the config's own options as constants (the moves an
        #: option disables then drop out of the relation).
        self.specialized = specialize
        self.env: dict[str, z3.BoolRef] = _Logged(
            {name: const_bool(on) for name, on in _options(config.environment).items()}
            if specialize
            else {name: z3.Bool(f"env.{name}") for name in OPTION_NAMES}
        )
        #: Every state variable's name and sort, in declaration order (`schema.LAYOUT`).
        self.schema = self._declare()
        self.cur = self.state("")
        self.instances: tuple[Instance, ...] = tuple(
            inst for inst in self._instances() if inst.guard is not FALSE
        )
        #: The environment options some move of this config reads: environments that
        #: differ only in other options have the very same transition relation.
        self.relevant_options: frozenset[str] = frozenset(self.env.used)
        self.mv_width = max(1, len(self.instances).bit_length())

    # -- variables ---------------------------------------------------------------

    def _declare(self) -> Schema:
        # make the sorts in the order they have always been made (see `schema`)
        made = [z3.BoolSort(), z3.BitVecSort(2), z3.BitVecSort(self.seq_width)]
        made.append(z3.BitVecSort(self.lock_width))
        del made
        return Schema(
            Dims(
                items=self.n,
                tasks=self.tasks,
                slots=self.slots,
                pool=self.pool,
                ghosts=GHOSTS,
                guards=tuple(GUARDS),
                lock_width=self.lock_width,
                seq_width=self.seq_width,
                ref_sort=self.refs.sort,
            )
        )

    def state(self, suffix: str) -> SymState:
        """Fresh variables for every state variable, named with the suffix."""
        return SymState(
            self,
            {name: z3.Const(f"{name}{suffix}", sort) for name, sort in self.schema.sorts.items()},
        )

    def selector(self, suffix: str) -> z3.BitVecRef:
        return z3.BitVec(f"mv{suffix}", self.mv_width)

    # -- initial state -------------------------------------------------------------

    def initial(self) -> SymState:
        """The model's `initial_state` as constants."""
        scenario = self.config.scenario
        index = self.items.index
        s = SymState(self, {})
        server = SList.of([index(i) for i in scenario.server], self.n)
        s.set_lst(SERVER, server)
        s.set_lst(MIRROR, server)
        s.set_lst(LOCAL, SList.of([index(i) for i in scenario.initial_local], self.n))
        empty = SList.of([], self.n)
        seq0 = z3.BitVecVal(0, self.seq_width)
        lock0 = z3.BitVecVal(0, self.lock_width)
        no_ticket = z3.BitVecVal(2**self.lock_width - 1, self.lock_width)
        for t in self.tasks:
            s.set_lst(request_list(t), empty)
            s.set_lst(copy_list(t), empty)
            s.pc[t] = _pc(Pc.IDLE)
            s.bound[t] = FALSE
            s.dseq[t] = lock0
            for i, j in self.pairs:
                s.bord[t, (i, j)] = FALSE
            for i in range(self.n):
                s.base[t, i] = FALSE
                for kind in KINDS:
                    s.pend[t, kind, i] = FALSE
                s.udel[t, i] = FALSE
        for name in LOCKS:
            s.head[name] = lock0
            s.tail[name] = lock0
            for t in self.tasks:
                s.ticket[name, t] = no_ticket
                s.queued[name, t] = FALSE
        for slot in self.slots:
            s.status[slot] = _status(UNSENT)
            s.eseq[slot] = seq0
            s.rejected[slot] = FALSE
            s.outstanding[slot] = FALSE
            if slot[1] is OpKind.CREATE:
                s.anchor[slot] = self.refs.val(None)
        s.diffs[()] = lock0
        s.abatch[()] = lock0
        s.emitted[()] = seq0
        s.consumed[()] = seq0
        for p in self.pool:
            s.pool_status[p] = _status(NOT_CREATED)
            s.pool_seq[p] = seq0
            s.pool_anchor[p] = self.refs.val(None)
            s.learned[p] = FALSE
        on_server = {index(i) for i in scenario.server}
        for i in range(self.n):
            s.ghost["acked", i] = const_bool(i in on_server)
            s.ghost["reached", i] = const_bool(i in on_server)
            for ghost in ("removed", "gone", "rec", "refused"):
                s.ghost[ghost, i] = FALSE
        for guard in GUARDS:
            s.guard[guard] = FALSE
        missing = self.schema.missing(s.vals)
        if missing:
            raise InternalError(f"the initial state sets no value for {', '.join(missing)}")
        return s

    def init_formula(self, state: SymState) -> z3.BoolRef:
        initial = self.initial()
        return band(mk_eq(state[name], initial[name]) for name in self.schema.sorts)

    # -- properties ----------------------------------------------------------------

    def at_rest(self, s: SymState) -> z3.BoolRef:
        return band(
            mk_eq(s.abatch[()], s.diffs[()]),
            mk_eq(s.consumed[()], s.emitted[()]),
            *(
                bnot(s.pc_is(t, Pc.COPIED, Pc.WAIT_ACTIVITY, Pc.WAIT_PROVIDER, Pc.WAIT_ACKS))
                for t in self.tasks
            ),
        )

    def bad(self, s: SymState, invariant: Invariant) -> z3.BoolRef:
        """The model's `check(state, config, invariant)` reports a violation."""
        if invariant in UNENCODED:
            raise UnsupportedConfig(UNENCODED[invariant])
        if invariant is Invariant.NO_UNINTENDED_DELETE:
            return bor(
                s.udel[t, i]
                for t in self.tasks
                for i in range(self.n)
                if self.items[i] not in self.config.call(t).drops
            )
        if invariant is Invariant.NOTHING_TWICE:
            # the encoded shapes' servers refuse a create for an id they hold, and the
            # encoding keeps the server as a set: an id twice is not a state here
            return z3.BoolVal(False)
        if invariant is Invariant.MIRROR_TRUE_AT_REST:
            # no id twice (above), so "the same items, as often" is "the same items"
            differ = bor(s.has[MIRROR, i] != s.has[SERVER, i] for i in range(self.n))
            return band(self.at_rest(s), differ)
        lost = bor(
            band(
                s.has[LOCAL, i],
                bor(s.ghost["reached", i], s.ghost["refused", i]),
                bnot(s.has[SERVER, i]),
            )
            for i in range(self.n)
        )
        back = bor(band(s.ghost["rec", i], s.has[SERVER, i]) for i in range(self.n))
        return band(self.at_rest(s), bor(lost, back))

    def inexact(self, s: SymState) -> z3.BoolRef:
        return bor(s[guard] for guard in GUARDS)

    def env_literals(self, environment: Environment) -> list[z3.BoolRef]:
        # an environment enters here, not only through the config: refuse a reconnect
        refuse_unmodelled(attrs.evolve(self.config, environment=environment))
        if self.specialized:
            assert environment == self.config.environment
            return []
        flags = _options(environment)
        return [var if flags[name] else z3.Not(var) for name, var in dict.items(self.env)]

    def env_key(self, environment: Environment) -> tuple[bool, ...]:
        """The environment's options that matter here (see `relevant_options`)."""
        refuse_unmodelled(attrs.evolve(self.config, environment=environment))
        flags = _options(environment)
        return tuple(flags[name] for name in OPTION_NAMES if name in self.relevant_options)

    def env_of(self, model: z3.ModelRef) -> dict[str, bool]:
        return {
            name: bool(z3.is_true(model.eval(var, model_completion=True)))
            for name, var in dict.items(self.env)
        }

    # -- task steps (twins of model/moves.py) --------------------------------------

    def _apply(self, lst: SList, task: int) -> SList:
        call = self.config.call(task)
        keep = [const_bool(item not in call.drops) for item in self.items]
        return lst.filter(keep).upsert(self.items.index(item) for item in call.adds)

    def _drops(self, task: int) -> list[z3.BoolRef]:
        drops = self.config.call(task).drops
        return [const_bool(item in drops) for item in self.items]

    def _set_base(self, s: SymState, task: int, seen: Sequence[z3.BoolRef]) -> None:
        for i, (saw, dropped) in enumerate(zip(seen, self._drops(task), strict=True)):
            s.base[task, i] = bor(saw, dropped)

    def _set_pc(self, s: SymState, task: int, pc: Pc) -> None:
        s.pc[task] = _pc(pc)

    # A lock is a ticket dispenser: `tail` is the next ticket, `head` the ticket
    # being served; a queued task holds a ticket, and owns the lock when its ticket
    # is served. Only equalities compare counters, so their values matter modulo
    # the width, which holds more tickets than there are tasks.

    def _owner(self, s: SymState, lock: str, task: int) -> z3.BoolRef:
        return band(s.queued[lock, task], mk_eq(s.ticket[lock, task], s.head[lock]))

    def _take(self, s: SymState, lock: str, task: int) -> z3.BoolRef:
        """Queue for the lock; true when it was free (the task owns it at once)."""
        free = mk_eq(s.head[lock], s.tail[lock])
        s.ticket[lock, task] = s.tail[lock]
        s.queued[lock, task] = TRUE
        s.tail[lock] = mk_inc(s.tail[lock])
        return free

    def _release_if_owner(self, s: SymState, lock: str, task: int) -> None:
        owner = self._owner(s, lock, task)
        head = s.head[lock]
        s.head[lock] = ite(owner, mk_inc(head), head)
        s.queued[lock, task] = band(s.queued[lock, task], bnot(owner))

    def _call(self, s: SymState, task: int, from_copy: bool) -> Paths:
        s = s.copy()
        site = self.config.site(task)
        update = self.config.local_update(task)
        if site.request is RequestSource.CALLER_COPY:
            copy = s.lst(copy_list(task)) if from_copy else s.lst(LOCAL)
            requested = self._apply(copy, task)
            self._set_base(s, task, copy.has)
            if update is LocalUpdate.REPLACE:
                self._replace_local(s, requested)
                s.bound[task] = TRUE
            else:
                s.set_lst(request_list(task), requested)
        elif site.request is RequestSource.LOCAL_CONTEXT:
            s.bound[task] = TRUE
        if update is LocalUpdate.BEFORE_PUSH:
            s.set_lst(LOCAL, self._apply(s.lst(LOCAL), task))
        if site.request is RequestSource.LOCAL_CONTEXT:
            self._set_base(s, task, s.lst(LOCAL).has)
        if self.config.locks(task):
            free = self._take(s, ACTIVITY, task)
            waiting = s.copy()
            self._set_pc(waiting, task, Pc.WAIT_ACTIVITY)
            return [
                *_when(free, self._snapshot(s, task), ", activity lock free"),
                (", waits for the activity lock", bnot(free), waiting),
            ]
        return self._snapshot(s, task)

    def _replace_local(self, s: SymState, local: SList) -> None:
        old = s.lst(LOCAL)
        for t in self.tasks:
            held = band(s.bound[t], s.pc_is(t, Pc.WAIT_ACTIVITY, Pc.WAIT_PROVIDER))
            if held is FALSE:
                continue
            s.bound[t] = band(s.bound[t], bnot(held))
            s.set_lst(request_list(t), SList.ite(held, old, s.lst(request_list(t))))
        s.set_lst(LOCAL, local)

    def _snapshot(self, s: SymState, task: int) -> Paths:
        s = s.copy()
        if self.config.site(task).request is RequestSource.MIRROR_SNAPSHOT:
            mirror = s.lst(MIRROR)
            s.set_lst(request_list(task), self._apply(mirror, task))
            self._set_base(s, task, mirror.has)
        if self.three_way:
            return self._diff_and_send(s, task)
        free = self._take(s, PROVIDER, task)
        waiting = s.copy()
        self._set_pc(waiting, task, Pc.WAIT_PROVIDER)
        return [
            *_when(free, self._diff_and_send(s, task), ", provider lock free"),
            (", waits for the provider lock", bnot(free), waiting),
        ]

    def _expected_has(self, s: SymState, i: int) -> z3.BoolRef:
        """Membership of item i in the expected view (the mirror with every
        outstanding op applied in order): the kind of the last outstanding op on
        it, or the mirror's when there is none."""
        creates = [(t, OpKind.CREATE, i) for t in self.tasks]
        deletes = [(t, OpKind.DELETE, i) for t in self.tasks]
        touched = bor(s.outstanding[slot] for slot in creates + deletes)
        last_create = bor(
            band(
                s.outstanding[c],
                *(bor(bnot(s.outstanding[d]), self._sent_before(s, d, c)) for d in deletes),
            )
            for c in creates
        )
        return ite(touched, last_create, s.has[MIRROR, i])

    def _touched(self, s: SymState, i: int) -> z3.BoolRef:
        return bor(s.outstanding[(t, kind, i)] for t in self.tasks for kind in KINDS)

    def _diff_and_send(self, s: SymState, task: int) -> Paths:
        s = s.copy()
        n = self.n
        bound = s.bound[task]
        request = SList.ite(bound, s.lst(LOCAL), s.lst(request_list(task)))
        mirror = s.lst(MIRROR)
        refs = self.refs
        if self.three_way:
            base = [s.base[task, i] for i in range(n)]
            gone = [
                bor(
                    s.ghost["gone", i],
                    *(s.outstanding[(t, OpKind.DELETE, i)] for t in self.tasks),
                )
                for i in range(n)
            ]
            request = request.filter([bnot(band(gone[i], base[i])) for i in range(n)])
            s.set_lst(LOCAL, SList.ite(bound, request, s.lst(LOCAL)))
            expected = [self._expected_has(s, i) for i in range(n)]
            wanted = request.has
            deletes = [band(expected[i], base[i], bnot(wanted[i])) for i in range(n)]
            present = [band(expected[i], bor(wanted[i], bnot(base[i]))) for i in range(n)]
            creates = [band(wanted[i], bnot(present[i]), bnot(base[i])) for i in range(n)]
            anchors = [band(wanted[i], bor(present[i], bnot(base[i]))) for i in range(n)]
            ambiguous = band(
                bor(band(deletes[i], deletes[j]) for i in range(n) for j in range(n) if i < j),
                bor(band(deletes[i], self._touched(s, i)) for i in range(n)),
            )
            s.guard["guard.order"] = bor(s.guard["guard.order"], ambiguous)
        else:
            deletes = [band(mirror.has[i], bnot(request.has[i])) for i in range(n)]
            creates = [band(request.has[i], bnot(mirror.has[i])) for i in range(n)]
            anchors = list(request.has)
            conflict = bor(
                band(
                    mirror.has[i],
                    request.has[i],
                    mirror.has[j],
                    request.has[j],
                    z3.Xor(mirror.before(i, j), request.before(i, j)),
                )
                for i, j in self.pairs
            )
            s.guard["guard.lcs"] = bor(s.guard["guard.lcs"], conflict)
        # the batch: deletes first in mirror order, then creates in request order
        for i, j in self.pairs:
            s.bord[task, (i, j)] = bor(
                band(deletes[i], deletes[j], mirror.before(i, j)),
                band(creates[i], creates[j], request.before(i, j)),
                band(deletes[i], creates[j]),
            )
        clash = []
        for i in range(n):
            for kind, chosen in ((OpKind.DELETE, deletes[i]), (OpKind.CREATE, creates[i])):
                if chosen is FALSE:
                    s.pend[task, kind, i] = FALSE
                    continue
                slot = (task, kind, i)
                if kind is OpKind.CREATE:
                    s.anchor[slot] = ite(chosen, request.pred(i, anchors, refs), s.anchor[slot])
                s.status[slot] = ite(chosen, _status(SENT), s.status[slot])
                if self.three_way:
                    s.outstanding[slot] = bor(s.outstanding[slot], chosen)
                s.pend[task, kind, i] = chosen
                if not self.three_way:
                    clash += [
                        band(chosen, s.pend[other, kind, i])
                        for other in self.tasks
                        if other != task
                    ]
            if self.items[i] not in self.config.call(task).drops:
                s.udel[task, i] = bor(s.udel[task, i], band(deletes[i], s.ghost["acked", i]))
        s.guard["guard.assert"] = bor(s.guard["guard.assert"], *clash)
        some_ops = bor(deletes + creates)
        self._set_pc(s, task, Pc.WAIT_ACKS)
        quiet = self._finish(s, task, Pc.DONE)
        s.dseq[task] = s.diffs[()]
        s.diffs[()] = mk_inc(s.diffs[()])
        return [(", sends ops", some_ops, s), (", nothing to send", bnot(some_ops), quiet)]

    def _finish(self, s: SymState, task: int, pc: Pc) -> SymState:
        s = s.copy()
        self._release_if_owner(s, PROVIDER, task)
        self._release_if_owner(s, ACTIVITY, task)
        if self.config.local_update(task) is LocalUpdate.AFTER_PUSH:
            adds = self.config.call(task).adds
            s.set_lst(LOCAL, s.lst(LOCAL).upsert(self.items.index(item) for item in adds))
        self._set_pc(s, task, pc)
        for i in range(self.n):
            for kind in KINDS:
                s.pend[task, kind, i] = FALSE
        return s

    def _pending_any(self, s: SymState, task: int) -> z3.BoolRef:
        return bor(s.pend[task, kind, i] for kind in KINDS for i in range(self.n))

    # -- environment steps ---------------------------------------------------------

    def _sent_before(
        self, s: SymState, a: tuple[int, OpKind, int], b: tuple[int, OpKind, int]
    ) -> z3.BoolRef:
        """Op slot a was sent before op slot b (both sent).

        Batch numbers are compared as distances back from the next one (`diffs`), so
        the order is right modulo the width too."""
        if a[0] != b[0]:
            diffs = s.diffs[()]
            return mk_ult(_sub(s.dseq[a[0]], diffs), _sub(s.dseq[b[0]], diffs))
        if a[2] == b[2]:
            return FALSE  # one batch never holds two ops on one item
        return self._batch_before(s, a[0], a[2], b[2])

    def _batch_before(self, s: SymState, task: int, i: int, j: int) -> z3.BoolRef:
        if i < j:
            return s.bord[task, (i, j)]
        return bnot(s.bord[task, (j, i)])

    def _in_flight(self, s: SymState, slot: tuple[int, OpKind, int]) -> z3.BoolRef:
        return mk_eq(s.status[slot], _status(SENT))

    def _head_op(self, s: SymState, slot: tuple[int, OpKind, int]) -> z3.BoolRef:
        """The op is the head of the op FIFO: its batch is the oldest with ops in
        flight, and no op of its batch still in flight comes before it."""
        t, _, i = slot
        return band(
            self._in_flight(s, slot),
            mk_eq(s.dseq[t], s.abatch[()]),
            *(
                bnot(band(self._in_flight(s, other), self._batch_before(s, t, other[2], i)))
                for other in self.slots
                if other[0] == t and other[2] != i
            ),
        )

    def _answer(self, s: SymState, slot: tuple[int, OpKind, int], rejected: z3.BoolRef) -> None:
        last = bnot(
            bor(
                self._in_flight(s, other)
                for other in self.slots
                if other[0] == slot[0] and other != slot
            )
        )
        s.abatch[()] = ite(last, mk_inc(s.abatch[()]), s.abatch[()])
        s.status[slot] = _status(ANSWERED)
        s.eseq[slot] = s.emitted[()]
        s.rejected[slot] = rejected
        s.emitted[()] = mk_inc(s.emitted[()])

    def _server_apply(self, s: SymState, slot: tuple[int, OpKind, int]) -> SymState:
        s = s.copy()
        _, kind, i = slot
        server = s.lst(SERVER)
        if kind is OpKind.DELETE:
            rejected = bnot(server.has[i])
            s.set_lst(SERVER, SList.ite(rejected, server, server.remove(i)))
            s.ghost["removed", i] = bor(s.ghost["removed", i], bnot(rejected))
        else:
            after = s.anchor[slot]
            orphan = band(
                bnot(self.refs.is_(after, None)), bnot(self.refs.select(after, server.has))
            )
            rejected = bor(server.has[i], orphan)
            removed = [s.ghost["removed", j] for j in range(self.n)]
            s.ghost["refused", i] = bor(
                s.ghost["refused", i],
                band(bnot(server.has[i]), orphan, self.refs.select(after, removed)),
            )
            placed = server.insert_after(i, after, self.refs)
            s.set_lst(SERVER, SList.ite(rejected, server, placed))
            s.ghost["reached", i] = bor(s.ghost["reached", i], bnot(rejected))
            s.ghost["rec", i] = bor(s.ghost["rec", i], band(bnot(rejected), s.ghost["removed", i]))
        self._answer(s, slot, rejected)
        return s

    def _server_reject(self, s: SymState, slot: tuple[int, OpKind, int]) -> SymState:
        s = s.copy()
        self._answer(s, slot, TRUE)
        return s

    def _client_apply(self, s: SymState, slot: tuple[int, OpKind, int]) -> SymState:
        s = s.copy()
        _, kind, i = slot
        s.consumed[()] = mk_inc(s.consumed[()])
        s.status[slot] = _status(DONE)
        applied = bnot(s.rejected[slot])
        mirror = s.lst(MIRROR)
        if kind is OpKind.CREATE:
            inserted = mirror.insert_after(i, s.anchor[slot], self.refs)
            s.set_lst(MIRROR, SList.ite(band(applied, bnot(mirror.has[i])), inserted, mirror))
            s.ghost["acked", i] = bor(s.ghost["acked", i], applied)
        else:
            s.set_lst(MIRROR, SList.ite(applied, mirror.remove(i), mirror))
            if self.three_way:
                s.ghost["gone", i] = bor(s.ghost["gone", i], applied)
        # resolve the ack: the mirror-diff session resolves an added or deleted
        # (kind, item) in every task waiting for it, a rejection only in the op's
        # own task; the three-way session always only in the op's own task
        for t in self.tasks if not self.three_way else (slot[0],):
            resolves = s.pc_is(t, Pc.WAIT_ACKS)
            if t != slot[0]:
                resolves = band(resolves, applied)
            s.pend[t, kind, i] = band(s.pend[t, kind, i], bnot(resolves))
        # the op leaves the expected view (a task sends one op per (kind, item))
        s.outstanding[slot] = FALSE
        return s

    def _client_apply_pool(self, s: SymState, p: int) -> SymState:
        s = s.copy()
        s.consumed[()] = mk_inc(s.consumed[()])
        s.pool_status[p] = _status(CONSUMED)
        mirror = s.lst(MIRROR)
        inserted = mirror.insert_after(p, s.pool_anchor[p], self.refs)
        s.set_lst(MIRROR, SList.ite(mirror.has[p], mirror, inserted))
        s.ghost["acked", p] = TRUE
        return s

    def _model_creates(self, s: SymState, p: int) -> SymState:
        s = s.copy()
        server = s.lst(SERVER)
        s.pool_anchor[p] = server.last(self.refs)
        s.set_lst(SERVER, server.append(p))
        s.ghost["reached", p] = TRUE
        s.pool_status[p] = _status(IN_FLIGHT)
        s.pool_seq[p] = s.emitted[()]
        s.emitted[()] = mk_inc(s.emitted[()])
        return s

    def _learn(self, s: SymState, p: int) -> SymState:
        s = s.copy()
        s.set_lst(LOCAL, s.lst(LOCAL).upsert([p]))
        s.learned[p] = TRUE
        return s

    # -- the move instances --------------------------------------------------------

    def _instances(self) -> Iterator[Instance]:
        for move, name, build in self._builders():
            reads: set[str] = set()
            self.cur.reads = reads
            guard, result = build()
            paths = result if isinstance(result, list) else [("", TRUE, result)]
            self.cur.reads = None
            for label, cond, effect in paths:
                writes = frozenset(
                    n for n, value in effect.vals.items() if value is not self.cur.vals[n]
                )
                yield Instance(
                    move, name + label, band(guard, cond), effect, frozenset(reads), writes
                )

    def _builders(self) -> Iterator[Named]:
        """Every move instance: its move, a finer name, and how to build its guard and
        effect from the template state `cur` (called at once, in order).

        Each subject (a task, an op slot, a pool item) gets the instances of its move
        kinds (`SUBJECT_MOVES`) from that kind's handler (`BUILDERS`)."""
        subjects: tuple[tuple[str, Sequence[Subject]], ...] = (
            ("task", self.tasks),
            ("op", self.slots),
            ("pool", tuple(PoolItem(position, p) for position, p in enumerate(self.pool))),
        )
        for category, members in subjects:
            for subject in members:
                for kind in SUBJECT_MOVES[category]:
                    yield from builder(kind)(self, subject)

    def _task_moves(self, kind: MoveKind, subject: Subject) -> Iterator[Named]:
        assert isinstance(subject, int), subject
        t = subject
        partial = functools.partial
        copy_site = self.config.site(t).request is RequestSource.CALLER_COPY
        if kind is MoveKind.COPY:
            if copy_site:
                yield Move(MoveKind.COPY, t), f"copy T{t}", partial(self._b_copy, t)
        elif kind is MoveKind.CALL:
            yield Move(MoveKind.CALL, t), f"call T{t}", partial(self._b_call, t, copy_site)
            if copy_site:
                yield (
                    Move(MoveKind.CALL, t),
                    f"call T{t} (from its copy)",
                    partial(self._b_call_copied, t),
                )
        elif kind is MoveKind.WAKE:
            if self.config.locks(t):
                yield (
                    Move(MoveKind.WAKE, t),
                    f"wake T{t} (activity lock)",
                    partial(self._b_wake_activity, t),
                )
            if not self.three_way:
                yield (
                    Move(MoveKind.WAKE, t),
                    f"wake T{t} (provider lock)",
                    partial(self._b_wake_provider, t),
                )
        elif kind is MoveKind.RESUME:
            yield Move(MoveKind.RESUME, t), f"resume T{t}", partial(self._b_resume, t)
        elif kind is MoveKind.TIMEOUT:
            yield Move(MoveKind.TIMEOUT, t), f"timeout T{t}", partial(self._b_timeout, t)
        else:
            raise InternalError(f"no task move of kind {kind.value} in the z3 encoding")

    def _op_moves(self, kind: MoveKind, subject: Subject) -> Iterator[Named]:
        assert isinstance(subject, tuple), subject
        slot = subject
        t, op, i = slot
        label = f"T{t}'s {op.value} {self.items[i]}"
        move = Move(kind, t, self.items[i])
        partial = functools.partial
        if kind is MoveKind.SERVER_APPLY:
            yield move, f"server applies {label}", partial(self._b_server_apply, slot)
        elif kind is MoveKind.SERVER_REJECT:
            yield move, f"server rejects {label}", partial(self._b_server_reject, slot)
        elif kind is MoveKind.CLIENT_APPLY:
            yield (
                move,
                f"session receives the answer to {label}",
                partial(self._b_client_apply, slot),
            )
        else:
            raise InternalError(f"no op move of kind {kind.value} in the z3 encoding")

    def _pool_moves(self, kind: MoveKind, subject: Subject) -> Iterator[Named]:
        assert isinstance(subject, PoolItem), subject
        p = subject.item
        item = self.items[p]
        move = Move(kind, None, item)
        partial = functools.partial
        if kind is MoveKind.MODEL_CREATES:
            earlier = self.pool[subject.position - 1] if subject.position else None
            yield move, f"model creates {item}", partial(self._b_model_creates, p, earlier)
        elif kind is MoveKind.LEARN:
            yield move, f"local learns {item}", partial(self._b_learn, p)
        elif kind is MoveKind.CLIENT_APPLY:
            yield (
                move,
                f"session receives the model's {item}",
                partial(self._b_client_apply_pool, p),
            )
        else:
            raise InternalError(f"no pool move of kind {kind.value} in the z3 encoding")

    def _enabled(self, kind: MoveKind) -> z3.BoolRef:
        """The environment option that enables moves of `kind` (`model.MOVES`)."""
        option = MOVES[kind].option
        if option is None:
            raise InternalError(f"moves of kind {kind.value} need no environment option")
        return self.env[option]

    def _stale(self, task: int) -> z3.BoolRef:
        copy_site = self.config.site(task).request is RequestSource.CALLER_COPY
        return self._enabled(MoveKind.COPY) if copy_site else FALSE

    def _b_copy(self, t: int) -> Built:
        s = self.cur
        copied = s.copy()
        self._set_pc(copied, t, Pc.COPIED)
        copied.set_lst(copy_list(t), s.lst(LOCAL))
        return band(self._stale(t), s.pc_is(t, Pc.IDLE), self._twin_started(t)), copied

    def _b_call(self, t: int, copy_site: bool) -> Built:
        s = self.cur
        guard = band(bnot(self._stale(t)), s.pc_is(t, Pc.IDLE), self._twin_started(t))
        return guard, self._call(s, t, False)

    def _twin_started(self, t: int) -> z3.BoolRef:
        twin = self.twin.get(t)
        return TRUE if twin is None else bnot(self.cur.pc_is(twin, Pc.IDLE))

    def _b_call_copied(self, t: int) -> Built:
        s = self.cur
        return s.pc_is(t, Pc.COPIED), self._call(s, t, True)

    def _b_wake_activity(self, t: int) -> Built:
        s = self.cur
        guard = band(s.pc_is(t, Pc.WAIT_ACTIVITY), self._owner(s, ACTIVITY, t))
        return guard, self._snapshot(s, t)

    def _b_wake_provider(self, t: int) -> Built:
        s = self.cur
        guard = band(s.pc_is(t, Pc.WAIT_PROVIDER), self._owner(s, PROVIDER, t))
        return guard, self._diff_and_send(s, t)

    def _b_resume(self, t: int) -> Built:
        s = self.cur
        guard = band(s.pc_is(t, Pc.WAIT_ACKS), bnot(self._pending_any(s, t)))
        return guard, self._finish(s, t, Pc.DONE)

    def _b_timeout(self, t: int) -> Built:
        s = self.cur
        guard = band(
            self._enabled(MoveKind.TIMEOUT), s.pc_is(t, Pc.WAIT_ACKS), self._pending_any(s, t)
        )
        return guard, self._finish(s, t, Pc.FAILED)

    def _b_server_apply(self, slot: Slot) -> Built:
        return self._head_op(self.cur, slot), self._server_apply(self.cur, slot)

    def _b_server_reject(self, slot: Slot) -> Built:
        guard = band(self._enabled(MoveKind.SERVER_REJECT), self._head_op(self.cur, slot))
        return guard, self._server_reject(self.cur, slot)

    def _b_client_apply(self, slot: Slot) -> Built:
        s = self.cur
        guard = band(mk_eq(s.status[slot], _status(ANSWERED)), mk_eq(s.eseq[slot], s.consumed[()]))
        return guard, self._client_apply(s, slot)

    def _b_model_creates(self, p: int, earlier: int | None) -> Built:
        s = self.cur
        previous = (
            TRUE if earlier is None else bnot(mk_eq(s.pool_status[earlier], _status(NOT_CREATED)))
        )
        guard = band(
            self._enabled(MoveKind.MODEL_CREATES),
            mk_eq(s.pool_status[p], _status(NOT_CREATED)),
            previous,
        )
        return guard, self._model_creates(s, p)

    def _b_learn(self, p: int) -> Built:
        s = self.cur
        guard = band(
            self._enabled(MoveKind.LEARN),
            bnot(mk_eq(s.pool_status[p], _status(NOT_CREATED))),
            s.ghost["acked", p],
            bnot(s.learned[p]),
        )
        return guard, self._learn(s, p)

    def _b_client_apply_pool(self, p: int) -> Built:
        s = self.cur
        guard = band(
            mk_eq(s.pool_status[p], _status(IN_FLIGHT)), mk_eq(s.pool_seq[p], s.consumed[()])
        )
        return guard, self._client_apply_pool(s, p)

    def independent(self, a: int, b: int) -> bool:
        """Instances a and b commute wherever both are enabled, and neither enables
        or disables the other: neither writes a variable the other reads or writes."""
        x, y = self.instances[a], self.instances[b]
        return not (x.writes & (y.reads | y.writes)) and not (y.writes & (x.reads | x.writes))

    @functools.cached_property
    def commuting(self) -> tuple[tuple[int, ...], ...]:
        """For each instance i, the instances j > i independent of it."""
        count = len(self.instances)
        return tuple(
            tuple(j for j in range(i + 1, count) if self.independent(i, j)) for i in range(count)
        )

    def peephole(self, previous: z3.BitVecRef, selector: z3.BitVecRef) -> list[z3.BoolRef]:
        """Partial-order reduction between two consecutive steps: of two adjacent
        independent moves, only the order with the lower instance first is kept.
        Swapping them reaches the same state in the same number of steps, so the
        states reachable at each exact depth are unchanged."""
        width = self.mv_width
        constraints = []
        for i, later in enumerate(self.commuting):
            if not later:
                continue
            constraints.append(
                z3.Implies(
                    mk_eq(selector, z3.BitVecVal(i, width)),
                    band(bnot(mk_eq(previous, z3.BitVecVal(j, width))) for j in later),
                )
            )
        return constraints

    # -- the transition relation ---------------------------------------------------

    def transition(self, cur: SymState, nxt: SymState, selector: z3.BitVecRef) -> list[z3.BoolRef]:
        """Constraints saying: move number `selector` takes `cur` to `nxt`."""
        template = self.template
        pairs = [(self.cur[name], cur[name]) for name in self.schema.sorts]
        pairs += [(self.nxt[name], nxt[name]) for name in self.schema.sorts]
        pairs.append((self._mv, selector))
        return [z3.substitute(z3.And(*template), *pairs)]

    @functools.cached_property
    def nxt(self) -> SymState:
        return self.state("'")

    @functools.cached_property
    def _mv(self) -> z3.BitVecRef:
        return self.selector("")

    @functools.cached_property
    def template(self) -> tuple[z3.BoolRef, ...]:
        """The transition relation over `cur`, `nxt` and the selector `mv`."""
        mv = self._mv
        parts: list[z3.BoolRef] = [mk_ult(mv, z3.BitVecVal(len(self.instances), self.mv_width))]
        chosen = [
            mk_eq(mv, z3.BitVecVal(index, self.mv_width)) for index in range(len(self.instances))
        ]
        parts += [
            z3.Implies(chosen[index], inst.guard)
            for index, inst in enumerate(self.instances)
            if inst.guard is not TRUE
        ]
        for name in self.schema.sorts:
            old = self.cur[name]
            # instances that write the same value share one branch (z3 terms are
            # hash-consed, so equal values have equal ids)
            groups: dict[int, tuple[Any, list[z3.BoolRef]]] = {}
            for index, inst in enumerate(self.instances):
                value = inst.effect[name]
                if value is not old:
                    groups.setdefault(value.get_id(), (value, []))[1].append(chosen[index])
            expr = old
            for value, selectors in groups.values():
                expr = mk_ite(bor(selectors), value, expr)
            parts.append(mk_eq(self.nxt[name], expr))
        return tuple(parts)

    # -- decoding ------------------------------------------------------------------

    def decode_move(self, model: z3.ModelRef, selector: z3.BitVecRef) -> Instance:
        value = model.eval(selector, model_completion=True)
        assert isinstance(value, z3.BitVecNumRef)
        index: int = value.as_long()
        return self.instances[index]

    def describe(self, model: z3.ModelRef, s: SymState) -> dict[str, Any]:
        """A readable picture of one symbolic state under a z3 model."""

        def val(expr: Any) -> Any:
            return model.eval(expr, model_completion=True)

        def true(expr: Any) -> bool:
            return bool(z3.is_true(val(expr)))

        def num(expr: Any) -> int:
            value = val(expr)
            assert isinstance(value, z3.BitVecNumRef)
            return int(value.as_long())

        def ref(expr: Any) -> str | None:
            index = num(expr)
            return self.items[index] if index < self.n else None

        def lst(name: str) -> list[str]:
            return [self.items[i] for i in s.lst(name).order(model)]

        to_server = []
        to_client = []
        for slot in self.slots:
            t, kind, i = slot
            status = num(s.status[slot])
            after = ref(s.anchor[slot]) if kind is OpKind.CREATE else None
            text = f"T{t} {kind.value} {self.items[i]}" + (
                f" after {after or 'the head'}" if kind is OpKind.CREATE else ""
            )
            if status == SENT:
                earlier = sum(
                    1
                    for other in self.slots
                    if other[0] == t
                    and other[2] != i
                    and num(s.status[other]) == SENT
                    and true(self._batch_before(s, t, other[2], i))
                )
                to_server.append(((num(s.dseq[t]), earlier), text))
            elif status == ANSWERED:
                rejected = true(s.rejected[slot])
                outcome = (
                    "rejected" if rejected else ("added" if kind is OpKind.CREATE else "deleted")
                )
                to_client.append((num(s.eseq[slot]), f"T{t} {self.items[i]} {outcome}"))
        for p in self.pool:
            if num(s.pool_status[p]) == IN_FLIGHT:
                to_client.append((num(s.pool_seq[p]), f"model {self.items[p]} added"))
        tasks = []
        for t in self.tasks:
            code = num(s.pc[t])
            pc = next((pc.value for pc, value in PC_CODES.items() if value == code), f"?{code}")
            pending = [
                f"{kind.value} {self.items[i]}"
                for kind in KINDS
                for i in range(self.n)
                if true(s.pend[t, kind, i])
            ]
            task: dict[str, Any] = {"pc": pc}
            if pc in (Pc.WAIT_ACTIVITY.value, Pc.WAIT_PROVIDER.value):
                if true(s.bound[t]):
                    task["request"] = "the live local context"
                else:
                    task["request"] = lst(request_list(t))
            if pending:
                task["pending"] = pending
            tasks.append(task)

        def lock(name: str) -> dict[str, Any]:
            head, tail = num(s.head[name]), num(s.tail[name])
            modulo = 2**self.lock_width
            queue = sorted(
                ((num(s.ticket[name, t]) - head) % modulo, t)
                for t in self.tasks
                if true(s.queued[name, t])
            )
            del tail
            order = [t for _, t in queue]
            return {"owner": order[0] if order else None, "waiters": order[1:]}

        return {
            "server": lst(SERVER),
            "mirror": lst(MIRROR),
            "local": lst(LOCAL),
            "to_server": [text for _, text in sorted(to_server)],
            "to_client": [text for _, text in sorted(to_client)],
            "activity_lock": lock(ACTIVITY),
            "provider_lock": lock(PROVIDER),
            "tasks": tasks,
            "acked": [self.items[i] for i in range(self.n) if true(s.ghost["acked", i])],
            "guards": [name for name in GUARDS if true(s.guard[name])],
        }

    # -- the abstraction function (model state to encoding values) ------------------

    @functools.cached_property
    def _initial_values(self) -> dict[str, bool | int]:
        values: dict[str, bool | int] = {}
        for name, value in self.initial().vals.items():
            values[name] = value is TRUE if value is TRUE or value is FALSE else value.as_long()
        return values

    def _list_values(self, values: Values[bool | int], name: str, order: Sequence[str]) -> None:
        position = {self.items.index(item): pos for pos, item in enumerate(order)}
        for i in range(self.n):
            values.has[name, i] = i in position
        for i, j in self.pairs:
            values.prec[name, (i, j)] = position.get(i, self.n + i) < position.get(j, self.n + j)

    def concrete(self, state: State, log: set[str] | None = None) -> dict[str, bool | int]:
        """Encoding values for a model state (Python Booleans and integers): the
        abstraction function.

        Used by the tests that walk every reachable state of the model. Values the
        model no longer has (positions of answered ops, absolute counters) are
        chosen; the encoding must not depend on them. `log`, when given, collects the
        variables it sets (the schema test reads it).
        """
        index = self.items.index
        ref = self.refs.index
        none = self.refs.none
        v: Values[bool | int] = Values(dict(self._initial_values), self.schema.sorts)
        self._list_values(v, SERVER, state.server)
        self._list_values(v, MIRROR, state.mirror)
        self._list_values(v, LOCAL, state.local)
        for t, task in enumerate(state.tasks):
            v.pc[t] = PC_CODES[task.pc]
            v.bound[t] = task.bound_to_local
            if task.request is not None:
                self._list_values(v, request_list(t), task.request)
            if task.copy is not None:
                self._list_values(v, copy_list(t), task.copy)
            drops = self.config.call(t).drops
            for i, item in enumerate(self.items):
                v.base[t, i] = item in task.base
                for kind in KINDS:
                    v.pend[t, kind, i] = (kind, item) in task.pending
                v.udel[t, i] = (t, item, True) in state.deletes_sent and item not in drops
            if task.pc in (Pc.WAIT_ACKS, Pc.DONE, Pc.FAILED):
                for kind in KINDS:
                    for i in range(self.n):
                        v.status[(t, kind, i)] = DONE
        for name, lock in ((ACTIVITY, state.activity_lock), (PROVIDER, state.provider_lock)):
            queue = ([] if lock.owner is None else [lock.owner]) + list(lock.waiters)
            v.head[name] = 0
            v.tail[name] = len(queue)
            for position, t in enumerate(queue):
                v.ticket[name, t] = position
                v.queued[name, t] = True
        for op in state.to_server:
            slot = (op.task, op.kind, index(op.item))
            v.status[slot] = SENT
            if op.kind is OpKind.CREATE:
                after = ref(op.after)
                v.anchor[slot] = none if after is None else after
        for position, event in enumerate(state.to_client):
            i = index(event.item)
            if event.task is None:
                after = ref(event.after)
                v.pool_status[i] = IN_FLIGHT
                v.pool_seq[i] = position
                v.pool_anchor[i] = none if after is None else after
                continue
            answered = {
                EventKind.ADDED: OpKind.CREATE,
                EventKind.DELETED: OpKind.DELETE,
            }.get(event.kind, event.op)
            assert answered is not None
            kind = answered
            slot = (event.task, kind, i)
            v.status[slot] = ANSWERED
            v.eseq[slot] = position
            v.rejected[slot] = event.kind is EventKind.REJECTED
            if kind is OpKind.CREATE and event.kind is EventKind.ADDED:
                after = ref(event.after)
                v.anchor[slot] = none if after is None else after
        v.consumed[()] = 0
        v.emitted[()] = len(state.to_client)
        for position, p in enumerate(self.pool):
            in_flight = any(ev.task is None and index(ev.item) == p for ev in state.to_client)
            if position < state.created and not in_flight:
                v.pool_status[p] = CONSUMED
            v.learned[p] = self.items[p] in state.learned
        # the op FIFO: batches numbered in the order they were sent (in flight or,
        # three-way, still outstanding), each with the order of its own ops
        sent = state.outstanding if self.three_way else state.to_server
        batches: list[int] = []
        for op in sent:
            if op.task not in batches:
                batches.append(op.task)
        in_flight_tasks = {op.task for op in state.to_server}
        applied = [t for t in batches if t not in in_flight_tasks]
        assert batches[: len(applied)] == applied, "batches leave the op FIFO in order"
        for number, t in enumerate(batches):
            v.dseq[t] = number
            order = [index(op.item) for op in sent if op.task == t]
            for i, j in self.pairs:
                if i in order and j in order:
                    v.bord[t, (i, j)] = order.index(i) < order.index(j)
        v.abatch[()] = len(applied)
        v.diffs[()] = len(batches)
        for t in self.tasks:
            if t not in batches:
                v.dseq[t] = 2**self.lock_width - 1
        for op in state.outstanding:
            v.outstanding[(op.task, op.kind, index(op.item))] = True
        recreated = {item for _, item in state.recreated}
        for i, item in enumerate(self.items):
            v.ghost["acked", i] = item in state.acked
            v.ghost["reached", i] = item in state.reached
            v.ghost["removed", i] = item in state.removed
            v.ghost["gone", i] = item in state.gone
            v.ghost["rec", i] = item in recreated
            v.ghost["refused", i] = item in state.refused
        # the model is exact: no state of it sets an exactness guard
        for guard in GUARDS:
            v.guard[guard] = False
        if log is not None:
            log.update(v.writes)
        return v.vals

    def constant(self, name: str, value: bool | int) -> z3.ExprRef:
        """A z3 constant for a Python value of a state variable."""
        if isinstance(value, bool):
            return const_bool(value)
        sort = self.schema.sorts[name]
        return _bv_constant(value, sort.size())


#: The move kinds each subject has, in the order their instances are numbered (the
#: selector `mv`): z3's choice among equally short counterexamples depends on it.
SUBJECT_MOVES: dict[str, tuple[MoveKind, ...]] = {
    "task": (MoveKind.COPY, MoveKind.CALL, MoveKind.WAKE, MoveKind.RESUME, MoveKind.TIMEOUT),
    "op": (MoveKind.SERVER_APPLY, MoveKind.SERVER_REJECT, MoveKind.CLIENT_APPLY),
    "pool": (MoveKind.MODEL_CREATES, MoveKind.LEARN, MoveKind.CLIENT_APPLY),
    # never built: `refuse_unmodelled` turns away every config that could make them
    "connection": (MoveKind.DISCONNECT, MoveKind.CONNECT),
    "stale-anchor": (MoveKind.MODEL_ANCHORS_ON_DELETED,),
    # never built: the encoding creates every item at its call (`ORDER_UNENCODED`)
    "creation": (MoveKind.BEFORE_CALL,),
}

Handler = Callable[[Encoding, Subject], Iterator[Named]]


def _client_apply(enc: Encoding, subject: Subject) -> Iterator[Named]:
    # the answer to an op, or the event of an item the model created
    if isinstance(subject, PoolItem):
        return enc._pool_moves(MoveKind.CLIENT_APPLY, subject)
    return enc._op_moves(MoveKind.CLIENT_APPLY, subject)


#: The z3 builder of each move kind: the instances it gives one subject.
BUILDERS: dict[MoveKind, Handler] = {
    MoveKind.COPY: lambda enc, subject: enc._task_moves(MoveKind.COPY, subject),
    MoveKind.CALL: lambda enc, subject: enc._task_moves(MoveKind.CALL, subject),
    MoveKind.WAKE: lambda enc, subject: enc._task_moves(MoveKind.WAKE, subject),
    MoveKind.RESUME: lambda enc, subject: enc._task_moves(MoveKind.RESUME, subject),
    MoveKind.TIMEOUT: lambda enc, subject: enc._task_moves(MoveKind.TIMEOUT, subject),
    MoveKind.SERVER_APPLY: lambda enc, subject: enc._op_moves(MoveKind.SERVER_APPLY, subject),
    MoveKind.SERVER_REJECT: lambda enc, subject: enc._op_moves(MoveKind.SERVER_REJECT, subject),
    MoveKind.CLIENT_APPLY: _client_apply,
    MoveKind.MODEL_CREATES: lambda enc, subject: enc._pool_moves(MoveKind.MODEL_CREATES, subject),
    MoveKind.LEARN: lambda enc, subject: enc._pool_moves(MoveKind.LEARN, subject),
    MoveKind.DISCONNECT: lambda enc, subject: iter(()),
    MoveKind.CONNECT: lambda enc, subject: iter(()),
    # never built: every modelled shape makes `stale-anchors` inert (its items with an
    # unknown anchor go to the tail), and `refuse_unmodelled` turns away any other
    MoveKind.MODEL_ANCHORS_ON_DELETED: lambda enc, subject: iter(()),
    # never built: see `ORDER_UNENCODED`
    MoveKind.BEFORE_CALL: lambda enc, subject: iter(()),
}


def builder(kind: MoveKind) -> Handler:
    """The z3 builder of moves of `kind`; InternalError for a kind without one."""
    handler = BUILDERS.get(kind)
    if handler is None:
        raise InternalError(f"the z3 encoding has no builder for moves of kind {kind.value}")
    return handler


def check_builders(
    builders: Mapping[MoveKind, Handler] = BUILDERS,
    subjects: Mapping[str, Sequence[MoveKind]] = SUBJECT_MOVES,
) -> None:
    """Every `MoveKind` has a builder and a subject; InternalError names those without."""
    placed = {kind for kinds in subjects.values() for kind in kinds}
    for what, known in (("builder", set(builders)), ("subject", placed)):
        missing = sorted(kind.value for kind in set(MoveKind) - known)
        if missing:
            raise InternalError(f"the z3 encoding has no {what} for moves of kind {missing}")


check_builders()
