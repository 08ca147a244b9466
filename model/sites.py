"""Push sites as data.

A site is a place in an agent that pushes a requested context to the provider
session. The model never branches on a site's name: everything it does with a
site comes from the fields below, so a place a reviewer finds in real code is one
more record, not new model code.
"""

from __future__ import annotations

import enum

from attrs import frozen


class RequestSource(enum.Enum):
    """Where a push's requested context comes from."""

    #: A private copy of the mirror taken when the push starts (after the activity
    #: lock, where one is held), plus the call's new items. Nobody else can change it.
    MIRROR_SNAPSHOT = "mirror-snapshot"
    #: The live local context object itself; the provider reads its contents only
    #: when it computes the diff, so changes made while the push waits are included.
    LOCAL_CONTEXT = "local-context"
    #: The application's own copy of the local context, taken in a step of its own
    #: (so it can be arbitrarily stale), minus what it drops, plus what it adds.
    #: The push then makes that copy the live local context object.
    CALLER_COPY = "caller-copy"


class LocalUpdate(enum.Enum):
    """When a site changes the local context, relative to its push."""

    #: Adds its items (and removes its drops) before the push starts.
    BEFORE_PUSH = "before"
    #: Upserts its items once the push returns (also when it failed).
    AFTER_PUSH = "after"
    #: Replaces the local context by the requested context when the push starts.
    REPLACE = "replace"
    #: Leaves the local context alone.
    NONE = "none"


class LocalPosition(enum.Enum):
    """Where a site's new items go in the local context (livekit's `ChatContext`).

    An item's *creation time* is its `created_at`: the moment the real code
    makes the item object. `docs/model.md` ("The local context's order") has
    the real code behind each site's value.
    """

    #: Appended after every item (`items.append`, a copy's own order).
    TAIL = "tail"
    #: After the last item created no later than it (`ChatContext.insert` and
    #: `_upsert_item`). For an item that enters the local context in the step
    #: that creates it this is the tail too; it differs only for an item that
    #: enters later than it was created.
    BY_CREATED_AT = "by-created-at"


class Creation(enum.Enum):
    """The model step in which a site's new items are created (get their creation time)."""

    #: The step that calls the site.
    AT_CALL = "at-call"
    #: The step that takes the mirror snapshot, holding the activity lock where
    #: the site takes it (for other request sources: the call).
    AT_SNAPSHOT = "at-snapshot"
    #: A step of its own, at any moment before the call: a tool's function
    #: returns in its own task, which the generation task awaits before it
    #: adds the output; a spoken message is stamped with the moment its
    #: playout started.
    BEFORE_CALL = "before-call"


@frozen
class LocalOrder:
    """Where a site's new items go in the local context, and when they are created.

    With `BY_CREATED_AT` and a creation before the step that adds them, this
    decides where they land. The successor function does not read it yet:
    `State` has no creation order (`docs/model.md`, "The local context's order").
    """

    position: LocalPosition = LocalPosition.TAIL
    created: Creation = Creation.AT_CALL


@frozen
class Site:
    """One place that pushes; see `docs/model.md` for the real code behind each."""

    name: str
    summary: str
    request: RequestSource
    local_update: LocalUpdate
    #: Where the real code is (release and function), for readers and the audit.
    source: str = ""


SITES: tuple[Site, ...] = (
    Site(
        name="user-turn",
        summary="the text user turn of generate_reply(user_input=...)",
        request=RequestSource.MIRROR_SNAPSHOT,
        local_update=LocalUpdate.AFTER_PUSH,
        source="AgentActivity._realtime_reply_task",
    ),
    Site(
        name="tool-outputs",
        summary="the new tool outputs of a generation",
        request=RequestSource.MIRROR_SNAPSHOT,
        local_update=LocalUpdate.BEFORE_PUSH,
        source="AgentActivity._realtime_generation_task, normal path",
    ),
    Site(
        name="interrupted-tool-outputs",
        summary="the outputs of tools that finished although their generation was interrupted",
        request=RequestSource.MIRROR_SNAPSHOT,
        local_update=LocalUpdate.BEFORE_PUSH,
        source="AgentActivity._realtime_generation_task, interrupted path",
    ),
    Site(
        name="replacement",
        summary="the application's update_chat_ctx(copy)",
        request=RequestSource.CALLER_COPY,
        local_update=LocalUpdate.REPLACE,
        source="AgentActivity.update_chat_ctx",
    ),
    Site(
        name="cleanup",
        summary="the push that removes never-played items after an interrupted generation",
        request=RequestSource.LOCAL_CONTEXT,
        # the never-played items are already absent from the local context; the
        # played ones were upserted just before (in the model: `learn` moves)
        local_update=LocalUpdate.BEFORE_PUSH,
        source="AgentActivity._realtime_generation_task, after an interruption",
    ),
    Site(
        name="spoken-message",
        summary="the spoken text of say() pushed after playout (new in 1.8.9)",
        request=RequestSource.MIRROR_SNAPSHOT,
        local_update=LocalUpdate.BEFORE_PUSH,
        source="AgentActivity._tts_task_impl (livekit-agents 1.8.9)",
    ),
)

SITES_BY_NAME: dict[str, Site] = {site.name: site for site in SITES}

#: The local order of the catalog's sites in livekit-agents 1.8.9 (`docs/model.md`,
#: "The local context's order"). Site files do not carry one: a site read from
#: a file, like any site not named here, appends and creates at its call.
LOCAL_ORDER: dict[str, LocalOrder] = {
    # made by add_message on the mirror's copy inside the lock; upserted by
    # creation time once the push returns
    "user-turn": LocalOrder(LocalPosition.BY_CREATED_AT, Creation.AT_SNAPSHOT),
    # made when the tool returns; added once every tool of the generation has
    "tool-outputs": LocalOrder(LocalPosition.BY_CREATED_AT, Creation.BEFORE_CALL),
    "interrupted-tool-outputs": LocalOrder(LocalPosition.BY_CREATED_AT, Creation.BEFORE_CALL),
    # stamped with the moment its playout started
    "spoken-message": LocalOrder(LocalPosition.BY_CREATED_AT, Creation.BEFORE_CALL),
    # the caller's copy, in the caller's order
    "replacement": LocalOrder(),
    "cleanup": LocalOrder(),
}


def local_order(site: Site, table: dict[str, LocalOrder] | None = None) -> LocalOrder:
    """The local order of `site` (by name, in `table` or the catalog's)."""
    return (LOCAL_ORDER if table is None else table).get(site.name, LocalOrder())


#: The five sites of the seed discussion; `lock5` locks exactly these.
FIVE_SITES: frozenset[str] = frozenset(
    {"user-turn", "tool-outputs", "interrupted-tool-outputs", "replacement", "cleanup"}
)
#: The three sites that snapshot the mirror in the seed's change; `lock3` locks these.
THREE_SNAPSHOT_SITES: frozenset[str] = frozenset(
    {"user-turn", "tool-outputs", "interrupted-tool-outputs"}
)
