"""The actions of a cell, each the first-order twin of a function of `model/moves.py`.

Task actions are generated per site record of the cell (the site's request source
and local update, the variant's lock and override for it); environment actions
per option that is on. Where the model branches on the state (a lock is free, a
diff sends nothing), the action branches with `merge`.
"""

from __future__ import annotations

from typing import Any

import z3

from model import LocalUpdate, RequestSource, Site
from proofs.engines.fol import agreement_z3, ghosts, order_z3
from proofs.engines.fol.system import PCS, Action, Cell, Expr, Fn, Run, Sorts, merge
from proofs.engines.fol.vocab import ITEM, TASK

T = (("t", TASK),)
T_RELEASE = (("t", TASK), ("wa", TASK), ("wp", TASK))


def actions(cell: Cell, sorts: Sorts) -> tuple[Action, ...]:
    """Every action of the cell, task actions per site first, then the environment's."""
    out: list[Action] = []
    for site in cell.sites:
        out += _site_actions(cell, sorts, site)
    out += _environment_actions(cell, sorts)
    return tuple(out)


# -- helpers --------------------------------------------------------------------


def _set_pc(run: Run, t: Any, new: str) -> None:
    for name in PCS:
        old = run[name]
        run.set(name, _pc_fn(old, t, name == new))


def _pc_fn(old: Fn, t: Any, value: bool) -> Fn:
    return lambda x: z3.If(x == t, z3.BoolVal(value, t.ctx), old(x))


def _set_row(run: Run, name: str, t: Any, row: Fn) -> None:
    """Relation `name` at (t, .) becomes `row`; other tasks keep theirs."""
    old = run[name]
    run.set(name, lambda x, i: z3.If(x == t, row(i), old(x, i)))


def _add_row(run: Run, name: str, t: Any, row: Fn) -> None:
    old = run[name]
    run.set(name, lambda x, i: z3.Or(old(x, i), z3.And(x == t, row(i))))


def _set_task(run: Run, name: str, t: Any, value: bool) -> None:
    old = run[name]
    run.set(name, lambda x: z3.If(x == t, z3.BoolVal(value, t.ctx), old(x)))


def _set_item(run: Run, name: str, i: Any, value: bool) -> None:
    old = run[name]
    run.set(name, lambda y: z3.If(y == i, z3.BoolVal(value, i.ctx), old(y)))


def _set_slot(run: Run, name: str, t: Any, i: Any, value: bool) -> None:
    old = run[name]
    run.set(name, lambda x, y: z3.If(z3.And(x == t, y == i), z3.BoolVal(value, t.ctx), old(x, y)))


def _free(sorts: Sorts, run: Run, owner: str, waiter: str) -> Expr:
    own, wait = run[owner], run[waiter]
    return z3.And(
        sorts.forall(TASK, lambda x: z3.Not(own(x))), sorts.forall(TASK, lambda x: z3.Not(wait(x)))
    )


def _release(sorts: Sorts, run: Run, t: Any, owner: str, waiter: str, w: Any) -> None:
    """Release a lock `t` owns to waiter `w`: for the activity lock the first waiter (its
    FIFO `aq`, as asyncio's lock), for the provider lock any waiter (over-approximates
    the FIFO)."""
    own, wait = run[owner], run[waiter]
    owned = own(t)
    has_waiter = sorts.exists(TASK, lambda x: wait(x))
    chosen = wait(w)
    if waiter == "await":
        ahead = run["aq"]
        chosen = z3.And(chosen, sorts.forall(TASK, lambda x: z3.Not(ahead(x, w))))
        run.set("aq", lambda x, y: z3.And(ahead(x, y), z3.Or(z3.Not(owned), x != w)))
    run.require(z3.Or(z3.Not(owned), z3.Not(has_waiter), chosen))
    run.set(owner, lambda x: z3.If(owned, z3.And(has_waiter, x == w), own(x)))
    run.set(waiter, lambda x: z3.If(owned, z3.And(wait(x), x != w), wait(x)))


def _join(run: Run, t: Any) -> None:
    """`t` waits for the activity lock, behind every task already waiting."""
    wait, ahead = run["await"], run["aq"]
    run.set("aq", lambda x, y: z3.Or(ahead(x, y), z3.And(y == t, wait(x))))
    _set_task(run, "await", t, True)


