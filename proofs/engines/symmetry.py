"""Symmetry reduction: calls of one site with the same shape of data are
interchangeable up to renaming their items, so the explorer keeps one state of
each such renaming.

Two calls are interchangeable when the model cannot tell them apart but by
name: the same site record, the same lock and local-update timing, the same
number of added items, the same drops, and added items no other part of the
scenario mentions (server, local context, server pool, another call). Swapping
two such tasks, together with their added items, then maps every run to a run
and keeps both invariants' verdicts (an automorphism of the transition system;
`docs/model.md` gives the argument). `represent` maps a state to a member of its
orbit, ordering each group's tasks by where they first appear in the state's
ordered parts; that choice is sound whatever it is, and the closer it comes to
one representative per orbit, the fewer states are kept.
"""

from __future__ import annotations

from collections.abc import Sequence

from model.shapes import ReconnectResends
from proofs.engines.compact import (
    ACKED,
    ACT,
    CONNECTED,
    GONE,
    IDLE_TASK,
    LOCAL,
    MIRROR,
    NONE,
    OUTSTANDING,
    PROV,
    REACHED,
    REBUILT,
    RECORD,
    RECREATED,
    REFUSED,
    REMOVED,
    SENT,
    SERVER,
    TASKS,
    TO_CLIENT,
    TO_SERVER,
    CMove,
    CompactModel,
    CState,
)

#: A renaming: task map and item map (each a list: old index -> new index).
Perm = tuple[tuple[int, ...], tuple[int, ...]]


def groups(model: CompactModel) -> tuple[tuple[int, ...], ...]:
    """The groups of interchangeable tasks (two or more each), in task order."""
    config = model.config
    scenario = config.scenario
    if not renamable(model):
        return ()
    mentioned: dict[int, int] = {}
    for item in (*scenario.server, *scenario.initial_local, *scenario.server_pool):
        mentioned[model.ids[item]] = 2
    for call in scenario.calls:
        for item in call.drops:
            mentioned[model.ids[item]] = 2
        for item in call.adds:
            mentioned[model.ids[item]] = mentioned.get(model.ids[item], 0) + 1
    by_key: dict[object, list[int]] = {}
    for task in range(model.n_tasks):
        adds = model.adds[task]
        if any(mentioned[item] != 1 for item in adds):
            continue
        key = (
            config.site(task),
            model.locks[task],
            model.update[task],
            len(adds),
            model.drops[task],
            # a rebuild that leaves function items out tells items apart by kind
            tuple((model.unrebuilt >> item) & 1 for item in adds),
        )
        by_key.setdefault(key, []).append(task)
    return tuple(tuple(members) for members in by_key.values() if len(members) > 1)


def renamable(model: CompactModel) -> bool:
    """Whether renaming tasks maps runs to runs at all. One reconnect reads tasks by
    index: one that sends again every waiting push's ops sends them in task order
    (`ReconnectResends.AWAITED`). A rebuild's answers name no task (`model.moves`),
    so an emptied rebuild keeps symmetry."""
    if not model.reconnects:
        return True
    return model.resends is not ReconnectResends.AWAITED


class Symmetry:
    """Representatives of states under the renamings of interchangeable tasks."""

    def __init__(self, model: CompactModel) -> None:
        self.model = model
        self.groups = groups(model)
        n_items = len(model.names)
        owner = [NONE] * n_items
        self.group_of = [NONE] * model.n_tasks
        for number, members in enumerate(self.groups):
            for task in members:
                self.group_of[task] = number
                for item in model.adds[task]:
                    owner[item] = task
        self.owner = tuple(owner)
        self.n_items = n_items

    @property
    def active(self) -> bool:
        return bool(self.groups)

    def order(self, s: CState) -> list[list[int]]:
        """Each group's tasks in order of first appearance in the state's ordered parts,
        then (those that appear in none) by their own data."""
        owner = self.owner
        group_of = self.group_of
        seen: list[list[int]] = [[] for _ in self.groups]
        marked = bytearray(self.model.n_tasks)
        # the hot path of a reduced search: the scans are written out, not a helper
        for part in (s[LOCAL], s[SERVER], s[MIRROR]):
            for item in part:
                task = owner[item]
                if task != NONE and not marked[task]:
                    marked[task] = 1
                    seen[group_of[task]].append(task)
        for entries, at in ((s[TO_SERVER], 3), (s[TO_CLIENT], 4), (s[OUTSTANDING], 3)):
            for entry in entries:
                for task in (entry[at], owner[entry[1]]):
                    # (NONE and the rebuild's sender are negative)
                    if task >= 0 and not marked[task] and group_of[task] != NONE:
                        marked[task] = 1
                        seen[group_of[task]].append(task)
        for owner_task, waiters in (s[ACT], s[PROV]):
            for task in (owner_task, *waiters):
                if task >= 0 and not marked[task] and group_of[task] != NONE:
                    marked[task] = 1
                    seen[group_of[task]].append(task)
        tasks = s[TASKS]
        for number, members in enumerate(self.groups):
            rest = [task for task in members if not marked[task]]
            if not rest:
                continue
            # idle tasks are all alike: their items are nowhere yet
            if len(rest) > 1 and any(tasks[task] != IDLE_TASK for task in rest):
                rest.sort(key=lambda task: self._own_key(s, tasks[task], task))
            seen[number].extend(rest)
        return seen

    def _own_key(self, s: CState, task: tuple[object, ...], index: int) -> tuple[object, ...]:
        pc, copy, request, bound, pending = task
        bits = tuple(
            tuple((s[field] >> item) & 1 for item in self.model.adds[index])
            for field in (ACKED, REACHED, REMOVED, REFUSED, RECREATED, GONE, SENT)
        )
        return (pc, bound, copy or (), request is None, request or (), pending, bits)

    def represent(self, s: CState) -> tuple[CState, Perm | None]:
        """A member of `s`'s orbit, and the renaming that gives it (None: `s` itself)."""
        order = self.order(s)
        identity = True
        for members, ordered in zip(self.groups, order, strict=True):
            if list(members) != ordered:
                identity = False
                break
        if identity:
            return s, None
        tmap = list(range(self.model.n_tasks))
        imap = list(range(self.n_items))
        adds = self.model.adds
        for members, ordered in zip(self.groups, order, strict=True):
            for slot, task in zip(members, ordered, strict=True):
                tmap[task] = slot
                for mine, theirs in zip(adds[task], adds[slot], strict=True):
                    imap[mine] = theirs
        perm = (tuple(tmap), tuple(imap))
        return rename(s, perm), perm


