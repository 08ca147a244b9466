"""Variants of the fix as data, each with the verdicts it is expected to get.

A variant says which sites hold the activity lock across snapshot, push and acks,
which sites change the local context at another moment than the real code does,
and which diff the provider session uses.
"""

from __future__ import annotations

import enum

from attrs import frozen

from model.environment import BASE, Environment
from model.shape_verdicts import SHAPE_FAILURES
from model.shapes import SHAPES_BY_NAME, Diff, SessionShape
from model.sites import FIVE_SITES, SITES_BY_NAME, THREE_SNAPSHOT_SITES, LocalUpdate, Site


class SessionKind(enum.Enum):
    """The diff of a variant's default session shape, as two values.

    Kept for readers that predate session shapes (`impl.policy`, the first-order
    engine); the model itself reads `model.shapes.SessionShape` fields.
    """

    #: Under its own lock: diff the request against the mirror as it is at that
    #: moment, send, and hold the lock until every op is acknowledged.
    MIRROR_DIFF = "mirror-diff"
    #: No lock: diff three ways (base, expected view, request) and return at once;
    #: the expected view is the mirror with every op in flight applied.
    THREE_WAY = "three-way"


class Invariant(enum.Enum):
    """The invariants every verdict is about (`model.invariants` states them)."""

    NO_UNINTENDED_DELETE = "no-unintended-delete"
    AGREEMENT_AT_REST = "agreement-at-rest"
    MIRROR_TRUE_AT_REST = "mirror-true-at-rest"
    NOTHING_TWICE = "nothing-twice"
    REMOVED_AT_REST = "removed-at-rest"
    NO_WAIT_ON_SETTLED = "no-wait-on-settled"


class Verdict(enum.Enum):
    """What a check of one invariant comes to: it holds, or a counterexample."""

    HOLDS = "holds"
    COUNTEREXAMPLE = "counterexample"


@frozen
class KnownFailure:
    """A scenario in which a variant breaks an invariant, and what it takes.

    The failure is expected under every environment that covers `needs`: adding
    environment options only adds behaviours.
    """

    scenario: str
    invariant: Invariant
    needs: Environment = BASE
    why: str = ""
    #: The session shape it is found under (`model.shapes`).
    shape: str = "openai"
    #: "confirmed" when reproduced on the real class, else "model only".
    confirmed: str = "model only"


@frozen
class Variant:
    """A configuration of the fix as data, so the model never branches on its name
    and a new variant is one more record."""

    name: str
    summary: str
    locked_sites: frozenset[str]
    #: The session shape a configuration of this variant has unless told otherwise.
    shape: str = "openai"
    #: The shapes it makes sense with: the agent-side locking variants go with any
    #: real session; the three-way variant is the three-way session shape.
    shapes: tuple[str, ...] = ("openai", "duplex", "duplex-await", "gemini")
    #: (site name, local update) pairs that replace the site's own timing.
    local_update_overrides: tuple[tuple[str, LocalUpdate], ...] = ()
    known_failures: tuple[KnownFailure, ...] = ()

    @property
    def session(self) -> SessionKind:
        """The diff of the default shape, for readers that predate shapes."""
        three_way = SHAPES_BY_NAME[self.shape].diff is Diff.THREE_WAY
        return SessionKind.THREE_WAY if three_way else SessionKind.MIRROR_DIFF

    def locks(self, site: Site) -> bool:
        """Whether `site` holds the activity lock."""
        return site.name in self.locked_sites

    def local_update(self, site: Site) -> LocalUpdate:
        """When `site` changes the local context: an override, else the site's own."""
        for name, update in self.local_update_overrides:
            if name == site.name:
                return update
        return site.local_update

    def expected(
        self,
        scenario: str,
        environment: Environment,
        invariant: Invariant,
        shape: str | None = None,
    ) -> Verdict:
        """The verdict the catalog expects, so a changed result shows as a surprise."""
        return (
            Verdict.COUNTEREXAMPLE
            if self.known_failure(scenario, environment, invariant, shape) is not None
            else Verdict.HOLDS
        )

    def known_failure(
        self,
        scenario: str,
        environment: Environment,
        invariant: Invariant,
        shape: str | None = None,
    ) -> KnownFailure | None:
        """The catalog's record of the failure expected there, if one is."""
        wanted = self.shape if shape is None else shape
        for failure in self.known_failures:
            if (
                failure.scenario == scenario
                and failure.invariant is invariant
                and failure.shape == wanted
                and environment.covers(failure.needs)
            ):
                return failure
        return None


_INV1 = Invariant.NO_UNINTENDED_DELETE
_INV2 = Invariant.AGREEMENT_AT_REST
_STALE = Environment(stale_copies=True)
_SERVER = Environment(server_items=True)
_TIMEOUTS = Environment(timeouts=True)