def _site(cell: Cell, run: Run, site: Site) -> Fn:
    return run[cell.site_rel(site)]


# -- task actions -----------------------------------------------------------------


def _site_actions(cell: Cell, sorts: Sorts, site: Site) -> list[Action]:
    out: list[Action] = []
    stale = cell.environment.stale_copies and site.request is RequestSource.CALLER_COPY
    if cell.ordered and order_z3.creation(cell, site) == "make":
        out.append(order_z3.make_action(cell, sorts, site))
    if stale:
        out.append(Action(f"copy {site.name}", T, lambda r, p: _copy(cell, site, r, p)))
    out.append(
        Action(f"call {site.name}", T_RELEASE, lambda r, p: _call(cell, sorts, site, r, p, stale))
    )
    if not cell.three_way:
        if cell.variant.locks(site):
            out.append(
                Action(
                    f"wake {site.name} (activity lock)",
                    T_RELEASE,
                    lambda r, p: _wake_activity(cell, sorts, site, r, p),
                )
            )
        out.append(
            Action(
                f"wake {site.name} (provider lock)",
                T_RELEASE,
                lambda r, p: _wake_provider(cell, sorts, site, r, p),
            )
        )
    out.append(
        Action(f"resume {site.name}", T_RELEASE, lambda r, p: _resume(cell, sorts, site, r, p))
    )
    if cell.environment.timeouts:
        out.append(
            Action(
                f"timeout {site.name}", T_RELEASE, lambda r, p: _timeout(cell, sorts, site, r, p)
            )
        )
    return out


def _copy(cell: Cell, site: Site, run: Run, p: dict[str, Any]) -> Run:
    t = p["t"]
    run.require(z3.And(_site(cell, run, site)(t), run["idle"](t)))
    local = run["L"]
    _set_row(run, "copy", t, lambda i: local(i))
    _set_pc(run, t, "copied")
    return run


def _call(cell: Cell, sorts: Sorts, site: Site, run: Run, p: dict[str, Any], stale: bool) -> Run:
    """A caller-copy site may call from idle under stale-copies too: that call is the copy
    followed at once by the call (its copy is the local context now), so it adds
    transitions and no reachable state, and `call` is the same formula in every
    environment (`cover.py` relies on that; the `copy-first` mutant drops it)."""
    t = p["t"]
    idle, copied = run["idle"](t), run["copied"](t)
    from_idle = sorts.true(False) if stale and cell.mutant == "copy-first" else idle
    if site.request is RequestSource.CALLER_COPY:
        run.require(z3.And(_site(cell, run, site)(t), z3.Or(from_idle, copied)))
    else:
        run.require(z3.And(_site(cell, run, site)(t), idle))
    adds, drops = run["adds"], run["drops"]
    update = cell.variant.local_update(site)
    if cell.ordered and order_z3.creation(cell, site) != "snapshot":
        order_z3.create(sorts, run, t)
    if site.request is RequestSource.CALLER_COPY:
        local0 = run["L"]
        old_copy = run["copy"]
        copy: Fn = lambda i: z3.If(idle, local0(i), old_copy(t, i))  # noqa: E731
        requested: Fn = lambda i: z3.Or(z3.And(copy(i), z3.Not(drops(t, i))), adds(t, i))  # noqa: E731
        base: Fn = lambda i: z3.Or(copy(i), drops(t, i))  # noqa: E731
        if cell.agreement:
            agreement_z3.at_call(sorts, run, t, copy)
        _set_row(run, "copy", t, copy)
        _set_row(run, "base", t, base)
        ghosts.at_call(run, t)
        if update is LocalUpdate.REPLACE:
            _orphan(cell, run, t, local0)
            run.set("L", requested)
            _set_task(run, "bound", t, True)
        else:
            _set_row(run, "req", t, requested)
            if cell.ordered:
                order_z3.by_creation(run, t, requested)
    elif site.request is RequestSource.LOCAL_CONTEXT:
        _set_task(run, "bound", t, True)
    if update is LocalUpdate.BEFORE_PUSH:
        local1 = run["L"]
        run.set("L", lambda i: z3.Or(z3.And(local1(i), z3.Not(drops(t, i))), adds(t, i)))
    if site.request is RequestSource.LOCAL_CONTEXT:
        local2 = run["L"]
        _set_row(run, "base", t, lambda i: z3.Or(local2(i), drops(t, i)))
    if cell.variant.locks(site) and not cell.three_way:
        free = _free(sorts, run, "aown", "await")
        taken = run.copy()
        _set_task(taken, "aown", t, True)
        taken = _snapshot(cell, sorts, site, taken, p)
        waits = run.copy()
        _join(waits, t)
        _set_pc(waits, t, "wact")
        return merge(free, taken, waits)
    return _snapshot(cell, sorts, site, run, p)


