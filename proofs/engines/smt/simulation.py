"""Step-by-step agreement of the z3 encoding with the model, on concrete states.

For a model state s, the abstraction function `Encoding.concrete` gives the
encoding's variables their values; then every move instance's guard and effect
are evaluated on those values. The encoding agrees with the model at s when

- the instances enabled at s name exactly the moves `model.successors` yields
  (one instance per move), and
- each enabled instance's effect, read back through `view`, equals the view of the
  model's successor.

`view` keeps what the model means and drops what the encoding leaves undefined
(the order of absent items, positions of ops already answered, absolute counter
values), so the comparison is exact on everything a later step can read. Walking
every reachable state of a config checks the encoding's transition relation on
the whole reachable part of the state space, including that the order-aware
LCS diff of the model equals the membership diff of the encoding there (an
exactness guard set by a step shows up in the view).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

import attrs
import z3
from z3 import z3core

from model import Config, OpKind, Pc, RequestSource, State, successors
from model import initial_state as model_initial
from proofs.engines.smt.encoding import (
    ANSWERED,
    GHOSTS,
    GUARDS,
    IN_FLIGHT,
    NOT_CREATED,
    PC_CODES,
    SENT,
    Encoding,
)
from proofs.engines.smt.schema import (
    ACTIVITY,
    KINDS,
    LOCAL,
    MIRROR,
    PROVIDER,
    SERVER,
    Column,
    Values,
    copy_list,
    request_list,
)

_PC_BY_CODE = {code: pc for pc, code in PC_CODES.items()}


class Evaluator:
    """Evaluates the template's guards and effects on concrete values.

    Terms are packed as arguments of one uninterpreted function, substituted
    and simplified by z3's C API in one call, and read back from the printed
    constant: the Python API's per-call checks would dominate otherwise.
    """

    def __init__(self, enc: Encoding) -> None:
        self.enc = enc
        self.names = list(enc.schema.sorts)
        self.sorts = [enc.schema.sorts[n] for n in self.names]
        self._from = _ast_array([enc.cur[name] for name in self.names])
        guards = [inst.guard for inst in enc.instances]
        self._guards = z3.Function("guards", *[z3.BoolSort()] * len(guards), z3.BoolSort())(*guards)
        self._pack = z3.Function("state", *self.sorts, z3.BoolSort())
        self._effects: dict[int, Any] = {}

    def _eval(self, term: Any, values: dict[str, bool | int]) -> list[bool | int]:
        ctx = _CTX
        to = _ast_array([self.enc.constant(name, values[name]) for name in self.names])
        substituted = z3.ExprRef(
            z3core.Z3_substitute(ctx.ref(), term.as_ast(), len(self.names), self._from, to), ctx
        )
        simple = z3.ExprRef(z3core.Z3_simplify(ctx.ref(), substituted.as_ast()), ctx)
        return _parse(z3core.Z3_ast_to_string(ctx.ref(), simple.as_ast()))

    def enabled(self, values: dict[str, bool | int]) -> list[int]:
        flags = self._eval(self._guards, values)
        return [k for k, flag in enumerate(flags) if flag is True]

    def effect(self, index: int, values: dict[str, bool | int]) -> dict[str, bool | int]:
        if index not in self._effects:
            effect = self.enc.instances[index].effect
            self._effects[index] = self._pack(*[effect[name] for name in self.names])
        result = self._eval(self._effects[index], values)
        return dict(zip(self.names, result, strict=True))


_CTX = z3.main_ctx()


def _ast_array(exprs: list[Any]) -> Any:
    array = (z3.Ast * len(exprs))()
    for position, expr in enumerate(exprs):
        array[position] = expr.as_ast()
    return array


def _parse(text: str) -> list[bool | int]:
    """The arguments of a printed application of constants: true, false, #b.., #x.."""
    tokens = text.replace("(", " ").replace(")", " ").split()[1:]
    values: list[bool | int] = []
    for token in tokens:
        if token == "true":
            values.append(True)
        elif token == "false":
            values.append(False)
        elif token.startswith("#b"):
            values.append(int(token[2:], 2))
        elif token.startswith("#x"):
            values.append(int(token[2:], 16))
        else:
            raise ValueError(f"not a constant: {token!r} in {text[:200]}")
    return values


