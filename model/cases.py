"""The casebook as data: real reports of this bug class, each a scenario, the
configuration before the fix, and each proposed fix as another configuration.

A case is written with records only (a variant, a session shape, an environment,
a scenario); no model code is written per case, so the next report is one more
record (docs/casebook.md, "Adding a report"). `proofs.engines.casebook` judges each
configuration with the explorer and compares the result with what the record
expects.
"""

from __future__ import annotations

import attrs
from attrs import frozen

from model.environment import Environment
from model.scenarios import Call, Scenario, validate
from model.shapes import SHAPES_BY_NAME, DuplicateRejection, SessionShape, UnknownAnchor
from model.variants import Invariant


@frozen
class Expected:
    """One (invariant, environment) cell a configuration is expected to fail;
    every other cell of its case is expected to hold."""

    invariant: Invariant
    environment: Environment
    #: Why, in one line of our own words (shown beside the counterexample).
    why: str = ""


@frozen
class Fix:
    """One configuration of a case: before any fix, a merged fix, or a proposal."""

    #: "before", or the change's short name, e.g. "pr-4960".
    name: str
    #: One line, our own words.
    summary: str
    #: The agent-side variant (a name in `model.VARIANTS_BY_NAME`).
    variant: str
    #: The provider session's shape under this configuration.
    shape: SessionShape
    #: The pull request or commit, if any.
    link: str = ""
    #: "merged", "closed unmerged", "proposal", or "" for the configuration before.
    status: str = ""
    #: The release on the package registry that has this configuration, e.g.
    #: "livekit-agents==1.2.3", or "" when none does.
    release: str = ""
    #: The cells expected to fail; any other cell is expected to hold.
    fails: tuple[Expected, ...] = ()

    def expects_failure(self, invariant: Invariant, environment: Environment) -> bool:
        """Whether the record expects (invariant, environment) to fail: a failure
        needed under a smaller environment shows under every larger one too."""
        return any(
            e.invariant is invariant and environment.covers(e.environment) for e in self.fails
        )


@frozen
class Case:
    """One report: its scenario, the configuration before, and every fix."""

    #: The report's short name, e.g. "livekit-agents-4960".
    name: str
    title: str
    #: Links to the report and its discussion.
    reports: tuple[str, ...]
    #: What happened, in our own words (a paragraph).
    summary: str
    scenario: Scenario
    before: Fix
    fixes: tuple[Fix, ...]
    #: The invariants the case is judged on.
    invariants: tuple[Invariant, ...]
    #: The environment columns every configuration is judged under.
    environments: tuple[Environment, ...]

    @property
    def configurations(self) -> tuple[Fix, ...]:
        """The configuration before, then each fix, in order."""
        return (self.before, *self.fixes)


# -- case 3: livekit/agents #6964 -------------------------------------------------

#: The replacement deletes `old1`; the model's reply `asst1` is announced after
#: `old1` (the server's tail when the reply began); the agent learns `asst1`; a
#: second replacement pushes the local context, which holds it.
SCENARIO_6964 = Scenario(
    name="livekit-agents-6964",
    summary="a replacement deletes an item; the model's next item is announced after it; "
    "a second replacement pushes the local context",
    calls=(Call("replacement", drops=("old1",)), Call("replacement")),
    server=("msg0", "old1"),
    server_pool=("asst1",),
    environment=Environment(server_items=True, stale_anchors=True),
    seed_finding="(livekit/agents #6964) the mirror drops asst1; the re-create is refused "
    "as a duplicate and, before #6729, waits out its timeout",
)
validate(SCENARIO_6964)


def _openai(
    name: str, release: str, anchor: UnknownAnchor, duplicate: DuplicateRejection
) -> SessionShape:
    """The openai shape of an older livekit-plugins-openai release: the same session
    but where an item with an unknown anchor goes and what a duplicate refusal does."""
    return attrs.evolve(
        SHAPES_BY_NAME["openai"],
        name=name,
        summary=f"livekit-plugins-openai {release} realtime: unknown anchor {anchor.value}, "
        f"duplicate refusal {duplicate.value}",
        unknown_anchor=anchor,
        duplicate_rejection=duplicate,
        source=f"livekit-plugins-openai {release} livekit/plugins/openai/realtime/"
        "realtime_model.py",
    )


_REPORT = Environment(server_items=True, stale_anchors=True)
#: Every option but the reconnect (whose rebuild the openai shape has; see docs/casebook.md).
_WIDE = Environment(
    stale_copies=True, server_items=True, timeouts=True, rejections=True, stale_anchors=True
)
_DROPPED_WHY = "the mirror dropped asst1, which the server holds"

CASE_6964 = Case(
    name="livekit-agents-6964",
    title="An item announced after a deleted item is dropped from the mirror",
    reports=("https://github.com/livekit/agents/pull/6964",),
    summary="The server can announce a new item as following an item it has just deleted: "
    "the reply was placed at the tail when it began, and the tail was deleted meanwhile. "
    "The session's mirror refused to insert an item after an anchor it no longer held, so "
    "it lost an item the server has. A later push of the local context, which holds the "
    "item, created it again; the server refused the duplicate, and the push waited for an "
    "answer that the session never matched to it until its 5 s timeout. The fix puts such "
    "an item at the mirror's tail and lets a duplicate refusal end its waiter as done.",
    scenario=SCENARIO_6964,
    before=Fix(
        name="before",
        summary="the item is dropped; no refusal reaches any waiter",
        variant="unlocked",
        shape=_openai(
            "openai-1.6.8", "1.6.8", UnknownAnchor.DROPPED, DuplicateRejection.LEFT_WAITING
        ),
        release="livekit-plugins-openai==1.6.8",
        fails=(
            Expected(Invariant.MIRROR_TRUE_AT_REST, _REPORT, _DROPPED_WHY),
            Expected(
                Invariant.NO_WAIT_ON_SETTLED,
                _REPORT,
                "the duplicate refusal of asst1's re-create reaches the session, and the push "
                "waits on",
            ),
        ),
    ),
    fixes=(
        Fix(
            name="pr-6729",
            summary="a refusal fails its own waiter by event id (as an error); the item is "
            "still dropped",
            variant="unlocked",
            shape=_openai(
                "openai-1.6.9", "1.6.9", UnknownAnchor.DROPPED, DuplicateRejection.SETTLES
            ),
            link="https://github.com/livekit/agents/pull/6729",
            status="merged",
            release="livekit-plugins-openai==1.6.9",
            fails=(Expected(Invariant.MIRROR_TRUE_AT_REST, _REPORT, _DROPPED_WHY),),
        ),
        Fix(
            name="pr-6964",
            summary="the item goes at the mirror's tail; a duplicate refusal settles as done",
            variant="unlocked",
            shape=_openai("openai-1.7.1", "1.7.1", UnknownAnchor.TAIL, DuplicateRejection.SETTLES),
            link="https://github.com/livekit/agents/pull/6964",
            status="merged",
            release="livekit-plugins-openai==1.7.1",
        ),
    ),
    invariants=(Invariant.MIRROR_TRUE_AT_REST, Invariant.NO_WAIT_ON_SETTLED),
    environments=(
        Environment(server_items=True),
        _REPORT,
        Environment(server_items=True, stale_anchors=True, timeouts=True),
        _WIDE,
    ),
)

#: The catalog of cases, in the order of docs/casebook.md.
CASES: tuple[Case, ...] = (CASE_6964,)

CASES_BY_NAME: dict[str, Case] = {case.name: case for case in CASES}
