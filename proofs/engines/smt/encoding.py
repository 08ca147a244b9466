"""The model's transition relation in z3, generated from a `model.Config`.

Nothing here is written per variant or per site: every formula comes from the
config's data (each call's site record, the variant's locks, local updates and
session kind, the scenario's items and server pool) by the same case analysis
the model's own code performs in `model/moves.py`. Each task step below is the
symbolic twin of the model function of the same name.

State variables (one copy per BMC step; `docs/proofs.md` has the full table):

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
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import z3
from attrs import frozen
from z3 import z3core

from model import (
    Config,
    EventKind,
    Invariant,
    LocalUpdate,
    Move,
    MoveKind,
    OpKind,
    Pc,
    RequestSource,
    State,
)
from model.environment import OPTION_NAMES, Environment
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

KINDS: tuple[OpKind, ...] = (OpKind.CREATE, OpKind.DELETE)
_K = {OpKind.CREATE: "C", OpKind.DELETE: "D"}

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
PC_WIDTH = max(1, (len(PC_CODES) - 1).bit_length())
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
    return {
        "stale-copies": environment.stale_copies,
        "server-items": environment.server_items,
        "timeouts": environment.timeouts,
        "rejections": environment.rejections,
    }


#: Branches of a step: a label, the condition (over the step's start state) and
#: the resulting state. Each becomes an instance of its own.
Paths = list[tuple[str, z3.BoolRef, "SymState"]]


#: What building a move instance gives: its guard, and its effect or branches.
Built = tuple[z3.BoolRef, "Paths | SymState"]
Builder = Callable[[], Built]
Slot = tuple[int, OpKind, int]


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


class SymState:
    """A symbolic state: state variable names to z3 expressions."""

    __slots__ = ("enc", "reads", "vals")

    def __init__(self, enc: Encoding, vals: dict[str, Any], reads: set[str] | None = None) -> None:
        self.enc = enc
        self.vals = vals
        #: When set, every variable read is logged here (copies share the log).
        self.reads = reads

    def copy(self) -> SymState:
        return SymState(self.enc, dict(self.vals), self.reads)

    def __getitem__(self, name: str) -> Any:
        if self.reads is not None:
            self.reads.add(name)
        return self.vals[name]

    def __setitem__(self, name: str, value: Any) -> None:
        self.vals[name] = value

    def lst(self, name: str) -> SList:
        enc = self.enc
        if self.reads is not None:
            self.reads.update(f"{name}.has.{i}" for i in range(enc.n))
            self.reads.update(f"{name}.prec.{i}.{j}" for i, j in enc.pairs)
        return SList(
            [self.vals[f"{name}.has.{i}"] for i in range(enc.n)],
            {(i, j): self.vals[f"{name}.prec.{i}.{j}"] for i, j in enc.pairs},
        )

    def set_lst(self, name: str, value: SList) -> None:
        for i in range(self.enc.n):
            self.vals[f"{name}.has.{i}"] = value.has[i]
        for i, j in self.enc.pairs:
            self.vals[f"{name}.prec.{i}.{j}"] = value.prec[(i, j)]

    def pc(self, task: int) -> Any:
        return self[f"T{task}.pc"]

    def pc_is(self, task: int, *pcs: Pc) -> z3.BoolRef:
        return bor(mk_eq(self.pc(task), _pc(pc)) for pc in pcs)

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


class Encoding:
    """The transition system of one config, over named state variables."""

    def __init__(self, config: Config, specialize: bool = False, symmetry: bool = True) -> None:
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
        self.schema: dict[str, z3.SortRef] = {}
        self._declare()
        self.cur = self.state("")
        self.instances: tuple[Instance, ...] = tuple(
            inst for inst in self._instances() if inst.guard is not FALSE
        )
        #: The environment options some move of this config reads: environments that
        #: differ only in other options have the very same transition relation.
        self.relevant_options: frozenset[str] = frozenset(self.env.used)
        self.mv_width = max(1, len(self.instances).bit_length())

    # -- variables ---------------------------------------------------------------

    def _declare(self) -> None:
        boolean = z3.BoolSort()
        two = z3.BitVecSort(2)
        seq = z3.BitVecSort(self.seq_width)
        lock = z3.BitVecSort(self.lock_width)
        lists = ["srv", "mir", "loc"]
        for t in self.tasks:
            lists += [f"T{t}.req", f"T{t}.copy"]
        for name in lists:
            for i in range(self.n):
                self.schema[f"{name}.has.{i}"] = boolean
            for i, j in self.pairs:
                self.schema[f"{name}.prec.{i}.{j}"] = boolean
        for t in self.tasks:
            self.schema[f"T{t}.pc"] = z3.BitVecSort(PC_WIDTH)
            self.schema[f"T{t}.bound"] = boolean
            self.schema[f"T{t}.dseq"] = lock
            for i, j in self.pairs:
                self.schema[f"T{t}.bord.{i}.{j}"] = boolean
            for i in range(self.n):
                self.schema[f"T{t}.base.{i}"] = boolean
                for kind in KINDS:
                    self.schema[f"T{t}.pend.{_K[kind]}.{i}"] = boolean
                self.schema[f"udel.T{t}.{i}"] = boolean
        for name in ("al", "pl"):
            self.schema[f"{name}.head"] = lock
            self.schema[f"{name}.tail"] = lock
            for t in self.tasks:
                self.schema[f"{name}.tkt.{t}"] = lock
                self.schema[f"{name}.q.{t}"] = boolean
        for slot in self.slots:
            key = self.slot_key(slot)
            self.schema[f"{key}.st"] = two
            self.schema[f"{key}.eseq"] = seq
            self.schema[f"{key}.rej"] = boolean
            self.schema[f"{key}.out"] = boolean
            if slot[1] is OpKind.CREATE:
                self.schema[f"{key}.after"] = self.refs.sort
        for name in ("diffs", "abatch"):
            self.schema[name] = lock
        for name in ("emitted", "consumed"):
            self.schema[name] = seq
        for p in self.pool:
            self.schema[f"pool.{p}.st"] = two
            self.schema[f"pool.{p}.seq"] = seq
            self.schema[f"pool.{p}.after"] = self.refs.sort
            self.schema[f"pool.{p}.learned"] = boolean
        for ghost in GHOSTS:
            for i in range(self.n):
                self.schema[f"{ghost}.{i}"] = boolean
        for guard in GUARDS:
            self.schema[guard] = boolean

    @staticmethod
    def slot_key(slot: tuple[int, OpKind, int]) -> str:
        t, kind, i = slot
        return f"op.T{t}.{_K[kind]}.{i}"

    def state(self, suffix: str) -> SymState:
        """Fresh variables for every state variable, named with the suffix."""
        return SymState(
            self, {name: z3.Const(f"{name}{suffix}", sort) for name, sort in self.schema.items()}
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
        s.set_lst("srv", server)
        s.set_lst("mir", server)
        s.set_lst("loc", SList.of([index(i) for i in scenario.initial_local], self.n))
        empty = SList.of([], self.n)
        seq0 = z3.BitVecVal(0, self.seq_width)
        lock0 = z3.BitVecVal(0, self.lock_width)
        no_ticket = z3.BitVecVal(2**self.lock_width - 1, self.lock_width)
        for t in self.tasks:
            s.set_lst(f"T{t}.req", empty)
            s.set_lst(f"T{t}.copy", empty)
            s[f"T{t}.pc"] = _pc(Pc.IDLE)
            s[f"T{t}.bound"] = FALSE
            s[f"T{t}.dseq"] = lock0
            for i, j in self.pairs:
                s[f"T{t}.bord.{i}.{j}"] = FALSE
            for i in range(self.n):
                s[f"T{t}.base.{i}"] = FALSE
                for kind in KINDS:
                    s[f"T{t}.pend.{_K[kind]}.{i}"] = FALSE
                s[f"udel.T{t}.{i}"] = FALSE
        for name in ("al", "pl"):
            s[f"{name}.head"] = lock0
            s[f"{name}.tail"] = lock0
            for t in self.tasks:
                s[f"{name}.tkt.{t}"] = no_ticket
                s[f"{name}.q.{t}"] = FALSE
        for slot in self.slots:
            key = self.slot_key(slot)
            s[f"{key}.st"] = _status(UNSENT)
            s[f"{key}.eseq"] = seq0
            s[f"{key}.rej"] = FALSE
            s[f"{key}.out"] = FALSE
            if slot[1] is OpKind.CREATE:
                s[f"{key}.after"] = self.refs.val(None)
        for name in ("diffs", "abatch"):
            s[name] = lock0
        for name in ("emitted", "consumed"):
            s[name] = seq0
        for p in self.pool:
            s[f"pool.{p}.st"] = _status(NOT_CREATED)
            s[f"pool.{p}.seq"] = seq0
            s[f"pool.{p}.after"] = self.refs.val(None)
            s[f"pool.{p}.learned"] = FALSE
        on_server = {index(i) for i in scenario.server}
        for i in range(self.n):
            s[f"acked.{i}"] = const_bool(i in on_server)
            s[f"reached.{i}"] = const_bool(i in on_server)
            for ghost in ("removed", "gone", "rec", "refused"):
                s[f"{ghost}.{i}"] = FALSE
        for guard in GUARDS:
            s[guard] = FALSE
        return s

    def init_formula(self, state: SymState) -> z3.BoolRef:
        initial = self.initial()
        return band(mk_eq(state[name], initial[name]) for name in self.schema)

    # -- properties ----------------------------------------------------------------

    def at_rest(self, s: SymState) -> z3.BoolRef:
        return band(
            mk_eq(s["abatch"], s["diffs"]),
            mk_eq(s["consumed"], s["emitted"]),
            *(
                bnot(s.pc_is(t, Pc.COPIED, Pc.WAIT_ACTIVITY, Pc.WAIT_PROVIDER, Pc.WAIT_ACKS))
                for t in self.tasks
            ),
        )

    def bad(self, s: SymState, invariant: Invariant) -> z3.BoolRef:
        """The model's `check(state, config, invariant)` reports a violation."""
        if invariant is Invariant.NO_UNINTENDED_DELETE:
            return bor(
                s[f"udel.T{t}.{i}"]
                for t in self.tasks
                for i in range(self.n)
                if self.items[i] not in self.config.call(t).drops
            )
        lost = bor(
            band(
                s[f"loc.has.{i}"],
                bor(s[f"reached.{i}"], s[f"refused.{i}"]),
                bnot(s[f"srv.has.{i}"]),
            )
            for i in range(self.n)
        )
        back = bor(band(s[f"rec.{i}"], s[f"srv.has.{i}"]) for i in range(self.n))
        return band(self.at_rest(s), bor(lost, back))

    def inexact(self, s: SymState) -> z3.BoolRef:
        return bor(s[guard] for guard in GUARDS)

    def env_literals(self, environment: Environment) -> list[z3.BoolRef]:
        if self.specialized:
            assert environment == self.config.environment
            return []
        flags = _options(environment)
        return [var if flags[name] else z3.Not(var) for name, var in dict.items(self.env)]

    def env_key(self, environment: Environment) -> tuple[bool, ...]:
        """The environment's options that matter here (see `relevant_options`)."""
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
            s[f"T{task}.base.{i}"] = bor(saw, dropped)

    def _set_pc(self, s: SymState, task: int, pc: Pc) -> None:
        s[f"T{task}.pc"] = _pc(pc)

    # A lock is a ticket dispenser: `tail` is the next ticket, `head` the ticket
    # being served; a queued task holds a ticket, and owns the lock when its ticket
    # is served. Only equalities compare counters, so their values matter modulo
    # the width, which holds more tickets than there are tasks.

    def _owner(self, s: SymState, lock: str, task: int) -> z3.BoolRef:
        return band(s[f"{lock}.q.{task}"], mk_eq(s[f"{lock}.tkt.{task}"], s[f"{lock}.head"]))

    def _take(self, s: SymState, lock: str, task: int) -> z3.BoolRef:
        """Queue for the lock; true when it was free (the task owns it at once)."""
        free = mk_eq(s[f"{lock}.head"], s[f"{lock}.tail"])
        s[f"{lock}.tkt.{task}"] = s[f"{lock}.tail"]
        s[f"{lock}.q.{task}"] = TRUE
        s[f"{lock}.tail"] = mk_inc(s[f"{lock}.tail"])
        return free

    def _release_if_owner(self, s: SymState, lock: str, task: int) -> None:
        owner = self._owner(s, lock, task)
        head = s[f"{lock}.head"]
        s[f"{lock}.head"] = ite(owner, mk_inc(head), head)
        s[f"{lock}.q.{task}"] = band(s[f"{lock}.q.{task}"], bnot(owner))

    def _call(self, s: SymState, task: int, from_copy: bool) -> Paths:
        s = s.copy()
        site = self.config.site(task)
        update = self.config.local_update(task)
        if site.request is RequestSource.CALLER_COPY:
            copy = s.lst(f"T{task}.copy") if from_copy else s.lst("loc")
            requested = self._apply(copy, task)
            self._set_base(s, task, copy.has)
            if update is LocalUpdate.REPLACE:
                self._replace_local(s, requested)
                s[f"T{task}.bound"] = TRUE
            else:
                s.set_lst(f"T{task}.req", requested)
        elif site.request is RequestSource.LOCAL_CONTEXT:
            s[f"T{task}.bound"] = TRUE
        if update is LocalUpdate.BEFORE_PUSH:
            s.set_lst("loc", self._apply(s.lst("loc"), task))
        if site.request is RequestSource.LOCAL_CONTEXT:
            self._set_base(s, task, s.lst("loc").has)
        if self.config.locks(task):
            free = self._take(s, "al", task)
            waiting = s.copy()
            self._set_pc(waiting, task, Pc.WAIT_ACTIVITY)
            return [
                *_when(free, self._snapshot(s, task), ", activity lock free"),
                (", waits for the activity lock", bnot(free), waiting),
            ]
        return self._snapshot(s, task)

    def _replace_local(self, s: SymState, local: SList) -> None:
        old = s.lst("loc")
        for t in self.tasks:
            held = band(s[f"T{t}.bound"], s.pc_is(t, Pc.WAIT_ACTIVITY, Pc.WAIT_PROVIDER))
            if held is FALSE:
                continue
            s[f"T{t}.bound"] = band(s[f"T{t}.bound"], bnot(held))
            s.set_lst(f"T{t}.req", SList.ite(held, old, s.lst(f"T{t}.req")))
        s.set_lst("loc", local)

    def _snapshot(self, s: SymState, task: int) -> Paths:
        s = s.copy()
        if self.config.site(task).request is RequestSource.MIRROR_SNAPSHOT:
            mirror = s.lst("mir")
            s.set_lst(f"T{task}.req", self._apply(mirror, task))
            self._set_base(s, task, mirror.has)
        if self.three_way:
            return self._diff_and_send(s, task)
        free = self._take(s, "pl", task)
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
        touched = bor(s[f"{self.slot_key(slot)}.out"] for slot in creates + deletes)
        last_create = bor(
            band(
                s[f"{self.slot_key(c)}.out"],
                *(
                    bor(bnot(s[f"{self.slot_key(d)}.out"]), self._sent_before(s, d, c))
                    for d in deletes
                ),
            )
            for c in creates
        )
        return ite(touched, last_create, s[f"mir.has.{i}"])

    def _touched(self, s: SymState, i: int) -> z3.BoolRef:
        return bor(s[f"{self.slot_key((t, kind, i))}.out"] for t in self.tasks for kind in KINDS)

    def _diff_and_send(self, s: SymState, task: int) -> Paths:
        s = s.copy()
        n = self.n
        bound = s[f"T{task}.bound"]
        request = SList.ite(bound, s.lst("loc"), s.lst(f"T{task}.req"))
        mirror = s.lst("mir")
        refs = self.refs
        if self.three_way:
            base = [s[f"T{task}.base.{i}"] for i in range(n)]
            gone = [
                bor(
                    s[f"gone.{i}"],
                    *(s[f"{self.slot_key((t, OpKind.DELETE, i))}.out"] for t in self.tasks),
                )
                for i in range(n)
            ]
            request = request.filter([bnot(band(gone[i], base[i])) for i in range(n)])
            s.set_lst("loc", SList.ite(bound, request, s.lst("loc")))
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
            s["guard.order"] = bor(s["guard.order"], ambiguous)
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
            s["guard.lcs"] = bor(s["guard.lcs"], conflict)
        # the batch: deletes first in mirror order, then creates in request order
        for i, j in self.pairs:
            s[f"T{task}.bord.{i}.{j}"] = bor(
                band(deletes[i], deletes[j], mirror.before(i, j)),
                band(creates[i], creates[j], request.before(i, j)),
                band(deletes[i], creates[j]),
            )
        clash = []
        for i in range(n):
            for kind, chosen in ((OpKind.DELETE, deletes[i]), (OpKind.CREATE, creates[i])):
                if chosen is FALSE:
                    s[f"T{task}.pend.{_K[kind]}.{i}"] = FALSE
                    continue
                key = self.slot_key((task, kind, i))
                if kind is OpKind.CREATE:
                    s[f"{key}.after"] = ite(
                        chosen, request.pred(i, anchors, refs), s[f"{key}.after"]
                    )
                s[f"{key}.st"] = ite(chosen, _status(SENT), s[f"{key}.st"])
                if self.three_way:
                    s[f"{key}.out"] = bor(s[f"{key}.out"], chosen)
                s[f"T{task}.pend.{_K[kind]}.{i}"] = chosen
                if not self.three_way:
                    clash += [
                        band(chosen, s[f"T{other}.pend.{_K[kind]}.{i}"])
                        for other in self.tasks
                        if other != task
                    ]
            if self.items[i] not in self.config.call(task).drops:
                s[f"udel.T{task}.{i}"] = bor(
                    s[f"udel.T{task}.{i}"], band(deletes[i], s[f"acked.{i}"])
                )
        s["guard.assert"] = bor(s["guard.assert"], *clash)
        some_ops = bor(deletes + creates)
        self._set_pc(s, task, Pc.WAIT_ACKS)
        quiet = self._finish(s, task, Pc.DONE)
        s[f"T{task}.dseq"] = s["diffs"]
        s["diffs"] = mk_inc(s["diffs"])
        return [(", sends ops", some_ops, s), (", nothing to send", bnot(some_ops), quiet)]

    def _finish(self, s: SymState, task: int, pc: Pc) -> SymState:
        s = s.copy()
        self._release_if_owner(s, "pl", task)
        self._release_if_owner(s, "al", task)
        if self.config.local_update(task) is LocalUpdate.AFTER_PUSH:
            adds = self.config.call(task).adds
            s.set_lst("loc", s.lst("loc").upsert(self.items.index(item) for item in adds))
        self._set_pc(s, task, pc)
        for i in range(self.n):
            for kind in KINDS:
                s[f"T{task}.pend.{_K[kind]}.{i}"] = FALSE
        return s

    def _pending_any(self, s: SymState, task: int) -> z3.BoolRef:
        return bor(s[f"T{task}.pend.{_K[kind]}.{i}"] for kind in KINDS for i in range(self.n))

    # -- environment steps ---------------------------------------------------------

    def _sent_before(
        self, s: SymState, a: tuple[int, OpKind, int], b: tuple[int, OpKind, int]
    ) -> z3.BoolRef:
        """Op slot a was sent before op slot b (both sent).

        Batch numbers are compared as distances back from the next one (`diffs`), so
        the order is right modulo the width too."""
        if a[0] != b[0]:
            diffs = s["diffs"]
            return mk_ult(_sub(s[f"T{a[0]}.dseq"], diffs), _sub(s[f"T{b[0]}.dseq"], diffs))
        if a[2] == b[2]:
            return FALSE  # one batch never holds two ops on one item
        return self._batch_before(s, a[0], a[2], b[2])

    def _batch_before(self, s: SymState, task: int, i: int, j: int) -> z3.BoolRef:
        if i < j:
            return s[f"T{task}.bord.{i}.{j}"]
        return bnot(s[f"T{task}.bord.{j}.{i}"])

    def _in_flight(self, s: SymState, slot: tuple[int, OpKind, int]) -> z3.BoolRef:
        return mk_eq(s[f"{self.slot_key(slot)}.st"], _status(SENT))

    def _head_op(self, s: SymState, slot: tuple[int, OpKind, int]) -> z3.BoolRef:
        """The op is the head of the op FIFO: its batch is the oldest with ops in
        flight, and no op of its batch still in flight comes before it."""
        t, _, i = slot
        return band(
            self._in_flight(s, slot),
            mk_eq(s[f"T{t}.dseq"], s["abatch"]),
            *(
                bnot(band(self._in_flight(s, other), self._batch_before(s, t, other[2], i)))
                for other in self.slots
                if other[0] == t and other[2] != i
            ),
        )

    def _answer(self, s: SymState, slot: tuple[int, OpKind, int], rejected: z3.BoolRef) -> None:
        key = self.slot_key(slot)
        last = bnot(
            bor(
                self._in_flight(s, other)
                for other in self.slots
                if other[0] == slot[0] and other != slot
            )
        )
        s["abatch"] = ite(last, mk_inc(s["abatch"]), s["abatch"])
        s[f"{key}.st"] = _status(ANSWERED)
        s[f"{key}.eseq"] = s["emitted"]
        s[f"{key}.rej"] = rejected
        s["emitted"] = mk_inc(s["emitted"])

    def _server_apply(self, s: SymState, slot: tuple[int, OpKind, int]) -> SymState:
        s = s.copy()
        _, kind, i = slot
        key = self.slot_key(slot)
        server = s.lst("srv")
        if kind is OpKind.DELETE:
            rejected = bnot(server.has[i])
            s.set_lst("srv", SList.ite(rejected, server, server.remove(i)))
            s[f"removed.{i}"] = bor(s[f"removed.{i}"], bnot(rejected))
        else:
            after = s[f"{key}.after"]
            orphan = band(
                bnot(self.refs.is_(after, None)), bnot(self.refs.select(after, server.has))
            )
            rejected = bor(server.has[i], orphan)
            removed = [s[f"removed.{j}"] for j in range(self.n)]
            s[f"refused.{i}"] = bor(
                s[f"refused.{i}"],
                band(bnot(server.has[i]), orphan, self.refs.select(after, removed)),
            )
            placed = server.insert_after(i, after, self.refs)
            s.set_lst("srv", SList.ite(rejected, server, placed))
            s[f"reached.{i}"] = bor(s[f"reached.{i}"], bnot(rejected))
            s[f"rec.{i}"] = bor(s[f"rec.{i}"], band(bnot(rejected), s[f"removed.{i}"]))
        self._answer(s, slot, rejected)
        return s

    def _server_reject(self, s: SymState, slot: tuple[int, OpKind, int]) -> SymState:
        s = s.copy()
        self._answer(s, slot, TRUE)
        return s

    def _client_apply(self, s: SymState, slot: tuple[int, OpKind, int]) -> SymState:
        s = s.copy()
        _, kind, i = slot
        key = self.slot_key(slot)
        s["consumed"] = mk_inc(s["consumed"])
        s[f"{key}.st"] = _status(DONE)
        applied = bnot(s[f"{key}.rej"])
        mirror = s.lst("mir")
        if kind is OpKind.CREATE:
            inserted = mirror.insert_after(i, s[f"{key}.after"], self.refs)
            s.set_lst("mir", SList.ite(band(applied, bnot(mirror.has[i])), inserted, mirror))
            s[f"acked.{i}"] = bor(s[f"acked.{i}"], applied)
        else:
            s.set_lst("mir", SList.ite(applied, mirror.remove(i), mirror))
            if self.three_way:
                s[f"gone.{i}"] = bor(s[f"gone.{i}"], applied)
        # resolve the ack: the mirror-diff session resolves an added or deleted
        # (kind, item) in every task waiting for it, a rejection only in the op's
        # own task; the three-way session always only in the op's own task
        for t in self.tasks if not self.three_way else (slot[0],):
            name = f"T{t}.pend.{_K[kind]}.{i}"
            resolves = s.pc_is(t, Pc.WAIT_ACKS)
            if t != slot[0]:
                resolves = band(resolves, applied)
            s[name] = band(s[name], bnot(resolves))
        # the op leaves the expected view (a task sends one op per (kind, item))
        s[f"{key}.out"] = FALSE
        return s

    def _client_apply_pool(self, s: SymState, p: int) -> SymState:
        s = s.copy()
        s["consumed"] = mk_inc(s["consumed"])
        s[f"pool.{p}.st"] = _status(CONSUMED)
        mirror = s.lst("mir")
        inserted = mirror.insert_after(p, s[f"pool.{p}.after"], self.refs)
        s.set_lst("mir", SList.ite(mirror.has[p], mirror, inserted))
        s[f"acked.{p}"] = TRUE
        return s

    def _model_creates(self, s: SymState, p: int) -> SymState:
        s = s.copy()
        server = s.lst("srv")
        s[f"pool.{p}.after"] = server.last(self.refs)
        s.set_lst("srv", server.append(p))
        s[f"reached.{p}"] = TRUE
        s[f"pool.{p}.st"] = _status(IN_FLIGHT)
        s[f"pool.{p}.seq"] = s["emitted"]
        s["emitted"] = mk_inc(s["emitted"])
        return s

    def _learn(self, s: SymState, p: int) -> SymState:
        s = s.copy()
        s.set_lst("loc", s.lst("loc").upsert([p]))
        s[f"pool.{p}.learned"] = TRUE
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

    def _builders(self) -> Iterator[tuple[Move, str, Builder]]:
        """Every move instance: its move, a finer name, and how to build its guard and
        effect from the template state `cur` (called at once, in order)."""
        partial = functools.partial
        for t in self.tasks:
            copy_site = self.config.site(t).request is RequestSource.CALLER_COPY
            if copy_site:
                yield Move(MoveKind.COPY, t), f"copy T{t}", partial(self._b_copy, t)
            yield Move(MoveKind.CALL, t), f"call T{t}", partial(self._b_call, t, copy_site)
            if copy_site:
                yield (
                    Move(MoveKind.CALL, t),
                    f"call T{t} (from its copy)",
                    partial(self._b_call_copied, t),
                )
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
            yield Move(MoveKind.RESUME, t), f"resume T{t}", partial(self._b_resume, t)
            yield Move(MoveKind.TIMEOUT, t), f"timeout T{t}", partial(self._b_timeout, t)
        for slot in self.slots:
            t, kind, i = slot
            label = f"T{t}'s {kind.value} {self.items[i]}"
            item = self.items[i]
            yield (
                Move(MoveKind.SERVER_APPLY, t, item),
                f"server applies {label}",
                partial(self._b_server_apply, slot),
            )
            yield (
                Move(MoveKind.SERVER_REJECT, t, item),
                f"server rejects {label}",
                partial(self._b_server_reject, slot),
            )
            yield (
                Move(MoveKind.CLIENT_APPLY, t, item),
                f"session receives the answer to {label}",
                partial(self._b_client_apply, slot),
            )
        for position, p in enumerate(self.pool):
            item = self.items[p]
            earlier = self.pool[position - 1] if position else None
            yield (
                Move(MoveKind.MODEL_CREATES, None, item),
                f"model creates {item}",
                partial(self._b_model_creates, p, earlier),
            )
            yield (
                Move(MoveKind.LEARN, None, item),
                f"local learns {item}",
                partial(self._b_learn, p),
            )
            yield (
                Move(MoveKind.CLIENT_APPLY, None, item),
                f"session receives the model's {item}",
                partial(self._b_client_apply_pool, p),
            )

    def _stale(self, task: int) -> z3.BoolRef:
        copy_site = self.config.site(task).request is RequestSource.CALLER_COPY
        return self.env["stale-copies"] if copy_site else FALSE

    def _b_copy(self, t: int) -> Built:
        s = self.cur
        copied = s.copy()
        self._set_pc(copied, t, Pc.COPIED)
        copied.set_lst(f"T{t}.copy", s.lst("loc"))
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
        guard = band(s.pc_is(t, Pc.WAIT_ACTIVITY), self._owner(s, "al", t))
        return guard, self._snapshot(s, t)

    def _b_wake_provider(self, t: int) -> Built:
        s = self.cur
        guard = band(s.pc_is(t, Pc.WAIT_PROVIDER), self._owner(s, "pl", t))
        return guard, self._diff_and_send(s, t)

    def _b_resume(self, t: int) -> Built:
        s = self.cur
        guard = band(s.pc_is(t, Pc.WAIT_ACKS), bnot(self._pending_any(s, t)))
        return guard, self._finish(s, t, Pc.DONE)

    def _b_timeout(self, t: int) -> Built:
        s = self.cur
        guard = band(self.env["timeouts"], s.pc_is(t, Pc.WAIT_ACKS), self._pending_any(s, t))
        return guard, self._finish(s, t, Pc.FAILED)

    def _b_server_apply(self, slot: Slot) -> Built:
        return self._head_op(self.cur, slot), self._server_apply(self.cur, slot)

    def _b_server_reject(self, slot: Slot) -> Built:
        guard = band(self.env["rejections"], self._head_op(self.cur, slot))
        return guard, self._server_reject(self.cur, slot)

    def _b_client_apply(self, slot: Slot) -> Built:
        s = self.cur
        key = self.slot_key(slot)
        guard = band(
            mk_eq(s[f"{key}.st"], _status(ANSWERED)), mk_eq(s[f"{key}.eseq"], s["consumed"])
        )
        return guard, self._client_apply(s, slot)

    def _b_model_creates(self, p: int, earlier: int | None) -> Built:
        s = self.cur
        previous = (
            TRUE if earlier is None else bnot(mk_eq(s[f"pool.{earlier}.st"], _status(NOT_CREATED)))
        )
        guard = band(
            self.env["server-items"], mk_eq(s[f"pool.{p}.st"], _status(NOT_CREATED)), previous
        )
        return guard, self._model_creates(s, p)

    def _b_learn(self, p: int) -> Built:
        s = self.cur
        guard = band(
            self.env["server-items"],
            bnot(mk_eq(s[f"pool.{p}.st"], _status(NOT_CREATED))),
            s[f"acked.{p}"],
            bnot(s[f"pool.{p}.learned"]),
        )
        return guard, self._learn(s, p)

    def _b_client_apply_pool(self, p: int) -> Built:
        s = self.cur
        guard = band(
            mk_eq(s[f"pool.{p}.st"], _status(IN_FLIGHT)), mk_eq(s[f"pool.{p}.seq"], s["consumed"])
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
        pairs = [(self.cur[name], cur[name]) for name in self.schema]
        pairs += [(self.nxt[name], nxt[name]) for name in self.schema]
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
        for name in self.schema:
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
            key = self.slot_key(slot)
            status = num(s[f"{key}.st"])
            after = ref(s[f"{key}.after"]) if kind is OpKind.CREATE else None
            text = f"T{t} {kind.value} {self.items[i]}" + (
                f" after {after or 'the head'}" if kind is OpKind.CREATE else ""
            )
            if status == SENT:
                earlier = sum(
                    1
                    for other in self.slots
                    if other[0] == t
                    and other[2] != i
                    and num(s[f"{self.slot_key(other)}.st"]) == SENT
                    and true(self._batch_before(s, t, other[2], i))
                )
                to_server.append(((num(s[f"T{t}.dseq"]), earlier), text))
            elif status == ANSWERED:
                rejected = true(s[f"{key}.rej"])
                outcome = (
                    "rejected" if rejected else ("added" if kind is OpKind.CREATE else "deleted")
                )
                to_client.append((num(s[f"{key}.eseq"]), f"T{t} {self.items[i]} {outcome}"))
        for p in self.pool:
            if num(s[f"pool.{p}.st"]) == IN_FLIGHT:
                to_client.append((num(s[f"pool.{p}.seq"]), f"model {self.items[p]} added"))
        tasks = []
        for t in self.tasks:
            code = num(s.pc(t))
            pc = next((pc.value for pc, value in PC_CODES.items() if value == code), f"?{code}")
            pending = [
                f"{kind.value} {self.items[i]}"
                for kind in KINDS
                for i in range(self.n)
                if true(s[f"T{t}.pend.{_K[kind]}.{i}"])
            ]
            task: dict[str, Any] = {"pc": pc}
            if pc in (Pc.WAIT_ACTIVITY.value, Pc.WAIT_PROVIDER.value):
                if true(s[f"T{t}.bound"]):
                    task["request"] = "the live local context"
                else:
                    task["request"] = lst(f"T{t}.req")
            if pending:
                task["pending"] = pending
            tasks.append(task)

        def lock(name: str) -> dict[str, Any]:
            head, tail = num(s[f"{name}.head"]), num(s[f"{name}.tail"])
            modulo = 2**self.lock_width
            queue = sorted(
                ((num(s[f"{name}.tkt.{t}"]) - head) % modulo, t)
                for t in self.tasks
                if true(s[f"{name}.q.{t}"])
            )
            del tail
            order = [t for _, t in queue]
            return {"owner": order[0] if order else None, "waiters": order[1:]}

        return {
            "server": lst("srv"),
            "mirror": lst("mir"),
            "local": lst("loc"),
            "to_server": [text for _, text in sorted(to_server)],
            "to_client": [text for _, text in sorted(to_client)],
            "activity_lock": lock("al"),
            "provider_lock": lock("pl"),
            "tasks": tasks,
            "acked": [self.items[i] for i in range(self.n) if true(s[f"acked.{i}"])],
            "guards": [name for name in GUARDS if true(s[name])],
        }

    # -- the abstraction function (model state to encoding values) ------------------

    @functools.cached_property
    def _initial_values(self) -> dict[str, bool | int]:
        values: dict[str, bool | int] = {}
        for name, value in self.initial().vals.items():
            values[name] = value is TRUE if value is TRUE or value is FALSE else value.as_long()
        return values

    def _list_values(self, values: dict[str, bool | int], name: str, order: Sequence[str]) -> None:
        position = {self.items.index(item): pos for pos, item in enumerate(order)}
        for i in range(self.n):
            values[f"{name}.has.{i}"] = i in position
        for i, j in self.pairs:
            values[f"{name}.prec.{i}.{j}"] = position.get(i, self.n + i) < position.get(
                j, self.n + j
            )

    def concrete(self, state: State) -> dict[str, bool | int]:
        """Encoding values for a model state (Python Booleans and integers): the
        abstraction function.

        Used by the tests that walk every reachable state of the model. Values the
        model no longer has (positions of answered ops, absolute counters) are
        chosen; the encoding must not depend on them.
        """
        index = self.items.index
        ref = self.refs.index
        none = self.refs.none
        v = dict(self._initial_values)
        self._list_values(v, "srv", state.server)
        self._list_values(v, "mir", state.mirror)
        self._list_values(v, "loc", state.local)
        for t, task in enumerate(state.tasks):
            v[f"T{t}.pc"] = PC_CODES[task.pc]
            v[f"T{t}.bound"] = task.bound_to_local
            if task.request is not None:
                self._list_values(v, f"T{t}.req", task.request)
            if task.copy is not None:
                self._list_values(v, f"T{t}.copy", task.copy)
            drops = self.config.call(t).drops
            for i, item in enumerate(self.items):
                v[f"T{t}.base.{i}"] = item in task.base
                for kind in KINDS:
                    v[f"T{t}.pend.{_K[kind]}.{i}"] = (kind, item) in task.pending
                v[f"udel.T{t}.{i}"] = (t, item, True) in state.deletes_sent and item not in drops
            if task.pc in (Pc.WAIT_ACKS, Pc.DONE, Pc.FAILED):
                for kind in KINDS:
                    for i in range(self.n):
                        v[f"{self.slot_key((t, kind, i))}.st"] = DONE
        for name, lock in (("al", state.activity_lock), ("pl", state.provider_lock)):
            queue = ([] if lock.owner is None else [lock.owner]) + list(lock.waiters)
            v[f"{name}.head"] = 0
            v[f"{name}.tail"] = len(queue)
            for position, t in enumerate(queue):
                v[f"{name}.tkt.{t}"] = position
                v[f"{name}.q.{t}"] = True
        for op in state.to_server:
            key = self.slot_key((op.task, op.kind, index(op.item)))
            v[f"{key}.st"] = SENT
            if op.kind is OpKind.CREATE:
                after = ref(op.after)
                v[f"{key}.after"] = none if after is None else after
        for position, event in enumerate(state.to_client):
            i = index(event.item)
            if event.task is None:
                after = ref(event.after)
                v[f"pool.{i}.st"] = IN_FLIGHT
                v[f"pool.{i}.seq"] = position
                v[f"pool.{i}.after"] = none if after is None else after
                continue
            answered = {
                EventKind.ADDED: OpKind.CREATE,
                EventKind.DELETED: OpKind.DELETE,
            }.get(event.kind, event.op)
            assert answered is not None
            kind = answered
            key = self.slot_key((event.task, kind, i))
            v[f"{key}.st"] = ANSWERED
            v[f"{key}.eseq"] = position
            v[f"{key}.rej"] = event.kind is EventKind.REJECTED
            if kind is OpKind.CREATE and event.kind is EventKind.ADDED:
                after = ref(event.after)
                v[f"{key}.after"] = none if after is None else after
        v["consumed"] = 0
        v["emitted"] = len(state.to_client)
        for position, p in enumerate(self.pool):
            in_flight = any(ev.task is None and index(ev.item) == p for ev in state.to_client)
            if position < state.created and not in_flight:
                v[f"pool.{p}.st"] = CONSUMED
            v[f"pool.{p}.learned"] = self.items[p] in state.learned
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
            v[f"T{t}.dseq"] = number
            order = [index(op.item) for op in sent if op.task == t]
            for i, j in self.pairs:
                if i in order and j in order:
                    v[f"T{t}.bord.{i}.{j}"] = order.index(i) < order.index(j)
        v["abatch"] = len(applied)
        v["diffs"] = len(batches)
        for t in self.tasks:
            if t not in batches:
                v[f"T{t}.dseq"] = 2**self.lock_width - 1
        for op in state.outstanding:
            v[f"{self.slot_key((op.task, op.kind, index(op.item)))}.out"] = True
        recreated = {item for _, item in state.recreated}
        for i, item in enumerate(self.items):
            v[f"acked.{i}"] = item in state.acked
            v[f"reached.{i}"] = item in state.reached
            v[f"removed.{i}"] = item in state.removed
            v[f"gone.{i}"] = item in state.gone
            v[f"rec.{i}"] = item in recreated
            v[f"refused.{i}"] = item in state.refused
        return v

    def constant(self, name: str, value: bool | int) -> z3.ExprRef:
        """A z3 constant for a Python value of a state variable."""
        if isinstance(value, bool):
            return const_bool(value)
        sort = self.schema[name]
        return _bv_constant(value, sort.size())
