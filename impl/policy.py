"""Which variant of the fix the activity runs, chosen by name.

The sites are data here as in the model (`model/sites.py`; the conformance tests
check that the two tables agree), so that one activity runs every variant: a
policy says which sites hold the activity lock, which sites change the local
context at another moment than the real code does, and which session diffs.
"""

from __future__ import annotations

import enum

from attrs import frozen


class RequestSource(enum.Enum):
    #: A private copy of the mirror taken once the activity lock is held, plus the call's items.
    MIRROR_SNAPSHOT = "mirror-snapshot"
    #: The live local context object itself, read when the session diffs.
    LOCAL_CONTEXT = "local-context"
    #: The application's own copy of the local context, edited; it becomes the live one.
    CALLER_COPY = "caller-copy"


class LocalUpdate(enum.Enum):
    BEFORE_PUSH = "before"
    AFTER_PUSH = "after"
    REPLACE = "replace"
    NONE = "none"


class SessionKind(enum.Enum):
    MIRROR_DIFF = "mirror-diff"
    THREE_WAY = "three-way"


@frozen
class SiteSpec:
    name: str
    request: RequestSource
    local_update: LocalUpdate


SITES: dict[str, SiteSpec] = {
    spec.name: spec
    for spec in (
        SiteSpec("user-turn", RequestSource.MIRROR_SNAPSHOT, LocalUpdate.AFTER_PUSH),
        SiteSpec("tool-outputs", RequestSource.MIRROR_SNAPSHOT, LocalUpdate.BEFORE_PUSH),
        SiteSpec(
            "interrupted-tool-outputs", RequestSource.MIRROR_SNAPSHOT, LocalUpdate.BEFORE_PUSH
        ),
        SiteSpec("replacement", RequestSource.CALLER_COPY, LocalUpdate.REPLACE),
        SiteSpec("cleanup", RequestSource.LOCAL_CONTEXT, LocalUpdate.BEFORE_PUSH),
        SiteSpec("spoken-message", RequestSource.MIRROR_SNAPSHOT, LocalUpdate.BEFORE_PUSH),
    )
}

FIVE_SITES = frozenset(
    {"user-turn", "tool-outputs", "interrupted-tool-outputs", "replacement", "cleanup"}
)
THREE_SNAPSHOT_SITES = frozenset({"user-turn", "tool-outputs", "interrupted-tool-outputs"})


@frozen
class Policy:
    name: str
    locked_sites: frozenset[str]
    session: SessionKind = SessionKind.MIRROR_DIFF
    local_update_overrides: tuple[tuple[str, LocalUpdate], ...] = ()

    def locks(self, site: str) -> bool:
        """Whether `site` holds the activity lock across snapshot, push and acks."""
        return self.session is SessionKind.MIRROR_DIFF and site in self.locked_sites

    def local_update(self, site: str) -> LocalUpdate:
        for name, update in self.local_update_overrides:
            if name == site:
                return update
        return SITES[site].local_update


POLICIES: dict[str, Policy] = {
    policy.name: policy
    for policy in (
        Policy("unlocked", frozenset()),
        Policy("lock3", THREE_SNAPSHOT_SITES),
        Policy("lock5", FIVE_SITES),
        Policy(
            "lock5-hoisted",
            FIVE_SITES,
            local_update_overrides=(("user-turn", LocalUpdate.BEFORE_PUSH),),
        ),
        Policy("three-way", frozenset(), session=SessionKind.THREE_WAY),
    )
}

#: The fixed variant (livekit-agents 1.8.9): all five sites lock.
DEFAULT_POLICY = POLICIES["lock5"]


def policy(name: str) -> Policy:
    try:
        return POLICIES[name]
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; choose from: {', '.join(POLICIES)}") from None
