"""Provider session shapes as data: how a session turns a push into ops, and
what it believes the server holds.

A site describes the agent side of a push; a shape describes the provider side.
The successor function reads these fields and never a shape's name, so a session
a porting team brings is one more record. `docs/model.md` says, for each value,
which real code it stands for and where its awaits are.
"""

from __future__ import annotations

import enum

import attrs
from attrs import frozen


class MirrorUpdate(enum.Enum):
    """When the session's mirror of the server conversation changes."""

    #: Only when the server's item added / deleted events arrive.
    ON_EVENTS = "on-events"
    #: Set to the requested context when the push's send returns (an await later).
    ON_RETURN = "on-return"
    #: Set to the requested context in the step that sends, before any await.
    AT_SEND = "at-send"


class Sends(enum.Enum):
    """What a push sends for its diff."""

    CREATES_AND_DELETES = "creates-and-deletes"
    #: Removals are dropped with a warning; creates are appends with no anchor and
    #: no id the server checks, so the server adds them at its tail, again if need be.
    CREATES_ONLY = "creates-only"


class SessionLock(enum.Enum):
    """The session's own lock, as a push sees it."""

    #: Held across diff, send and the wait for acks.
    ACROSS_ACKS = "across-acks"
    #: Held only around an "is a server session active" check: taking a free
    #: asyncio.Lock does not yield, so for pushes it is one step and no wait.
    AROUND_CHECK = "around-check"
    NONE = "none"


class Acks(enum.Enum):
    """Whether a push waits for the server's answers to its ops."""

    #: Waits for every ack, with a timeout (environment option `timeouts`).
    AWAITED = "awaited"
    NOT_AWAITED = "not-awaited"


class ModelItems(enum.Enum):
    """How items the model creates server-side reach the mirror."""

    #: As the server's item events, through the same handler as acks.
    AS_EVENTS = "as-events"
    #: The session's own event handlers insert them into the mirror.
    BY_SESSION = "by-session"


class WhileDisconnected(enum.Enum):
    """What a push does while no server session is active."""

    #: The request is kept (the latest one wins) and adopted on connect.
    KEPT_BACK = "kept-back"
    #: Nothing special: its ops queue on the connection like any others.
    NONE = "none"


class OnReconnect(enum.Enum):
    """What the session does when a dropped connection comes back."""

    #: The new server conversation is built from the mirror.
    REBUILD_FROM_MIRROR = "rebuild-from-mirror"
    #: The session has no reconnect of its own: the `reconnects` option does not apply.
    NONE = "none"


class DropWindow(enum.Enum):
    """What a push does between the connection's drop and the session giving the
    dead connection up: the drop window (read only under `reconnects`).

    The window opens when the drop is noticed by whatever reads the socket and
    closes when the session stops treating its server session as active; a push
    in between still finds the session active. `docs/model.md` ("The drop window")
    says where each real session has it.
    """

    #: No window: the session gives the connection up in the step it drops.
    NONE = "none"
    #: The push diffs and sets its mirror as it would connected, and its ops wait on
    #: the session's send queue: the next connection sends them after its rebuild.
    QUEUED = "queued"
    #: The push raises before it diffs: nothing is sent and the mirror is kept.
    REFUSED = "refused"
    #: The push diffs, sets its mirror and sends into the dead connection: its ops are
    #: lost on it, but the session's record of sent ops holds them, so a `connect`
    #: sends again those still awaited.
    LOST = "lost"
    #: As `LOST`, but each send fails on the closed socket and the failure is only
    #: logged: the ops never enter the record of sent ops, no `connect` sends them
    #: again, and a push waiting for their acks waits until it times out.
    UNRECORDED = "unrecorded"


class WindowRebuild(enum.Enum):
    """What the rebuild sends when ops queued in the drop window wait behind it
    (read only with `DropWindow.QUEUED`)."""

    #: The whole mirror, then every queued op: an item both in the mirror and in a
    #: queued create is sent twice.
    MIRROR_THEN_QUEUE = "mirror-then-queue"
    #: The mirror without the items a queued create names, then the queued ops (a
    #: session that keeps the ids it queued and has not sent could do this).
    UNQUEUED_THEN_QUEUE = "unqueued-then-queue"


