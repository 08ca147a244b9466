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

from model.environment import BASE, Environment
from model.scenarios import Call, ItemKind, Scenario
from model.shapes import (
    SHAPES_BY_NAME,
    OrphanOutputs,
    Rebuilds,
    ReconnectMirror,
    ReconnectResends,
    SessionShape,
)
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


# -- case 5: livekit/agents-js #1843 -------------------------------------------

_JS_SOURCE = "@livekit/agents-plugin-openai 1.7.0 plugins/openai/src/realtime/realtime_model.ts"

#: agents-js before #1843: the reconnect rejects the acks still awaited (:1155-1164),
#: empties the mirror (:1192) and rebuilds it without function calls and their
#: outputs (:1185-1189); the OpenAI server refuses an output whose call it lacks.
_JS_BEFORE = attrs.evolve(
    SHAPES_BY_NAME["openai-reconnect"],
    name="agents-js",
    summary="agents-js OpenAI realtime: the rebuild leaves out function calls and outputs",
    reconnect_resends=ReconnectResends.NONE,
    reconnect_mirror=ReconnectMirror.EMPTIED,
    rebuilds=Rebuilds.NO_FUNCTION_ITEMS,
    orphan_outputs=OrphanOutputs.REFUSED,
    source=_JS_SOURCE,
)

#: #1843 (open): a tool output whose function call is not in the session's
#: context is dropped before the push, and left out of the agent's history too.
_JS_1843 = attrs.evolve(
    _JS_BEFORE,
    name="agents-js-1843",
    summary="agents-js with #1843: orphaned tool outputs dropped before the push",
    orphan_outputs=OrphanOutputs.DROPPED,
)

#: livekit-agents 1.8.9 (Python): the rebuild keeps every item, function calls too
#: (`_reconnect`, llm/_realtime/openai.py :1004-1009); the server refuses orphans.
_PYTHON = attrs.evolve(
    SHAPES_BY_NAME["openai-reconnect"],
    name="openai-orphans-refused",
    orphan_outputs=OrphanOutputs.REFUSED,
)

_RECONNECTS = Environment(reconnects=True)
_SECOND_DROP = (
    "a second drop before the rebuild's added events arrive: the mirror is still empty, "
    "so the next rebuild leaves msg0 (and every other item) off the server"
)

CASE_AGENTS_JS_1843 = Case(
    name="agents-js-1843",
    title="A tool output after a reconnect has no function call to answer",
    reports=("https://github.com/livekit/agents-js/pull/1843",),
    summary=(
        "agents-js rebuilds the server conversation after a reconnect from its mirror "
        "without function calls and their outputs. A tool that returns after the "
        "reconnect pushes its output, whose function call the new server session never "
        "saw, and the server refuses it. The proposed fix checks the session's context "
        "first and drops an output whose call is not there, from the push and from the "
        "agent's history. The function call and its result are then gone from the model's "
        "context either way; the Python SDK's 1.8.9 rebuild keeps function calls, so "
        "no output is orphaned there."
    ),
    scenario=Scenario(
        name="agents-js-1843",
        summary="a tool output pushed while the connection drops and a rebuild leaves out "
        "the function call it answers",
        calls=(Call("tool-outputs", adds=("out1",)),),
        server=("msg0", "call1"),
        kinds=(("call1", ItemKind.FUNCTION_CALL), ("out1", ItemKind.FUNCTION_OUTPUT)),
        environment=_RECONNECTS,
        seed_finding="the rebuild drops call1; the server refuses out1, or the fix drops it",
    ),
    before=Fix(
        name="before",
        summary="agents-js: rebuild without function items; the orphaned output is sent "
        "and refused",
        variant="unlocked",
        shape=_JS_BEFORE,
        link="https://github.com/livekit/agents-js/blob/main/plugins/openai/src/realtime/"
        "realtime_model.ts",
        # read in the published packages (excludeFunctionCall in the plugin's reconnect,
        # no orphan filter in @livekit/agents 1.7.0); not replayed against node
        release="@livekit/agents-plugin-openai==1.7.0",
        fails=(
            Expected(
                Invariant.AGREEMENT_AT_REST,
                _RECONNECTS,
                "the rebuild leaves call1 off the new server while the local context holds "
                "it; out1, refused for want of its call, is lost too",
            ),
        ),
    ),
    fixes=(
        Fix(
            name="pr-1843",
            summary="drop a tool output whose function call the session does not hold",
            variant="unlocked",
            shape=_JS_1843,
            link="https://github.com/livekit/agents-js/pull/1843",
            status="proposal",
            release="",
            fails=(
                Expected(
                    Invariant.AGREEMENT_AT_REST,
                    _RECONNECTS,
                    "call1 is still left off the new server; out1 is no loss under 2(a) "
                    "only because the local context never holds it",
                ),
            ),
        ),
        Fix(
            name="python",
            summary="the Python SDK as released (livekit-agents 1.8.9): the rebuild keeps "
            "function calls, so no output is orphaned",
            variant="lock5",
            shape=_PYTHON,
            link="https://github.com/livekit/agents",
            status="merged",
            release="livekit-agents==1.8.9",
            fails=(Expected(Invariant.AGREEMENT_AT_REST, _RECONNECTS, _SECOND_DROP),),
        ),
    ),
    invariants=(
        Invariant.NO_UNINTENDED_DELETE,
        Invariant.AGREEMENT_AT_REST,
        Invariant.MIRROR_TRUE_AT_REST,
    ),
    environments=(BASE, _RECONNECTS),
)

#: The catalog of cases, in the order of docs/casebook.md.
CASES: tuple[Case, ...] = (CASE_AGENTS_JS_1843,)

CASES_BY_NAME: dict[str, Case] = {case.name: case for case in CASES}