# Failures every mirror-diff variant shares, whatever it locks: a lock orders
# pushes but cannot refresh a copy that predates an item, nor teach the local
# context an item the model created server-side.
#: Without hoisting, a user turn's message reaches the local context only after
#: its push, into whichever object is live then; a replacement that waits with an
#: object orphaned by a later replacement pushes it without the message.
_LATE_UPSERT: tuple[KnownFailure, ...] = (
    KnownFailure(
        "two-replacements-during-user-turn",
        _INV1,
        BASE,
        "the first replacement's object is orphaned by the second before the user turn "
        "upserts hello, so its push deletes hello",
    ),
    KnownFailure(
        "two-replacements-during-user-turn",
        _INV2,
        BASE,
        "hello, upserted into the live context, is gone from the server",
    ),
)

_LOCK_CANNOT_FIX: tuple[KnownFailure, ...] = (
    KnownFailure(
        "two-replacements-during-user-turn",
        _INV1,
        _STALE,
        "a replacement copied before the hoisted user turn deletes hello",
    ),
    KnownFailure(
        "two-replacements-during-user-turn",
        _INV2,
        _STALE,
        "one replacement deletes hello and the other, copied after it, creates it again",
    ),
    KnownFailure(
        "stale-replacement",
        _INV1,
        _STALE,
        "the application's copy predates the user turn, so its push deletes the turn",
    ),
    KnownFailure(
        "replacement-first",
        _INV1,
        _STALE,
        "the application's copy predates the tool output, so its push deletes it",
    ),
    KnownFailure(
        "server-item-during-replacement",
        _INV1,
        _SERVER,
        "the replacement's copy never had the model's item, so its push deletes it",
    ),
    KnownFailure(
        "server-item-during-replacement",
        _INV2,
        _SERVER,
        "the model's item, deleted by the replacement, is never restored",
    ),
    KnownFailure(
        "cleanup-during-tool-push",
        _INV2,
        _TIMEOUTS,
        "the cleanup's ack times out and releases the lock while its delete is in flight; "
        "the tool push snapshots a mirror that still has the deleted item, anchors its "
        "output on it, and the server refuses the create",
    ),
    KnownFailure(
        "spoken-during-tool-push",
        _INV1,
        BASE,
        "the spoken-message site snapshots the mirror outside the activity lock",
    ),
    KnownFailure(
        "spoken-during-tool-push",
        _INV2,
        BASE,
        "the tool output deleted by the spoken-message push stays lost",
    ),
)


def _found(variant: str) -> tuple[KnownFailure, ...]:
    """The explorer's failures of `variant` under the other session shapes and the
    reconnect option (`model.shape_verdicts`), as records."""
    return tuple(
        KnownFailure(scenario, Invariant(invariant), Environment.of(needs), why, shape, confirmed)
        for name, scenario, invariant, needs, shape, why, confirmed in SHAPE_FAILURES
        if name == variant
    )


VARIANTS: tuple[Variant, ...] = (
    Variant(
        name="unlocked",
        summary="no activity lock (livekit-agents up to 1.8.8)",
        locked_sites=frozenset(),
        known_failures=(
            KnownFailure(
                "overlapping-push",
                _INV1,
                BASE,
                "the user turn snapshots the mirror while the tool push waits for its ack",
            ),
            KnownFailure("overlapping-push", _INV2, BASE, "the deleted tool output stays lost"),
            KnownFailure(
                "replacement-first",
                _INV1,
                BASE,
                "the tool push snapshots the mirror while the replacement waits for its ack",
            ),
            KnownFailure("replacement-first", _INV2, BASE, "the replacement's item stays lost"),
            KnownFailure(
                "cleanup-during-tool-push",
                _INV2,
                BASE,
                "the tool push's snapshot still has the never-played item and re-creates it",
            ),
            *_LATE_UPSERT,
            *_LOCK_CANNOT_FIX,
            *_found("unlocked"),
        ),
    ),
    Variant(
        name="lock3",
        summary="activity lock on the three snapshot sites (the seed's change)",
        locked_sites=THREE_SNAPSHOT_SITES,
        known_failures=(
            KnownFailure(
                "replacement-first",
                _INV1,
                BASE,
                "the unlocked replacement holds the provider while the tool push snapshots",
            ),
            KnownFailure("replacement-first", _INV2, BASE, "the replacement's item stays lost"),
            KnownFailure(
                "cleanup-during-tool-push",
                _INV2,
                BASE,
                "the unlocked cleanup deletes the never-played item under the tool push's "
                "snapshot, which re-creates it",
            ),
            *_LATE_UPSERT,
            *_LOCK_CANNOT_FIX,
            *_found("lock3"),
        ),
    ),
    Variant(
        name="lock5",
        summary="activity lock on all five sites (livekit-agents 1.8.9)",
        locked_sites=FIVE_SITES,
        known_failures=(*_LATE_UPSERT, *_LOCK_CANNOT_FIX, *_found("lock5")),
    ),
    Variant(
        name="lock5-hoisted",
        summary="lock5, and the user turn adds its message locally before its push",
        locked_sites=FIVE_SITES,
        local_update_overrides=(("user-turn", LocalUpdate.BEFORE_PUSH),),
        known_failures=(*_LOCK_CANNOT_FIX, *_found("lock5-hoisted")),
    ),
    Variant(
        name="three-way",
        summary="ackguard's design: expected view, requests with a base, three-way diff",
        locked_sites=frozenset(),
        shape="three-way",
        shapes=("three-way",),
        known_failures=_found("three-way"),
    ),
)