def inverse(perm: Perm) -> Perm:
    tmap, imap = perm
    tinv = [0] * len(tmap)
    iinv = [0] * len(imap)
    for old, new in enumerate(tmap):
        tinv[new] = old
    for old, new in enumerate(imap):
        iinv[new] = old
    return (tuple(tinv), tuple(iinv))


def compose(outer: Perm, inner: Perm) -> Perm:
    """`outer` after `inner`."""
    return (
        tuple(outer[0][t] for t in inner[0]),
        tuple(outer[1][i] for i in inner[1]),
    )


def identity(model: CompactModel) -> Perm:
    return (tuple(range(model.n_tasks)), tuple(range(len(model.names))))


def rename_move(move: CMove, perm: Perm) -> CMove:
    kind, task, item = move
    return (
        kind,
        None if task is None else perm[0][task],
        None if item is None else perm[1][item],
    )


def _mask(mask: int, imap: Sequence[int]) -> int:
    out = 0
    item = 0
    while mask:
        if mask & 1:
            out |= 1 << imap[item]
        mask >>= 1
        item += 1
    return out


def _keys(mask: int, imap: Sequence[int]) -> int:
    out = 0
    bit = 0
    while mask:
        if mask & 1:
            out |= 1 << (2 * imap[bit >> 1] + (bit & 1))
        mask >>= 1
        bit += 1
    return out


def rename(s: CState, perm: Perm) -> CState:
    """The state with tasks and items renamed by `perm`."""
    tmap, imap = perm

    def seq(items: tuple[int, ...] | None) -> tuple[int, ...] | None:
        return None if items is None else tuple(imap[i] for i in items)

    def item(i: int) -> int:
        return NONE if i == NONE else imap[i]

    def task(t: int) -> int:
        # NONE and the rebuild's sender are no task's
        return t if t < 0 else tmap[t]

    def op(o: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
        return (o[0], imap[o[1]], item(o[2]), task(o[3]))

    def lock(lk: tuple[int, tuple[int, ...]]) -> tuple[int, tuple[int, ...]]:
        return (task(lk[0]), tuple(task(t) for t in lk[1]))

    old_tasks = s[TASKS]
    tasks: list[tuple[object, ...]] = [()] * len(old_tasks)
    for index, (pc, copy, request, bound, pending) in enumerate(old_tasks):
        tasks[tmap[index]] = (pc, seq(copy), seq(request), bound, _keys(pending, imap))
    return (
        seq(s[SERVER]),
        seq(s[MIRROR]),
        seq(s[LOCAL]),
        tuple(op(o) for o in s[TO_SERVER]),
        tuple((e[0], imap[e[1]], item(e[2]), e[3], task(e[4])) for e in s[TO_CLIENT]),
        lock(s[ACT]),
        lock(s[PROV]),
        tuple(tasks),
        (s[8][0], tuple(imap[i] for i in s[8][1])),
        _mask(s[9], imap),
        tuple(op(o) for o in s[OUTSTANDING]),
        _mask(s[GONE], imap),
        _mask(s[ACKED], imap),
        _mask(s[REACHED], imap),
        _mask(s[REMOVED], imap),
        s[15],
        _mask(s[REFUSED], imap),
        _mask(s[RECREATED], imap),
        _mask(s[SENT], imap),
        s[CONNECTED],
        _mask(s[REBUILT], imap),
        # the record stays in task order (one batch a task)
        tuple(sorted((op(o) for o in s[RECORD]), key=lambda o: o[3])),
    )