class ReconnectResends(enum.Enum):
    """Which ops a reconnect sends again after its rebuild (read only under `reconnects`)."""

    #: Every op any waiting push still awaits.
    AWAITED = "awaited"
    #: Only the unanswered ops of the push that started last, while it waits: the
    #: session keeps one record of sent ops and clears it at every push's start and end.
    CURRENT_PUSH = "current-push"
    #: None: the session fails every ack still awaited, so each waiting push ends
    #: with an error, and its unanswered ops are not sent again.
    NONE = "none"


class ReconnectMirror(enum.Enum):
    """What the rebuild does to the mirror (read only under `reconnects`)."""

    #: The new server conversation is the mirror, in the reconnect's own step.
    AT_ONCE = "at-once"
    #: The mirror is emptied and the rebuild is sent as creates; the mirror fills
    #: again only as their added events arrive (the empty window).
    EMPTIED = "emptied"


class ReconnectLock(enum.Enum):
    """Whether the rebuild holds the session lock (read only with `ReconnectMirror.EMPTIED`)."""

    #: The rebuild takes no lock: a push may snapshot or diff in the empty window.
    NONE = "none"
    #: The rebuild queues for the session lock and holds it until every create of
    #: the rebuild is answered: no push diffs in the window (a snapshot still may).
    SESSION_LOCK = "session-lock"


class Rebuilds(enum.Enum):
    """What a rebuild puts back on the new server conversation (`Scenario.kinds`)."""

    EVERYTHING = "everything"
    #: Every mirror item but function calls and function outputs.
    NO_FUNCTION_ITEMS = "no-function-items"


class OpenMessages(enum.Enum):
    """Whether a rebuild puts back the messages of a generation that has not ended:
    an interrupted call still waiting for its done event (`InterruptionEnd`), whose
    never-played items (`Call.drops`) are in the mirror (read only under `reconnects`).
    """

    #: Sent again like every other mirror item.
    REBUILT = "rebuilt"
    #: Left out: the mirror holds them with no content until the done event fills it,
    #: and the rebuild copies the mirror without empty messages, so they are on
    #: neither the new server nor the new mirror (function calls are rebuilt).
    LEFT_OUT = "left-out"


class OrphanOutputs(enum.Enum):
    """What happens to a function output pushed while its function call is not there.

    A function output is paired with a function call by kind alone (`Scenario.kinds`):
    it is orphaned when no function-call item is where the check looks. That is exact
    for scenarios with one function call.
    """

    #: Sent, and the server does not check for the call.
    UNCHECKED = "unchecked"
    #: Sent; the server refuses its create when it holds no function call.
    REFUSED = "refused"
    #: The session drops it before the push, from the request and the local update,
    #: when the mirror holds no function call.
    DROPPED = "dropped"


class Withheld(enum.Enum):
    """A class of items whose deletes the session never sends: the diff wants the
    delete, the session keeps it back (`SessionShape.withheld_deletes`)."""

    #: Function calls the model created that the local context has not learned yet
    #: (they reach it when tool execution starts). Both proposals for livekit/agents
    #: #4960 and #5021 (a set of in-flight ids on the session; a "dispatched" flag
    #: on the call) withhold exactly these in the model (docs/model.md says what
    #: the model cannot tell apart).
    UNLEARNED_CALLS = "unlearned-calls"
    #: Messages whose content is empty, as every user audio turn is without input
    #: transcription (the `_is_content_empty` guard on deletes before livekit/agents #5887).
    EMPTY_MESSAGES = "empty-messages"


class CallIds(enum.Enum):
    """Under which id a function call the model created reaches the local context."""

    #: The server's own id (livekit/agents #4876 and after).
    SERVER = "server"
    #: A fresh local id (before #4876): the local context holds an alias of the
    #: server's item, so a push of the local context deletes the server's item and
    #: creates the alias.
    FRESH = "fresh"


class Diff(enum.Enum):
    """Which diff the session computes (ackguard's own field, beside the agreed ones)."""

    #: Against the mirror as it is at that moment (every real session).
    MIRROR = "mirror"
    #: Three ways: base, expected view, request (ackguard's three-way session).
    THREE_WAY = "three-way"


class UnknownAnchor(enum.Enum):
    """Where the session's mirror puts an announced item whose anchor (the item the
    server says it follows) the mirror does not hold."""

    #: At the mirror's tail (livekit-plugins-openai 1.7.1 on, #6964; ackguard's own).
    TAIL = "tail"
    #: Nowhere: the insert fails, the item is left out of the mirror, and its ack
    #: still resolves (livekit-plugins-openai up to 1.7.0).
    DROPPED = "dropped"