VARIANTS_BY_NAME: dict[str, Variant] = {variant.name: variant for variant in VARIANTS}


@frozen
class MovedVerdict:
    """A catalog failure that livekit's speech turn removes (`model.sites.SpeechTurn`):
    the explorer finds it on the catalog's site records, under `needs`, and not on
    `model.sites.with_speech_turn`'s, except where the environment covers `kept_by`."""

    variant: str
    shape: str
    scenario: str
    invariant: Invariant
    why: str
    #: Options under which the failure stays with the turn too (empty: none).
    kept_by: tuple[str, ...] = ()


#: Every verdict that moves when the catalog's sites wait for the speech turn, as
#: the explorer finds them over every configuration and environment of the
#: verdict table (`tests/livekit/test_speech_turn.py` checks the `openai` rows
#: there in full). The livekit checks explore with the turn, so these are the
#: verdicts that move there; the catalog's own records keep them.
MOVED_BY_SPEECH_TURN: tuple[MovedVerdict, ...] = (
    MovedVerdict(
        "unlocked",
        "openai",
        "cleanup-during-spoken",
        _INV2,
        "the cleanup holds the current speech across its push, so say() pushes after it "
        "and its snapshot no longer has the never-played item to create again",
        kept_by=("timeouts",),
    ),
    MovedVerdict(
        "unlocked",
        "openai",
        "cleanup-during-spoken",
        Invariant.REMOVED_AT_REST,
        "the cleanup holds the current speech across its push, so say() pushes after it "
        "and its snapshot no longer has the never-played item to create again",
    ),
    MovedVerdict(
        "lock5",
        "openai",
        "cleanup-during-spoken",
        _INV2,
        "the cleanup holds the current speech across its push, so say() pushes after it "
        "and its snapshot no longer has the never-played item to create again",
        kept_by=("timeouts",),
    ),
    MovedVerdict(
        "lock5",
        "openai",
        "cleanup-during-spoken",
        Invariant.REMOVED_AT_REST,
        "the cleanup holds the current speech across its push, so say() pushes after it "
        "and its snapshot no longer has the never-played item to create again",
    ),
    MovedVerdict(
        "unlocked",
        "openai",
        "cleanup-during-tool-push",
        Invariant.REMOVED_AT_REST,
        "the cleanup holds the current speech across its push, so the interrupted tool "
        "generation's snapshot no longer has the never-played item to create again",
    ),
    MovedVerdict(
        "unlocked",
        "openai",
        "cleanup-during-tool-push",
        _INV2,
        "the cleanup holds the current speech across its push, so the interrupted tool "
        "generation runs after it and its snapshot no longer has the never-played item",
        kept_by=("timeouts",),
    ),
    MovedVerdict(
        "lock3",
        "openai",
        "cleanup-during-tool-push",
        _INV2,
        "(the seed's finding) needs two interrupted generations at once; the scheduler runs "
        "them one after the other, so only a timed-out cleanup still costs the tool output",
        kept_by=("timeouts",),
    ),
    MovedVerdict(
        "unlocked",
        "duplex-await",
        "cleanup-during-tool-push",
        Invariant.NOTHING_TWICE,
        "the tool push can no longer diff while the cleanup's append awaits",
    ),
    MovedVerdict(
        "lock3",
        "duplex-await",
        "cleanup-during-tool-push",
        Invariant.NOTHING_TWICE,
        "the tool push can no longer diff while the cleanup's append awaits",
    ),
)


def _check_catalog() -> None:
    for variant in VARIANTS:
        unknown = (variant.locked_sites | {n for n, _ in variant.local_update_overrides}) - set(
            SITES_BY_NAME
        )
        if unknown:
            raise ValueError(f"variant {variant.name} names unknown sites {sorted(unknown)}")
        shapes = {variant.shape, *variant.shapes, *(f.shape for f in variant.known_failures)}
        if shapes - set(SHAPES_BY_NAME) or variant.shape not in variant.shapes:
            raise ValueError(f"variant {variant.name} names unknown or unmeant shapes")


_check_catalog()


#: Every meaningful (variant, session shape) pair, variants in catalog order.
CONFIGURATIONS: tuple[tuple[Variant, SessionShape], ...] = tuple(
    (variant, SHAPES_BY_NAME[name]) for variant in VARIANTS for name in variant.shapes
)


def configurations(
    variants: tuple[str, ...] = (), shapes: tuple[str, ...] = ()
) -> tuple[tuple[Variant, SessionShape], ...]:
    """The meaningful pairs, narrowed to the named variants and shapes (empty: all)."""
    return tuple(
        (variant, shape)
        for variant, shape in CONFIGURATIONS
        if (not variants or variant.name in variants) and (not shapes or shape.name in shapes)
    )