def _orphan(cell: Cell, run: Run, t: Any, local0: Fn) -> None:
    """A replacement gives the activity a new local context object; a waiting task bound
    to the old object keeps it, and nobody changes it any more."""
    bound, wact, wprov, req = run["bound"], run["wact"], run["wprov"], run["req"]

    def orphaned(x: Any) -> Expr:
        return z3.And(x != t, bound(x), z3.Or(wact(x), wprov(x)))

    run.set("req", lambda x, i: z3.If(orphaned(x), local0(i), req(x, i)))
    if cell.ordered:
        order_z3.by_creation_where(run, orphaned, local0)
    run.set("bound", lambda x: z3.And(bound(x), z3.Not(orphaned(x))))


def _snapshot(cell: Cell, sorts: Sorts, site: Site, run: Run, p: dict[str, Any]) -> Run:
    t = p["t"]
    if cell.ordered and order_z3.creation(cell, site) == "snapshot":
        order_z3.create(sorts, run, t)
    if site.request is RequestSource.MIRROR_SNAPSHOT:
        if cell.ordered:
            order_z3.snapshot(run, t)
        mirror, adds, drops = run["M"], run["adds"], run["drops"]
        _set_row(run, "req", t, lambda i: z3.Or(z3.And(mirror(i), z3.Not(drops(t, i))), adds(t, i)))
        _set_row(run, "base", t, lambda i: z3.Or(mirror(i), drops(t, i)))
    if cell.three_way:
        return _diff_and_send(cell, sorts, site, run, p)
    free = _free(sorts, run, "pown", "pwait")
    taken = run.copy()
    _set_task(taken, "pown", t, True)
    taken = _diff_and_send(cell, sorts, site, taken, p)
    waits = run.copy()
    _set_task(waits, "pwait", t, True)
    _set_pc(waits, t, "wprov")
    return merge(free, taken, waits)


def _diff_and_send(cell: Cell, sorts: Sorts, site: Site, run: Run, p: dict[str, Any]) -> Run:
    t = p["t"]
    ghosts.at_diff(run, t)
    bound, local, req, mirror = run["bound"](t), run["L"], run["req"], run["M"]
    request: Fn = lambda i: z3.If(bound, local(i), req(t, i))  # noqa: E731
    if cell.three_way:
        gone, oc, od, base = run["gone"], run["oc"], run["od"], run["base"]

        def tomb(i: Any) -> Expr:
            return z3.Or(gone(i), sorts.exists(TASK, lambda x: od(x, i)))

        merged: Fn = lambda i: z3.And(request(i), z3.Not(z3.And(tomb(i), base(t, i))))  # noqa: E731
        run.set("L", lambda i: z3.If(bound, merged(i), local(i)))
        if cell.mutant == "diff-mirror":
            expected: Fn = mirror
        else:

            def expected(i: Any) -> Expr:
                return z3.And(
                    z3.Or(mirror(i), sorts.exists(TASK, lambda x: oc(x, i))),
                    z3.Not(sorts.exists(TASK, lambda x: od(x, i))),
                )

        if cell.mutant == "no-base":
            deletes: Fn = lambda i: z3.And(expected(i), z3.Not(merged(i)))  # noqa: E731
            creates: Fn = lambda i: z3.And(merged(i), z3.Not(expected(i)))  # noqa: E731
        else:
            deletes = lambda i: z3.And(base(t, i), expected(i), z3.Not(merged(i)))  # noqa: E731
            creates = lambda i: z3.And(merged(i), z3.Not(base(t, i)), z3.Not(expected(i)))  # noqa: E731
        final = merged
    else:
        # by membership: the request agrees with the mirror in order on common items
        deletes = lambda i: z3.And(mirror(i), z3.Not(request(i)))  # noqa: E731
        creates = lambda i: z3.And(request(i), z3.Not(mirror(i)))  # noqa: E731
        final = request
    acked = run["acked"]
    _add_row(run, "dack", t, lambda i: z3.And(deletes(i), acked(i)))
    _add_row(run, "tsc", t, creates)
    _add_row(run, "tsd", t, deletes)
    _set_row(run, "pc", t, creates)
    _set_row(run, "pd", t, deletes)
    if cell.three_way:
        _add_row(run, "oc", t, creates)
        _add_row(run, "od", t, deletes)
    if cell.ordered:
        order_z3.at_diff(run, t, bound, final)
    if cell.agreement and cell.three_way:
        agreement_z3.at_diff(run, t, expected, merged, creates)
    _set_row(run, "req", t, final)
    before = run["before"]
    run.set("before", lambda x, y: z3.If(y == t, x != t, z3.And(x != t, before(x, y))))
    no_ops = sorts.forall(ITEM, lambda i: z3.And(z3.Not(creates(i)), z3.Not(deletes(i))))
    done = run.copy()
    done = _finish(cell, sorts, site, done, p, "done")
    sent = run.copy()
    _set_pc(sent, t, "wacks")
    if cell.mutant == "early-release" and not cell.three_way:
        _release_both(sorts, sent, p)
    return merge(no_ops, done, sent)


