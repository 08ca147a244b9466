"""Push sites as data.

A site is a place in an agent that pushes a requested context to the provider
session. The model never branches on a site's name: everything it does with a
site comes from the fields below, so a place a reviewer finds in real code is one
more record, not new model code.
"""

from __future__ import annotations

import enum

from attrs import evolve, frozen


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


class SpeechTurn(enum.Enum):
    """How a site stands to livekit's speech scheduler, which lets one speech (a
    reply's generation, a `say()`) be current at a time (`docs/model.md`, "The
    speech turn"). A site that waits cannot be called while another call holds the
    turn; the model has no queue of speeches: a waiting call is one not made yet."""

    #: Not a speech and waits for none (the application's replacement).
    NONE = "none"
    #: Waits until no speech is current and holds none (the tool-output push's
    #: `while self._current_speech or self._speech_q`).
    WAITS = "waits"
    #: A speech: waits for its turn, and gives it up before its snapshot
    #: (`say()` marks its generation done after playout, before it pushes).
    WAITS_THEN_YIELDS = "waits-then-yields"
    #: A speech: waits for its turn and holds it until its push returns (the user
    #: turn pushes inside its own reply task).
    HOLDS_ACROSS_PUSH = "holds-across-push"
    #: Inside a generation that is the current speech when the scenario starts
    #: (its items are on the server already); gives the turn up when called (the
    #: interrupted path marks the generation done before its push).
    CURRENT_UNTIL_CALL = "current-until-call"
    #: As `CURRENT_UNTIL_CALL`, but holds the turn until its push returns (the
    #: cleanup pushes before the generation is marked done).
    CURRENT_ACROSS_PUSH = "current-across-push"

    @property
    def waits(self) -> bool:
        """Whether a call of the site waits while another call holds the turn."""
        return self is not SpeechTurn.NONE

    @property
    def from_start(self) -> bool:
        """Whether the site's generation is current when the scenario starts."""
        return self in (SpeechTurn.CURRENT_UNTIL_CALL, SpeechTurn.CURRENT_ACROSS_PUSH)

    @property
    def across_push(self) -> bool:
        """Whether the site holds the turn from its call until its push returns."""
        return self in (SpeechTurn.HOLDS_ACROSS_PUSH, SpeechTurn.CURRENT_ACROSS_PUSH)


@frozen
class LocalOrder:
    """Where a site's new items go in the local context, and when they are created.

    With `BY_CREATED_AT` and a creation before the step that adds them, this
    decides where they land; `model.local_order` reads it for every move
    (`docs/model.md`, "The local context's order").
    """

    position: LocalPosition = LocalPosition.TAIL
    created: Creation = Creation.AT_CALL
    #: Where a mirror-snapshot site's new items go in its copy of the mirror, its
    #: request: appended (`TAIL`, `items.extend`), or inserted by creation time
    #: (`BY_CREATED_AT`, `ChatContext.insert` on the copy), which puts an item made
    #: before its call ahead of the younger items the mirror has acknowledged since.
    request: LocalPosition = LocalPosition.TAIL


@frozen
class Site:
    """One place that pushes; see `docs/model.md` for the real code behind each."""

    name: str
    summary: str
    request: RequestSource
    local_update: LocalUpdate
    #: Where the real code is (release and function), for readers and the audit.
    source: str = ""
    #: How the site waits for livekit's speech scheduler (`SpeechTurn`); a site
    #: read from a file waits for nothing unless it says.
    speech: SpeechTurn = SpeechTurn.NONE
    #: Whether each of the call's new items follows, in the real code, an item the
    #: model does not hold (a tool output follows its function call): that hidden
    #: item is the real anchor of the item's announcement (`model.moves._placeholder`).
    after_hidden_call: bool = False


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


#: How each catalog site waits for livekit's speech scheduler, the same in
#: livekit-agents 1.8.8 and 1.8.9 (`docs/model.md`, "The speech turn", has the
#: lines). The catalog's own records wait for nothing, as the seed discussion
#: reasoned about them; `with_speech_turn` gives the records with these values.
SPEECH_TURNS: dict[str, SpeechTurn] = {
    "user-turn": SpeechTurn.HOLDS_ACROSS_PUSH,
    "tool-outputs": SpeechTurn.WAITS,
    "interrupted-tool-outputs": SpeechTurn.CURRENT_UNTIL_CALL,
    "replacement": SpeechTurn.NONE,
    "cleanup": SpeechTurn.CURRENT_ACROSS_PUSH,
    "spoken-message": SpeechTurn.WAITS_THEN_YIELDS,
}


def with_speech_turn(sites: tuple[Site, ...] = SITES) -> tuple[Site, ...]:
    """`sites` with livekit's speech turn (`SPEECH_TURNS`), for `Config(extra_sites=...)`:
    the records of an agent whose scheduler runs one speech at a time."""
    return tuple(evolve(site, speech=SPEECH_TURNS.get(site.name, site.speech)) for site in sites)


#: The catalog sites whose new items are tool outputs, each after its function call
#: (livekit-agents 1.8.8 and 1.8.9, `AgentActivity._realtime_generation_task`, both
#: paths: the call and its output are inserted together, `docs/model.md`, "The
#: placeholder handler"). The catalog's own records leave it off: it is read only by
#: the placeholder handler, which no catalog shape has.
HIDDEN_CALLS: frozenset[str] = frozenset({"tool-outputs", "interrupted-tool-outputs"})


def with_hidden_calls(sites: tuple[Site, ...] = SITES) -> tuple[Site, ...]:
    """`sites` with `after_hidden_call` on for the tool-output sites (`HIDDEN_CALLS`),
    for `Config(extra_sites=...)`: the records of an agent whose tool outputs follow
    function calls the model does not hold."""
    return tuple(
        evolve(site, after_hidden_call=True) if site.name in HIDDEN_CALLS else site
        for site in sites
    )


#: Local orders of the livekit release records beyond the catalog's (`Config.local_orders`):
#: `say()`'s push inserts its message into its copy of the mirror by creation time
#: too (livekit-agents 1.8.9 `_tts_task_impl`, `rt_chat_ctx.insert(spoken_msg)`,
#: `voice/agent_activity.py:3457`). The catalog's record appends it, as ackguard's
#: implementation and the adapters judged against the catalog do (`docs/model.md`,
#: "The local context's order").
COPY_INSERTS: tuple[tuple[str, LocalOrder], ...] = (
    (
        "spoken-message",
        LocalOrder(
            LocalPosition.BY_CREATED_AT, Creation.BEFORE_CALL, request=LocalPosition.BY_CREATED_AT
        ),
    ),
)


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
