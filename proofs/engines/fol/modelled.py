"""Which cells the first-order model models at all: an explicit allow-list.

The first-order system is written over the fields of today's records. A record
field, an environment option, a session kind or a site's request source added to
`model/` later is something `actions.py` does not read, so a proof would silently
ignore it. `coverage` names every such thing it finds; `prove` answers `unknown`
with that reason instead of a proof.
"""

from __future__ import annotations

from typing import Any

import attrs

from model import SHAPES_BY_NAME, LocalUpdate, RequestSource, SessionKind, SessionShape, Site
from model.sites import Creation, LocalPosition, local_order
from proofs.engines.fol.system import MUTANTS, Cell

#: Environment options the actions read (`Environment.options` names).
OPTIONS_MODELLED: frozenset[str] = frozenset(
    {"stale-copies", "server-items", "timeouts", "rejections"}
)
#: Options the engine leaves out where the cell's shape says they do not apply
#: (`SessionShape.inert_options`): the model gives them no move for that shape (a
#: reconnect of a session without one; an item announced after a deleted one where
#: the mirror puts it at the tail, as the server does).
INERT_MODELLED: frozenset[str] = frozenset({"reconnects", "stale-anchors"})
#: Session kinds the actions are written for.
SESSIONS_MODELLED: frozenset[SessionKind] = frozenset(
    {SessionKind.MIRROR_DIFF, SessionKind.THREE_WAY}
)
#: The session shapes the actions are written for: livekit's OpenAI session (an
#: ack-driven mirror, a lock across the acks) and ackguard's three-way session. A
#: shape is compared by its fields, not its name; any other is unknown.
SHAPES_MODELLED: tuple[SessionShape, ...] = (SHAPES_BY_NAME["openai"], SHAPES_BY_NAME["three-way"])
#: Shape fields that cannot change behaviour (names, prose, where the code is).
_SHAPE_PROSE = frozenset({"name", "summary", "source"})


def _same_shape(a: SessionShape, b: SessionShape) -> bool:
    return all(
        getattr(a, f.name) == getattr(b, f.name)
        for f in attrs.fields(SessionShape)
        if f.name not in _SHAPE_PROSE
    )


#: Request sources and local-update timings `actions.py` has a branch for, by name, so
#: a member added to the enums later is not taken in.
REQUESTS_MODELLED: frozenset[RequestSource] = frozenset(
    {RequestSource.MIRROR_SNAPSHOT, RequestSource.LOCAL_CONTEXT, RequestSource.CALLER_COPY}
)
UPDATES_MODELLED: frozenset[LocalUpdate] = frozenset(
    {LocalUpdate.BEFORE_PUSH, LocalUpdate.AFTER_PUSH, LocalUpdate.REPLACE, LocalUpdate.NONE}
)
#: Record fields the actions read, or that cannot change behaviour (names, prose, the
#: catalog's expected failures). A field outside these with a non-default value is
#: a configuration this engine does not model.
FIELDS_READ: dict[str, frozenset[str]] = {
    "Variant": frozenset(
        # `shape`, `shapes`: the cell's own `shape` is what the actions read, checked below
        {
            "name",
            "summary",
            "locked_sites",
            "shape",
            "shapes",
            "local_update_overrides",
            "known_failures",
        }
    ),
    "Site": frozenset({"name", "summary", "request", "local_update", "source"}),
    "Environment": frozenset({"stale_copies", "server_items", "timeouts", "rejections"}),
}


def _unread_fields(record: Any, kind: str) -> list[str]:
    out = []
    for field in attrs.fields(type(record)):
        if field.name in FIELDS_READ[kind]:
            continue
        default = field.default
        if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
            default = default.factory()
        if getattr(record, field.name) != default:
            out.append(field.name)
    return out


def coverage(cell: Cell) -> str:
    """Why the engine does not model `cell`, in one line; empty when it does."""
    env = cell.environment
    # an option the shape gives nothing to do (a reconnect for a session without one)
    # changes no move of the model, so leaving it out is exact
    inert = {name for name, _ in cell.shape.inert_options()} & INERT_MODELLED
    unknown = [name for name in env.options if name not in OPTIONS_MODELLED | inert]
    # a field is spelt with underscores where its option has hyphens
    unknown += [
        f.replace("_", "-")
        for f in _unread_fields(env, "Environment")
        if f.replace("_", "-") not in inert
    ]
    unknown = list(dict.fromkeys(unknown))  # an option and its field share a name
    if unknown:
        return f"the first-order model does not model environment option {', '.join(unknown)}"
    if not any(_same_shape(cell.shape, shape) for shape in SHAPES_MODELLED):
        return f"the first-order model does not model session shape {cell.shape.name}"
    if cell.variant.session not in SESSIONS_MODELLED:
        return f"the first-order model does not model session kind {cell.variant.session}"
    fields = _unread_fields(cell.variant, "Variant")
    if fields:
        return f"the first-order model does not read variant field {', '.join(fields)}"
    for site in cell.sites:
        fields = _unread_fields(site, "Site")
        if fields:
            return f"the first-order model does not read site field {', '.join(fields)}"
        if site.request not in REQUESTS_MODELLED or site.local_update not in UPDATES_MODELLED:
            return f"the first-order model does not model site {site.name}'s request or update"
    if cell.ordered and (cell.three_way or env.server_items):
        return "the order relations are not written for three-way or the model's items"
    reason = _order_reason(cell)
    if reason:
        return reason
    if cell.mutant is not None and cell.mutant not in MUTANTS:
        return f"no such mutant: {cell.mutant}"
    if not cell.sites:
        return "a cell needs at least one site"
    return ""


def enters_out_of_order(site: Site) -> bool:
    """Whether the site's items can enter the local context behind items pushed after they
    were made: made before the call, placed by creation time (`model.local_order`)."""
    order = local_order(site)
    return order.position is LocalPosition.BY_CREATED_AT and order.created is Creation.BEFORE_CALL


def _order_reason(cell: Cell) -> str:
    """The mirror-diff session diffs a live-context or copied request in the local
    context's order; where a site's items can enter it out of the mirror's order, that diff
    deletes and re-creates an acknowledged item, which the diff by membership never does."""
    copied = cell.uses(RequestSource.LOCAL_CONTEXT) or cell.uses(RequestSource.CALLER_COPY)
    late = [site.name for site in cell.sites if enters_out_of_order(site)]
    if cell.three_way or not copied or not late:
        return ""
    return (
        f"{late[0]}'s items can enter the local context out of the mirror's order, so a "
        "request taken from it need not agree with the mirror in order"
    )


def covers(cell: Cell) -> bool:
    """Whether the engine models `cell` at all (cheap: reads records, runs no solver)."""
    return not coverage(cell)