def _release_both(sorts: Sorts, run: Run, p: dict[str, Any]) -> None:
    t = p["t"]
    _release(sorts, run, t, "pown", "pwait", p["wp"])
    _release(sorts, run, t, "aown", "await", p["wa"])


def _finish(cell: Cell, sorts: Sorts, site: Site, run: Run, p: dict[str, Any], pc: str) -> Run:
    t = p["t"]
    if not cell.three_way:
        _release_both(sorts, run, p)
    if cell.variant.local_update(site) is LocalUpdate.AFTER_PUSH:
        local, adds = run["L"], run["adds"]
        run.set("L", lambda i: z3.Or(local(i), adds(t, i)))
    _set_pc(run, t, pc)
    _set_row(run, "pc", t, lambda i: sorts.true(False))
    _set_row(run, "pd", t, lambda i: sorts.true(False))
    return run


def _wake_activity(cell: Cell, sorts: Sorts, site: Site, run: Run, p: dict[str, Any]) -> Run:
    t = p["t"]
    run.require(z3.And(_site(cell, run, site)(t), run["wact"](t), run["aown"](t)))
    return _snapshot(cell, sorts, site, run, p)


def _wake_provider(cell: Cell, sorts: Sorts, site: Site, run: Run, p: dict[str, Any]) -> Run:
    t = p["t"]
    run.require(z3.And(_site(cell, run, site)(t), run["wprov"](t), run["pown"](t)))
    return _diff_and_send(cell, sorts, site, run, p)


def _waits_for_nothing(sorts: Sorts, run: Run, t: Any) -> Expr:
    pc, pd = run["pc"], run["pd"]
    return sorts.forall(ITEM, lambda i: z3.And(z3.Not(pc(t, i)), z3.Not(pd(t, i))))


def _resume(cell: Cell, sorts: Sorts, site: Site, run: Run, p: dict[str, Any]) -> Run:
    t = p["t"]
    run.require(
        z3.And(_site(cell, run, site)(t), run["wacks"](t), _waits_for_nothing(sorts, run, t))
    )
    return _finish(cell, sorts, site, run, p, "done")


def _timeout(cell: Cell, sorts: Sorts, site: Site, run: Run, p: dict[str, Any]) -> Run:
    t = p["t"]
    run.require(
        z3.And(
            _site(cell, run, site)(t), run["wacks"](t), z3.Not(_waits_for_nothing(sorts, run, t))
        )
    )
    return _finish(cell, sorts, site, run, p, "failed")


# -- environment actions ------------------------------------------------------------

TI = (("t", TASK), ("i", ITEM))
I = (("i", ITEM),)  # noqa: E741