class DuplicateRejection(enum.Enum):
    """What the session does with the server's refusal of a create for an item the
    server already holds ("duplicate item id")."""

    #: The refusal ends the push's wait for that create, as any refusal does.
    SETTLES = "settles"
    #: The refusal reaches the session but no waiter: the push waits on until its
    #: timeout, or for ever (the account of livekit/agents #6964).
    LEFT_WAITING = "left-waiting"


class RemoteItemAdded(enum.Enum):
    """What the agent does locally with an item the session announces as added
    (livekit's `AgentActivity._on_remote_item_added`, fed by the session's
    `remote_item_added` event)."""

    #: Nothing: the local context hears of a server item only through its own moves.
    IGNORED = "ignored"
    #: Appended to the live local context object when that object lacks the item
    #: and the item's anchor is its last item (the handler's placeholder), for the
    #: items a push created as for the model's own. A replacement whose copy is
    #: the live object and still waits to diff reads the appended item.
    APPENDED_AFTER_LAST = "appended-after-last"


class LocalTail(enum.Enum):
    """What follows the start's items in the agent's local context that the model
    does not hold: the placeholder handler (`RemoteItemAdded`) compares an announced
    item's anchor with the real last item, so a hidden item there changes its answer."""

    #: Nothing: the model's last local item is the real one.
    NONE = "none"
    #: A local-only item the agent adds when its session starts, after the start's
    #: items and before every later one (livekit's `AgentConfigUpdate`, inserted by
    #: `AgentActivity._start_session`; never pushed): while the model's local context
    #: ends with a start item, or is empty, the real last item is that one.
    LOCAL_ONLY = "local-only"


class InterruptionEnd(enum.Enum):
    """When an interrupted generation ends, so that its push (the cleanup, the
    interrupted tool outputs) can start. The field reads `Site.speech.from_start`
    to know which calls interrupt a generation; a site that waits for no speech turn
    interrupts nothing the model knows of, and pushes at its call under both values."""

    #: In the step that interrupts it, with nothing sent (the catalog's records).
    AT_ONCE = "at-once"
    #: When the server's answer to the cancel reaches the session: the call sends a
    #: cancel op on the op FIFO, behind every op sent before it; the server answers
    #: it with a done event on the event FIFO, behind the answers to those ops; the
    #: generation ends when the session applies that event, and its push runs on in
    #: a step of its own (livekit's OpenAI session: `response.cancel` and the
    #: `response.done` it causes, on the one websocket).
    ON_DONE_EVENT = "on-done-event"


class CompletionChannel(enum.Enum):
    """How the server's completion of an item the model created (a function call's
    arguments and its `done`) reaches the session, which hands the item on to the
    agent (the local context learns it when its tool starts: `learn`)."""

    #: Apart from the item events: the local context may learn the item at any
    #: moment once its added event is applied (the catalog's records).
    APART = "apart"
    #: On the one event channel, behind every event the server sent before it
    #: (livekit's OpenAI session over its websocket: `response.function_call_arguments.*`
    #: and `response.output_item.done` are read in order with the item events). The
    #: local context learns the item only once no event is on its way to the client.
    EVENTS = "events"


