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

#: The five sites of the seed discussion; `lock5` locks exactly these.
FIVE_SITES: frozenset[str] = frozenset(
    {"user-turn", "tool-outputs", "interrupted-tool-outputs", "replacement", "cleanup"}
)
#: The three sites that snapshot the mirror in the seed's change; `lock3` locks these.
THREE_SNAPSHOT_SITES: frozenset[str] = frozenset(
    {"user-turn", "tool-outputs", "interrupted-tool-outputs"}
)