def _environment_actions(cell: Cell, sorts: Sorts) -> list[Action]:
    env = cell.environment
    out = [
        Action("server applies a create", TI, lambda r, p: _server_create(cell, sorts, r, p)),
        Action("server refuses a create", TI, lambda r, p: _server_refuse(cell, sorts, r, p)),
        Action("server applies a delete", TI, lambda r, p: _server_delete(cell, sorts, r, p)),
    ]
    if cell.agreement:
        # the anchor rule: the refusal above becomes the rejection of `rejections` only
        out[1] = Action(
            "server refuses a create (its anchor is not on the server)",
            (*TI, ("a", ITEM)),
            lambda r, p: _server_refuse(cell, sorts, r, p, anchored=True),
        )
        if env.rejections:
            out.append(
                Action(
                    "server rejects a create", TI, lambda r, p: _server_refuse(cell, sorts, r, p)
                )
            )
    if env.rejections:
        out.append(
            Action("server rejects a delete", TI, lambda r, p: _server_reject_delete(sorts, r, p))
        )
    for kind in _EVENTS:
        if cell.ordered and kind == "evc":
            out += [_ordered_added(cell, sorts, place) for place in order_z3.PLACES]
        else:
            out.append(_client_action(cell, sorts, kind))
    if env.server_items:
        out += [
            Action("model creates an item", I, lambda r, p: _model_creates(cell, r, p)),
            Action("client applies the model's item", I, lambda r, p: _client_model(r, p)),
            Action("local context learns an item", I, lambda r, p: _learn(r, p)),
        ]
    return out


_EVENT_WORDS = {
    "evc": "an added event",
    "evd": "a deleted event",
    "erc": "a rejected create",
    "erd": "a rejected delete",
}
_EVENTS = ("evc", "evd", "erc", "erd")


def _client_action(cell: Cell, sorts: Sorts, kind: str) -> Action:
    def effect(run: Run, p: dict[str, Any]) -> Run:
        return _client_apply(cell, sorts, kind, run, p)

    return Action(f"client applies {_EVENT_WORDS[kind]}", TI, effect)


def _ordered_added(cell: Cell, sorts: Sorts, place: str) -> Action:
    """The client applies an added event, and the mirror's order puts its item where its
    anchor says (`order_z3.added`)."""

    def effect(run: Run, p: dict[str, Any]) -> Run:
        mirror, mo = run["M"], run["mo"]
        run = _client_apply(cell, sorts, "evc", run, p)
        order_z3.added(sorts, run, place, p, mirror, mo)
        return run

    params = TI if place == order_z3.PLACES[2] else (*TI, ("p", ITEM))
    return Action(f"client applies {_EVENT_WORDS['evc']} ({place})", params, effect)


def _first_batch(sorts: Sorts, run: Run, t: Any, slots: tuple[str, ...]) -> Expr:
    """No batch sent before t's has a slot of `slots` left (the FIFO, at batch grain)."""
    before = run["before"]
    rels = [run[name] for name in slots]
    return sorts.forall(
        TASK,
        lambda x: z3.Implies(
            before(x, t), sorts.forall(ITEM, lambda j: z3.And(*(z3.Not(r(x, j)) for r in rels)))
        ),
    )


def _at_server(sorts: Sorts, run: Run, t: Any, i: Any, slot: str) -> None:
    run.require(z3.And(run[slot](t, i), _first_batch(sorts, run, t, ("tsc", "tsd"))))
    _set_slot(run, slot, t, i, False)


def _server_create(cell: Cell, sorts: Sorts, run: Run, p: dict[str, Any]) -> Run:
    t, i = p["t"], p["i"]
    on_server = run["S"](i)
    if cell.ordered:
        order_z3.in_batch_order(sorts, run, t, i, ("tsc",), ("tsd",))
    _at_server(sorts, run, t, i, "tsc")
    placed = run.copy()
    if cell.agreement:
        agreement_z3.placed(placed, i)
    _set_item(placed, "S", i, True)
    _set_slot(placed, "evc", t, i, True)
    refused = run.copy()
    _set_slot(refused, "erc", t, i, True)
    return merge(on_server, refused, placed)