def view(enc: Encoding, values: dict[str, bool | int]) -> dict[str, Any]:
    """What a state of the encoding means, in the model's terms (`schema.Family.skip`
    names what it leaves out, and why)."""
    items = enc.items
    v: Values[bool | int] = Values(values)

    def true(value: bool | int) -> bool:
        assert isinstance(value, bool), value
        return value

    def num(value: bool | int) -> int:
        assert isinstance(value, int) and not isinstance(value, bool), value
        return value

    def before(pair: Column[bool | int], head: Any, i: int, j: int) -> bool:
        return true(pair[(*head, (i, j))]) if i < j else not true(pair[(*head, (j, i))])

    def lst(name: str) -> list[str]:
        present = [i for i in range(enc.n) if true(v.has[name, i])]
        rank = {
            i: sum(1 for j in present if j != i and before(v.prec, (name,), j, i)) for i in present
        }
        return [items[i] for i in sorted(present, key=rank.__getitem__)]

    def ref(value: bool | int) -> str | None:
        index = num(value)
        return items[index] if index < enc.n else None

    def batch_key(slot: tuple[int, OpKind, int]) -> tuple[int, int]:
        t, _, i = slot
        earlier = 0
        for other in enc.slots:
            if other[0] != t or other[2] == i:
                continue
            busy = num(v.status[other]) == SENT or true(v.outstanding[other])
            if busy and before(v.bord, (t,), other[2], i):
                earlier += 1
        return num(v.dseq[t]), earlier

    tasks = []
    for t in enc.tasks:
        pc = _PC_BY_CODE[num(v.pc[t])]
        bound = true(v.bound[t])
        site = enc.config.site(t)
        entry: dict[str, Any] = {
            "pc": pc.value,
            "bound": bound,
            "pending": sorted(
                f"{kind.value} {items[i]}"
                for kind in KINDS
                for i in range(enc.n)
                if true(v.pend[t, kind, i])
            ),
        }
        waiting = pc in (Pc.WAIT_ACTIVITY, Pc.WAIT_PROVIDER)
        snapshot_later = pc is Pc.WAIT_ACTIVITY and site.request is RequestSource.MIRROR_SNAPSHOT
        if waiting and not bound and not snapshot_later:
            entry["request"] = lst(request_list(t))
        if pc is Pc.COPIED:
            entry["copy"] = lst(copy_list(t))
        tasks.append(entry)

    def lock(name: str) -> dict[str, Any]:
        head, tail = num(v.head[name]), num(v.tail[name])
        modulo = 2**enc.lock_width
        queue = sorted(
            ((num(v.ticket[name, t]) - head) % modulo, t)
            for t in enc.tasks
            if true(v.queued[name, t])
        )
        assert len(queue) == (tail - head) % modulo, f"{name}: queue and counters disagree"
        order = [t for _, t in queue]
        return {"owner": order[0] if order else None, "waiters": order[1:]}

    to_server = []
    to_client: list[tuple[int, tuple[Any, ...]]] = []
    outstanding = []
    consumed = num(v.consumed[()])
    for slot in enc.slots:
        t, kind, i = slot
        status = num(v.status[slot])
        after = ref(v.anchor[slot]) if kind is OpKind.CREATE else None
        if status == SENT:
            to_server.append((batch_key(slot), (t, kind.value, items[i], after)))
        elif status == ANSWERED:
            if true(v.rejected[slot]):
                event: tuple[Any, ...] = (t, "rejected", kind.value, items[i], None)
            elif kind is OpKind.CREATE:
                event = (t, "added", None, items[i], after)
            else:
                event = (t, "deleted", None, items[i], None)
            to_client.append((num(v.eseq[slot]) - consumed, event))
        if true(v.outstanding[slot]):
            outstanding.append((batch_key(slot), (t, kind.value, items[i])))
    created = 0
    for p in enc.pool:
        status = num(v.pool_status[p])
        if status != NOT_CREATED:
            created += 1
        if status == IN_FLIGHT:
            event = (None, "added", None, items[p], ref(v.pool_anchor[p]))
            to_client.append((num(v.pool_seq[p]) - consumed, event))
    return {
        "server": lst(SERVER),
        "mirror": lst(MIRROR),
        "local": lst(LOCAL),
        "tasks": tasks,
        "activity_lock": lock(ACTIVITY),
        "provider_lock": lock(PROVIDER),
        "to_server": [op for _, op in sorted(to_server)],
        "to_client": [event for _, event in sorted(to_client, key=lambda e: e[0])],
        "event_positions": sorted(position for position, _ in to_client),
        "outstanding": [op for _, op in sorted(outstanding)],
        "created": created,
        "learned": sorted(items[p] for p in enc.pool if true(v.learned[p])),
        **{
            ghost: sorted(items[i] for i in range(enc.n) if true(v.ghost[ghost, i]))
            for ghost in GHOSTS
        },
        "udel": sorted(
            (t, items[i])
            for t in enc.tasks
            for i in range(enc.n)
            if items[i] not in enc.config.call(t).drops and true(v.udel[t, i])
        ),
        "guards": [name for name in GUARDS if true(v.guard[name])],
        # what a later step reads that the lists above do not show
        "base": sorted(
            (t, items[i]) for t in enc.tasks for i in range(enc.n) if true(v.base[t, i])
        ),
        "batches_in_flight": (num(v.diffs[()]) - num(v.abatch[()])) % 2**enc.lock_width,
        "events_in_flight": (num(v.emitted[()]) - consumed) % 2**enc.seq_width,
    }