@frozen
class SessionShape:
    """One provider session's shape; the field names and values are those of the
    session files `ackguard audit --emit-sites` writes."""

    name: str
    summary: str
    mirror_update: MirrorUpdate
    sends: Sends
    session_lock: SessionLock
    acks: Acks
    model_items: ModelItems
    while_disconnected: WhileDisconnected
    on_reconnect: OnReconnect
    diff: Diff = Diff.MIRROR
    #: How a reconnect rebuilds (docs/model.md, "Reconnect"); the defaults are the
    #: one-step rebuild that re-sends every awaited op.
    reconnect_resends: ReconnectResends = ReconnectResends.AWAITED
    reconnect_mirror: ReconnectMirror = ReconnectMirror.AT_ONCE
    reconnect_lock: ReconnectLock = ReconnectLock.NONE
    rebuilds: Rebuilds = Rebuilds.EVERYTHING
    #: Whether the rebuild puts back a generation's messages before it ends.
    open_messages: OpenMessages = OpenMessages.REBUILT
    #: What a push does between the drop and the session giving the connection up.
    drop_window: DropWindow = DropWindow.NONE
    #: What the rebuild sends when ops queued in the drop window wait behind it.
    window_rebuild: WindowRebuild = WindowRebuild.MIRROR_THEN_QUEUE
    orphan_outputs: OrphanOutputs = OrphanOutputs.UNCHECKED
    #: Where an announced item with an anchor the mirror lacks goes (`UnknownAnchor`).
    unknown_anchor: UnknownAnchor = UnknownAnchor.TAIL
    #: Whether a duplicate-id refusal ends its push's wait (`DuplicateRejection`).
    duplicate_rejection: DuplicateRejection = DuplicateRejection.SETTLES
    #: Where the real code is (release, file), for readers.
    source: str = ""
    #: The classes of items whose deletes the session withholds; none by default.
    withheld_deletes: tuple[Withheld, ...] = ()
    #: Under which id a model-created function call reaches the local context.
    call_ids: CallIds = CallIds.SERVER
    #: What the agent's handler does with an announced item (`RemoteItemAdded`).
    remote_item_added: RemoteItemAdded = RemoteItemAdded.IGNORED
    #: What the local context holds after the start's items beyond the model (`LocalTail`).
    local_tail: LocalTail = LocalTail.NONE
    #: When an interrupted generation ends (`InterruptionEnd`).
    interruption_end: InterruptionEnd = InterruptionEnd.AT_ONCE
    #: How the server's completion of a model-created item travels (`CompletionChannel`).
    completion_channel: CompletionChannel = CompletionChannel.APART

    @property
    def locks_across_acks(self) -> bool:
        """Whether a push holds the session lock from its diff to its last ack."""
        return self.session_lock is SessionLock.ACROSS_ACKS

    @property
    def waits_for_acks(self) -> bool:
        """Whether a push waits for its acks before it returns."""
        return self.acks is Acks.AWAITED

    @property
    def sends_deletes(self) -> bool:
        """Whether a push sends deletes at all."""
        return self.sends is Sends.CREATES_AND_DELETES

    @property
    def reconnects(self) -> bool:
        """Whether the `reconnects` environment option applies to this shape."""
        return self.on_reconnect is OnReconnect.REBUILD_FROM_MIRROR

    def inert_options(self) -> tuple[tuple[str, str], ...]:
        """The environment options this shape gives nothing to do, each with why:
        a verdict under them says the option does not apply rather than that it holds."""
        inert = []
        if not self.waits_for_acks:
            inert.append(("timeouts", "the session waits for no acks, so none can time out"))
        if not self.reconnects:
            inert.append(("reconnects", "the session has no reconnect of its own"))
        if not self.sends_deletes:
            inert.append(
                ("stale-anchors", "the session sends no deletes, so no deleted item to anchor on")
            )
        elif (
            self.unknown_anchor is UnknownAnchor.TAIL
            and self.mirror_update is MirrorUpdate.ON_EVENTS
            and self.model_items is ModelItems.AS_EVENTS
        ):
            inert.append(
                (
                    "stale-anchors",
                    "an item with an unknown anchor goes to the mirror's tail, where the "
                    "announcement naming the server's last item puts it too",
                )
            )
        return tuple(inert)


