"""The explorer's states as first-order structures, and clauses evaluated on them.

`structure` maps one `model.State` of a config to the relations of `system.py`; it
is how the cross-check shows the first-order model does not under-approximate
`model/`: every reachable state, mapped, satisfies the proved invariant. `Sample`
evaluates many clauses on many structures at once (a bit per assignment), which
is how Houdini's candidates are first filtered on reachable states.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import combinations_with_replacement
from typing import TypeVar

from model import (
    Call,
    Config,
    Environment,
    EventKind,
    OpKind,
    Pc,
    RequestSource,
    Scenario,
    Site,
    State,
    initial_state,
    successors,
)
from proofs.engines.fol import ghosts
from proofs.engines.fol.system import Cell, relations
from proofs.engines.fol.vocab import VARIABLES, Atom, Clause, Literal, Structure, with_derived

_PC = {
    Pc.IDLE: "idle",
    Pc.COPIED: "copied",
    Pc.WAIT_ACTIVITY: "wact",
    Pc.WAIT_PROVIDER: "wprov",
    Pc.WAIT_ACKS: "wacks",
    Pc.DONE: "done",
    Pc.FAILED: "failed",
}
_EVENT = {EventKind.ADDED: "evc", EventKind.DELETED: "evd"}


def structure(state: State, config: Config, cell: Cell) -> Structure:
    """The relations of `cell` that hold in `state` (a state of `config`, whose calls are of
    the cell's sites)."""
    scenario = config.scenario
    tasks = tuple(range(len(scenario.calls)))
    rel: dict[str, set[tuple[object, ...]]] = {r.name: set() for r in relations(cell)}

    def put(name: str, *args: object) -> None:
        if name in rel:
            rel[name].add(args)

    never_played = {
        item
        for t in tasks
        if config.site(t).request is RequestSource.LOCAL_CONTEXT
        for item in scenario.calls[t].drops
    }
    for item in scenario.items():
        for name, holds in (
            ("S", item in state.server),
            ("M", item in state.mirror),
            ("L", item in state.local),
            ("acked", item in state.acked),
            ("np", item in never_played),
            ("pool", item in scenario.server_pool),
            ("created", item in scenario.server_pool[: state.created]),
            ("learned", item in state.learned),
            ("gone", item in state.gone),
        ):
            if holds:
                put(name, item)
    for event in state.to_client:
        if event.task is None:
            put("evm", event.item)
        elif event.kind is EventKind.REJECTED:
            put("erc" if event.op is OpKind.CREATE else "erd", event.task, event.item)
        else:
            put(_EVENT[event.kind], event.task, event.item)
    for op in state.to_server:
        put("tsc" if op.kind is OpKind.CREATE else "tsd", op.task, op.item)
    for op in state.outstanding:
        put("oc" if op.kind is OpKind.CREATE else "od", op.task, op.item)
    for t, task in enumerate(state.tasks):
        call = scenario.calls[t]
        put(_PC[task.pc], t)
        put("site:" + call.site, t)
        if task.bound_to_local:
            put("bound", t)
        for item in call.adds:
            put("adds", t, item)
        for item in call.drops:
            put("drops", t, item)
        for item in task.copy or ():
            put("copy", t, item)
        for item in task.request or ():
            put("req", t, item)
        for item in task.base:
            put("base", t, item)
        for kind, item in task.pending:
            put("pc" if kind is OpKind.CREATE else "pd", t, item)
    for name, lock in (("a", state.activity_lock), ("p", state.provider_lock)):
        if lock.owner is not None:
            put(name + "own", lock.owner)
        for n, t in enumerate(lock.waiters):
            put(name + "wait" if name == "p" else "await", t)
            if name == "a":
                for later in lock.waiters[n + 1 :]:
                    put("aq", t, later)
    for t, item, was_acked in state.deletes_sent:
        if was_acked:
            put("dack", t, item)
    for row in ghosts.rows(state, config, cell):
        put("owes", *row)
    order = batch_order(state)
    for a, first in enumerate(order):
        for second in order[a + 1 :]:
            put("before", first, second)
    table = {k: frozenset(v) for k, v in rel.items()}
    return Structure(tasks, scenario.items(), with_derived(table))


def batch_order(state: State) -> tuple[int, ...]:
    """The tasks in the order their batches were sent, as far as the state shows it: those
    not yet pushed, then those with nothing in flight, then the FIFOs' order."""
    flight: list[int] = []
    for task in [e.task for e in state.to_client] + [op.task for op in state.to_server]:
        if task is not None and task not in flight:
            flight.append(task)
    pushed = {Pc.WAIT_ACKS, Pc.DONE, Pc.FAILED}
    waiting = [t for t, task in enumerate(state.tasks) if task.pc not in pushed]
    drained = [t for t, task in enumerate(state.tasks) if task.pc in pushed and t not in flight]
    return (*waiting, *drained, *flight)


H = TypeVar("H")


def reachable(config: Config, limit: int = 200_000) -> Iterator[State]:
    """Every state the model reaches in `config` (breadth-first, deduplicated)."""
    for state, _ in reachable_with(config, lambda _: None, lambda _, __, history: history, limit):
        yield state


def reachable_with(
    config: Config,
    first: Callable[[State], H],
    step: Callable[[State, State, H], H],
    limit: int = 200_000,
    keep: Callable[[State, State], bool] | None = None,
) -> Iterator[tuple[State, H]]:
    """Every state the model reaches in `config`, breadth-first, each with a history
    value of the first run found to it: `first` of the start, then `step(state,
    successor, history)` along the run (a ghost the state itself does not keep). With
    `keep`, a step it refuses is cut (the successor may still be reached another way)."""
    start = initial_state(config)
    found: dict[State, H] = {start: first(start)}
    frontier = [start]
    while frontier:
        for state in frontier:
            yield state, found[state]
        nxt: list[State] = []
        for state in frontier:
            for _, successor in successors(state, config):
                if successor in found or (keep is not None and not keep(state, successor)):
                    continue
                found[successor] = step(state, successor, found[state])
                nxt.append(successor)
        if len(found) > limit:
            raise RuntimeError(f"more than {limit} states")
        frontier = nxt


def mixes(
    sites: tuple[Site, ...],
    size: int,
    environment: Environment,
    server_drops: bool = False,
    lean: bool = False,
) -> tuple[Scenario, ...]:
    """Every multiset of up to `size` calls of `sites`, each on fresh items, as scenarios
    that meet this engine's assumptions (cleanups drop the never-played item).

    `server_drops`: under `server-items`, a replacement also drops the model's item, so
    a sample of reachable states has deletes of it (inference needs them to find the
    server-items lemma). Off for `verify`'s mixes: a replacement whose intent drops an
    item it never saw is no run a caller makes (the catalog's replacements keep it), and
    with it three-way "fails" agreement at rest once the local context learns the item
    after the replacement.

    `lean`: a replacement drops the start item only (named `...:lean`, and only the mixes
    where that differs from the default). Dropping the previous call's item hides that call's item
    from the replacement's diff, so the default mixes never show a replacement diffing
    two items the local context and the mirror hold in different orders."""
    out: list[Scenario] = []
    for count in range(1, size + 1):
        for combo in combinations_with_replacement(sites, count):
            calls: list[Call] = []
            leaner = False  # a replacement here drops the previous call's item
            for n, site in enumerate(combo):
                if site.request is RequestSource.LOCAL_CONTEXT:
                    calls.append(Call(site.name, drops=("asst1",)))
                elif site.request is RequestSource.CALLER_COPY:
                    # it drops a start item and the previous call's item: a replacement
                    # may delete what another push still has in flight
                    adder = n > 0 and combo[n - 1].request is not RequestSource.LOCAL_CONTEXT
                    leaner = leaner or adder
                    adder = adder and not lean
                    drops: tuple[str, ...] = ("msg0", f"new{n - 1}") if adder else ("msg0",)
                    if server_drops and environment.server_items:
                        # and the model's item, once learned: a delete of a server item
                        drops += ("call1",)
                    calls.append(Call(site.name, adds=(f"new{n}",), drops=drops))
                else:
                    calls.append(Call(site.name, adds=(f"new{n}",)))
            cleanup = any(s.request is RequestSource.LOCAL_CONTEXT for s in combo)
            name = "+".join(s.name for s in combo)
            if lean:
                if not leaner:
                    continue  # the same calls as the default mix
                name += ":lean"
            out.append(
                Scenario(
                    name=f"mix:{name}",
                    summary="a mix of calls",
                    calls=tuple(calls),
                    server=("msg0", "asst1") if cleanup else ("msg0",),
                    local=("msg0",) if cleanup else None,
                    server_pool=("call1",) if environment.server_items else (),
                )
            )
    return tuple(out)


def config_of(cell: Cell, scenario: Scenario) -> Config:
    return Config(cell.variant, scenario, cell.environment, extra_sites=cell.sites)


class Sample:
    """Structures, and for each clause shape a bit per (structure, assignment)."""

    def __init__(self, structures: Iterable[Structure]) -> None:
        unique: dict[tuple[object, ...], Structure] = {}
        for s in structures:
            key = (s.tasks, s.items, tuple(sorted(s.relations.items())))
            unique.setdefault(key, s)
        self.structures = tuple(unique.values())
        self._rows: dict[tuple[str, ...], int] = {}
        self._masks: dict[tuple[tuple[str, ...], Literal], int] = {}
        self._atoms: dict[tuple[tuple[str, ...], Atom], int] = {}
        self._frame_rows: dict[tuple[str, ...], list[_Frame]] = {}

    def __len__(self) -> int:
        return len(self.structures)

    def _false_mask(self, variables: tuple[str, ...], literal: Literal) -> int:
        key = (variables, literal)
        if key not in self._masks:
            true = self._true_mask(variables, literal.atom)
            if literal.positive:
                true ^= self._all(variables)
            self._masks[key] = true
        return self._masks[key]

    def _true_mask(self, variables: tuple[str, ...], atom: Atom) -> int:
        """Where `atom` holds, a bit per (structure, assignment): shared by both signs."""
        key = (variables, atom)
        if key not in self._atoms:
            mask = 0
            offset = 0
            for s, frame in zip(self.structures, self._frames(variables), strict=True):
                mask |= _atom_rows(frame, s, atom) << offset
                offset += frame.size
            self._atoms[key] = mask
        return self._atoms[key]

    def _all(self, variables: tuple[str, ...]) -> int:
        if variables not in self._rows:
            total = sum(frame.size for frame in self._frames(variables))
            self._rows[variables] = (1 << total) - 1
        return self._rows[variables]

    def _frames(self, variables: tuple[str, ...]) -> list[_Frame]:
        if variables not in self._frame_rows:
            self._frame_rows[variables] = [_Frame(s, variables) for s in self.structures]
        return self._frame_rows[variables]

    def violated(self, clause: Clause) -> bool:
        """Whether some structure has an assignment falsifying the clause."""
        variables = tuple(sorted(clause.variables))
        mask = -1
        for literal in clause.literals:
            mask &= self._false_mask(variables, literal)
            if not mask:
                return False
        return mask != 0

    def filter(self, clauses: Iterable[Clause]) -> tuple[Clause, ...]:
        return tuple(c for c in clauses if not self.violated(c))


class _Frame:
    """One structure's assignments to some variables, in mixed radix: each variable's
    stride and its elements' digits, and the pattern of bits that fixing some variables
    leaves (every value of the others)."""

    def __init__(self, s: Structure, variables: tuple[str, ...]) -> None:
        pools = [s.universe(VARIABLES[v]) for v in variables]
        strides = [1] * len(variables)
        for k in range(len(variables) - 2, -1, -1):
            strides[k] = strides[k + 1] * len(pools[k + 1])
        self.size = strides[0] * len(pools[0]) if variables else 1
        self.digit = {
            v: ({value: n * strides[k] for n, value in enumerate(pools[k])})
            for k, v in enumerate(variables)
        }
        self.pools = dict(zip(variables, pools, strict=True))
        self.strides = dict(zip(variables, strides, strict=True))
        self._patterns: dict[frozenset[str], int] = {}

    def pattern(self, fixed: frozenset[str]) -> int:
        """Bits of every assignment whose `fixed` variables are at digit 0."""
        if fixed not in self._patterns:
            rows = [0]
            for v, pool in self.pools.items():
                if v not in fixed:
                    rows = [r + n * self.strides[v] for r in rows for n in range(len(pool))]
            self._patterns[fixed] = sum(1 << r for r in rows)
        return self._patterns[fixed]


def _atom_rows(frame: _Frame, s: Structure, atom: Atom) -> int:
    """The rows (assignments to the frame's variables) where `atom` holds, as bits."""
    if atom.name == "=":
        first = atom.args[0]
        tuples: Iterable[tuple[object, ...]] = ((x, x) for x in frame.pools[first])
    else:
        tuples = s.relations.get(atom.name, frozenset())
    pattern = frame.pattern(frozenset(atom.args))
    digit = frame.digit
    mask = 0
    for values in tuples:
        row = 0
        bound: dict[str, object] = {}
        ok = True
        for arg, value in zip(atom.args, values, strict=True):
            if arg in bound:
                ok = ok and bound[arg] == value
                continue
            bound[arg] = value
            row += digit[arg][value]
        if ok:
            mask |= pattern << row
    return mask


def sample_configs(cell: Cell, size: int = 2) -> tuple[Config, ...]:
    return tuple(
        config_of(cell, s) for s in mixes(cell.sites, size, cell.environment, server_drops=True)
    )