def encoded_model(config: Config) -> Config:
    """The model the encoding is checked against: `config` with every item created at
    its call and appended to the local context (`encoding.ORDER_UNENCODED`)."""
    return attrs.evolve(config, appends_locally=True)


def reachable(config: Config, limit: int | None = None) -> Iterator[State]:
    """Every reachable state of the encoding's model (`encoded_model`), breadth-first."""
    config = encoded_model(config)
    start = model_initial(config)
    seen = {start}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        yield state
        for _, successor in successors(state, config):
            if successor not in seen:
                seen.add(successor)
                queue.append(successor)
                if limit is not None and len(seen) > limit:
                    raise RuntimeError(f"more than {limit} states")


def disagreements(
    config: Config, enc: Encoding | None = None, evaluator: Evaluator | None = None
) -> Iterator[str]:
    """Every way the encoding and the model differ on the reachable states."""
    enc = enc if enc is not None else Encoding(config, specialize=True, symmetry=False)
    evaluator = evaluator if evaluator is not None else Evaluator(enc)
    model = encoded_model(config)
    for state in reachable(config):
        values = enc.concrete(state)
        enabled = evaluator.enabled(values)
        model_moves = {move: succ for move, succ in successors(state, model)}
        names = [enc.instances[k].move for k in enabled]
        for move in model_moves:
            if names.count(move) != 1:
                yield (
                    f"{move.label()}: the model can make it, "
                    f"{names.count(move)} enabled instances at {_brief(state)}"
                )
        for k in enabled:
            inst = enc.instances[k]
            if inst.move not in model_moves:
                yield f"{inst.name}: enabled in z3, not a move of the model at {_brief(state)}"
                continue
            ours = view(enc, evaluator.effect(k, values))
            theirs = view(enc, enc.concrete(model_moves[inst.move]))
            if ours != theirs:
                diff = {key: (ours[key], theirs[key]) for key in ours if ours[key] != theirs[key]}
                yield f"{inst.name} at {_brief(state)}: z3 vs model differ in {diff}"


def _brief(state: State) -> str:
    tasks = ",".join(task.pc.value for task in state.tasks)
    return (
        f"[server {list(state.server)} mirror {list(state.mirror)} local {list(state.local)} "
        f"tasks {tasks} ops {len(state.to_server)} events {len(state.to_client)}]"
    )