def _server_refuse(
    cell: Cell, sorts: Sorts, run: Run, p: dict[str, Any], anchored: bool = False
) -> Run:
    """The server refuses a create (its anchor is gone, or it was rejected): any create
    may be refused, since anchors are not modelled; `anchored` (cells with the anchor
    rule): only one whose possible anchor `a` is off the server (`agreement_z3`)."""
    t, i = p["t"], p["i"]
    if cell.ordered:
        order_z3.in_batch_order(sorts, run, t, i, ("tsc",), ("tsd",))
    if anchored:
        agreement_z3.refuse_anchored(run, t, i, p["a"], cell.mutant == "refuse-anchored")
    _at_server(sorts, run, t, i, "tsc")
    _set_slot(run, "erc", t, i, True)
    return run


def _server_delete(cell: Cell, sorts: Sorts, run: Run, p: dict[str, Any]) -> Run:
    t, i = p["t"], p["i"]
    on_server = run["S"](i)
    _at_server(sorts, run, t, i, "tsd")
    applied = run.copy()
    if cell.agreement:
        agreement_z3.removed(applied, i)
    _set_item(applied, "S", i, False)
    _set_slot(applied, "evd", t, i, True)
    refused = run.copy()
    _set_slot(refused, "erd", t, i, True)
    return merge(on_server, applied, refused)


def _server_reject_delete(sorts: Sorts, run: Run, p: dict[str, Any]) -> Run:
    t, i = p["t"], p["i"]
    _at_server(sorts, run, t, i, "tsd")
    _set_slot(run, "erd", t, i, True)
    return run


def _client_apply(cell: Cell, sorts: Sorts, kind: str, run: Run, p: dict[str, Any]) -> Run:
    t, i = p["t"], p["i"]
    guard = run[kind](t, i)
    if cell.mutant != "events-out-of-order":
        guard = z3.And(guard, _first_batch(sorts, run, t, _EVENTS))
    run.require(guard)
    if cell.ordered and kind in ("evc", "erc"):
        order_z3.in_batch_order(sorts, run, t, i, ("evc", "erc"), ("evd", "erd"))
    _set_slot(run, kind, t, i, False)
    pending = "pc" if kind in ("evc", "erc") else "pd"
    if kind == "evc":
        _set_item(run, "M", i, True)
        _set_item(run, "acked", i, True)
    elif kind == "evd":
        if cell.ordered:
            order_z3.deleted(run, i, run["mo"])
        _set_item(run, "M", i, False)
        if cell.three_way:
            _set_item(run, "gone", i, True)
    own_only = cell.three_way or kind in ("erc", "erd")
    old, wacks = run[pending], run["wacks"]
    if own_only:
        run.set(
            pending,
            lambda x, y: z3.If(z3.And(x == t, y == i, wacks(x)), sorts.true(False), old(x, y)),
        )
    else:
        # the mirror-diff session resolves an added or deleted event by (kind, item),
        # whoever sent the op
        run.set(pending, lambda x, y: z3.If(z3.And(y == i, wacks(x)), sorts.true(False), old(x, y)))
    if cell.three_way:
        _set_slot(run, "oc" if pending == "pc" else "od", t, i, False)
    return run


def _model_creates(cell: Cell, run: Run, p: dict[str, Any]) -> Run:
    """Any pool item not yet created (the pool's order is not modelled)."""
    i = p["i"]
    run.require(z3.And(run["pool"](i), z3.Not(run["created"](i))))
    if cell.agreement:
        agreement_z3.placed(run, i)
        _set_item(run, "sent", i, True)
    _set_item(run, "S", i, True)
    _set_item(run, "created", i, True)
    _set_item(run, "evm", i, True)
    return run


def _client_model(run: Run, p: dict[str, Any]) -> Run:
    """The model's added events are applied in any order (over-approximates the FIFO)."""
    i = p["i"]
    run.require(run["evm"](i))
    _set_item(run, "evm", i, False)
    _set_item(run, "M", i, True)
    _set_item(run, "acked", i, True)
    return run


def _learn(run: Run, p: dict[str, Any]) -> Run:
    i = p["i"]
    run.require(
        z3.And(run["pool"](i), run["created"](i), run["acked"](i), z3.Not(run["learned"](i)))
    )
    _set_item(run, "L", i, True)
    _set_item(run, "learned", i, True)
    return run