SHAPES: tuple[SessionShape, ...] = (
    SessionShape(
        name="openai",
        summary="livekit 1.8.9 OpenAI realtime: mirror on item events, lock across acks",
        mirror_update=MirrorUpdate.ON_EVENTS,
        sends=Sends.CREATES_AND_DELETES,
        session_lock=SessionLock.ACROSS_ACKS,
        acks=Acks.AWAITED,
        model_items=ModelItems.AS_EVENTS,
        while_disconnected=WhileDisconnected.NONE,
        on_reconnect=OnReconnect.REBUILD_FROM_MIRROR,
        # _reconnect (:985-1052): the record of sent ops is the current push's
        # (:1514-1515, :1540-1541); no lock is taken. The release empties the mirror
        # (:1011): that is `openai-reconnect` below, kept out of the verify grid for
        # its cost (docs/model.md, "Reconnect"); here the rebuild is one step
        reconnect_resends=ReconnectResends.CURRENT_PUSH,
        reconnect_mirror=ReconnectMirror.AT_ONCE,
        reconnect_lock=ReconnectLock.NONE,
        rebuilds=Rebuilds.EVERYTHING,
        # livekit/agents #6964, in livekit-plugins-openai 1.7.1 on (model.cases, case 3)
        unknown_anchor=UnknownAnchor.TAIL,
        duplicate_rejection=DuplicateRejection.SETTLES,
        source="livekit-agents 1.8.9 livekit/agents/llm/_realtime/openai.py",
    ),
    SessionShape(
        name="duplex",
        summary="livekit 1.8.9 duplex adapter over an _append_items that never yields "
        "(GPT Live): diff, append and mirror set in one step",
        mirror_update=MirrorUpdate.AT_SEND,
        sends=Sends.CREATES_ONLY,
        session_lock=SessionLock.NONE,
        acks=Acks.NOT_AWAITED,
        model_items=ModelItems.BY_SESSION,
        while_disconnected=WhileDisconnected.NONE,
        on_reconnect=OnReconnect.NONE,
        source="livekit-agents 1.8.9 livekit/agents/llm/duplex_adapter.py",
    ),
    SessionShape(
        name="duplex-await",
        summary="livekit 1.8.9 duplex adapter over an _append_items that awaits: the mirror "
        "is set when the append returns",
        mirror_update=MirrorUpdate.ON_RETURN,
        sends=Sends.CREATES_ONLY,
        session_lock=SessionLock.NONE,
        acks=Acks.NOT_AWAITED,
        model_items=ModelItems.BY_SESSION,
        while_disconnected=WhileDisconnected.NONE,
        on_reconnect=OnReconnect.NONE,
        source="livekit-agents 1.8.9 livekit/agents/llm/duplex_adapter.py",
    ),
    SessionShape(
        name="gemini",
        summary="livekit-plugins-google 1.8.9 Gemini Live: queued appends, mirror set to the "
        "request, request kept back while no session is active",
        mirror_update=MirrorUpdate.AT_SEND,
        sends=Sends.CREATES_ONLY,
        session_lock=SessionLock.AROUND_CHECK,
        acks=Acks.NOT_AWAITED,
        model_items=ModelItems.BY_SESSION,
        while_disconnected=WhileDisconnected.KEPT_BACK,
        on_reconnect=OnReconnect.REBUILD_FROM_MIRROR,
        # the receive loop's failure gives the session a fresh send queue (:603,
        # :1270-1274) while _active_session stays set until _close_active_session
        # (:580-588): a push in between queues on it, and the next connection sends
        # the queue after its rebuild from the known state (:997-1038, :1131)
        drop_window=DropWindow.QUEUED,
        window_rebuild=WindowRebuild.MIRROR_THEN_QUEUE,
        source="livekit-plugins-google 1.8.9 livekit/plugins/google/realtime/realtime_api.py",
    ),
    SessionShape(
        name="three-way",
        summary="ackguard's three-way session: expected view, requests with a base, no lock",
        mirror_update=MirrorUpdate.ON_EVENTS,
        sends=Sends.CREATES_AND_DELETES,
        session_lock=SessionLock.NONE,
        acks=Acks.AWAITED,
        model_items=ModelItems.AS_EVENTS,
        while_disconnected=WhileDisconnected.NONE,
        on_reconnect=OnReconnect.NONE,
        diff=Diff.THREE_WAY,
        source="ackguard impl/three_way.py",
    ),
)

#: livekit 1.8.9's OpenAI session with its reconnect as released: the mirror is
#: emptied and fills again from the replay's added events. Not paired with the
#: variants in the verify grid (its state space under `all` is a hundred times
#: the one-step rebuild's); the casebook and the reconnect tests explore it.
OPENAI_RECONNECT = attrs.evolve(
    SHAPES[0],
    name="openai-reconnect",
    summary="livekit 1.8.9 OpenAI realtime, its reconnect as released: the mirror empties "
    "and refills from the replay's added events",
    reconnect_mirror=ReconnectMirror.EMPTIED,
    # between the socket's close and the cancel of the old send task (:1321) the send
    # task takes a push's events off the channel; send_str fails on the closed socket,
    # the error is logged (:1170) and the event is not recorded (:1164-1165)
    drop_window=DropWindow.UNRECORDED,
    # `conversation.item.added` brings a generated message with no content, and only
    # `response.done` fills it (:2309-2313); the rebuild excludes empty messages (:1006)
    open_messages=OpenMessages.LEFT_OUT,
)

#: Every shape by name: the catalog's, and the released reconnect's record.
SHAPES_BY_NAME: dict[str, SessionShape] = {
    shape.name: shape for shape in (*SHAPES, OPENAI_RECONNECT)
}
