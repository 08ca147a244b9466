"""The casebook as data: real reports of this bug class, each a scenario, the
configuration before the fix, and each proposed fix as another configuration.

A case is written with records only (a variant, a session shape, an environment,
a scenario); no model code is written per case, so the next report is one more
record (docs/casebook.md, "Adding a report"). `proofs.engines.casebook` judges each
configuration with the explorer and compares the result with what the record
expects.
"""

from __future__ import annotations

from attrs import evolve, frozen

from model.environment import BASE, Environment
from model.scenarios import Call, ItemKind, Scenario, validate
from model.shapes import (
    SHAPES_BY_NAME,
    CallIds,
    DropWindow,
    DuplicateRejection,
    OrphanOutputs,
    Rebuilds,
    ReconnectMirror,
    ReconnectResends,
    SessionShape,
    UnknownAnchor,
    Withheld,
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
    #: What the real release did with the case's counterexample, and the test that
    #: shows it (empty: not run on real code).
    confirmed: str = ""

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


_INV = (
    Invariant.NO_UNINTENDED_DELETE,
    Invariant.AGREEMENT_AT_REST,
    Invariant.MIRROR_TRUE_AT_REST,
    Invariant.NOTHING_TWICE,
    Invariant.REMOVED_AT_REST,
)
_NO_DELETE = Invariant.NO_UNINTENDED_DELETE
_AGREE = Invariant.AGREEMENT_AT_REST
_REMOVED = Invariant.REMOVED_AT_REST
_SERVER = Environment(server_items=True)
_SERVER_STALE = Environment(server_items=True, stale_copies=True)
_REJECT = Environment(rejections=True)

#: The OpenAI realtime session of livekit-plugins-openai 1.4.2: deletes of empty
#: messages withheld, and the function call handed to the agent under a fresh id.
OPENAI_142 = evolve(
    SHAPES_BY_NAME["openai"],
    name="openai-1.4.2",
    summary="livekit-plugins-openai 1.4.2 OpenAI realtime: empty messages never deleted, "
    "function calls reach the agent under a fresh id",
    source="livekit-plugins-openai 1.4.2 livekit/plugins/openai/realtime/realtime_model.py",
    withheld_deletes=(Withheld.EMPTY_MESSAGES,),
    call_ids=CallIds.FRESH,
)
#: The same session after livekit/agents #4876 (livekit-plugins-openai 1.4.4 has it).
OPENAI_144 = evolve(
    OPENAI_142,
    name="openai-1.4.4",
    summary="livekit-plugins-openai 1.4.4 OpenAI realtime: function calls keep the server's id",
    source="livekit-plugins-openai 1.4.4 livekit/plugins/openai/realtime/realtime_model.py",
    call_ids=CallIds.SERVER,
)
#: Either proposal for #4960 on top of #4876 (both branches had it): deletes of
#: model-created function calls the agent has not learned are withheld too.
OPENAI_INFLIGHT = evolve(
    OPENAI_144,
    name="openai-withheld-calls",
    summary="#4960 / #5021: no delete for a model-created function call not yet dispatched",
    source="livekit/agents #4960, #5021 (closed unmerged)",
    withheld_deletes=(Withheld.EMPTY_MESSAGES, Withheld.UNLEARNED_CALLS),
)
#: The session after livekit/agents #5887: a trimmed empty message is deleted.
OPENAI_5887 = evolve(
    OPENAI_144,
    name="openai-deletes-empty",
    summary="after #5887: removals are sent whatever the item's content",
    source="livekit-plugins-openai 1.6.5 (the first with #5887); livekit-agents 1.8.9 "
    "livekit/agents/llm/_realtime/openai.py",
    withheld_deletes=(),
)

CASE_4960 = Case(
    name="livekit-agents-4960",
    title="A summarisation deletes the function call the model is still making",
    reports=(
        "https://github.com/livekit/agents/pull/4960",
        "https://github.com/livekit/agents/pull/5021",
    ),
    summary="The model creates a function call; the server's item event puts it in the "
    "session's mirror at once, but the agent's own context gets it only when the tool "
    "starts to run. An application that replaces the context in between (to summarise "
    "old turns) pushes a context without the call, and the session's diff deletes it; "
    "items anchored on it later fail with previous_item_id not found. Both proposals "
    "keep such a call's delete back until the call reaches the agent: #4960 with a set "
    "of in-flight ids, #5021 with a flag on the call. Neither was merged.",
    scenario=Scenario(
        name="livekit-agents-4960",
        summary="a summarising replacement while the model creates a function call",
        calls=(Call("replacement", adds=("summary1",), drops=("msg0",)),),
        server=("msg0",),
        server_pool=("call1",),
        environment=_SERVER,
        kinds=(("call1", ItemKind.FUNCTION_CALL),),
        seed_finding="the replacement deletes call1, which the agent has not learned yet",
    ),
    before=Fix(
        name="before",
        confirmed=(
            "livekit-agents 1.4.2's own mirror, function-call handler and diff send the "
            "model's ops: the delete of call1 (tests/livekit/test_cases_real_a.py)"
        ),
        summary="livekit 1.4.2: every removal of a non-empty item is sent",
        variant="unlocked",
        shape=OPENAI_142,
        release="livekit-agents==1.4.2",
        fails=(
            Expected(
                _NO_DELETE, _SERVER, "the replacement's diff deletes call1 before the agent has it"
            ),
            Expected(
                _AGREE,
                _SERVER,
                "call1, deleted by the replacement, reaches the agent when the tool starts "
                "and is never on the server again",
            ),
        ),
    ),
    fixes=(
        Fix(
            name="pr-4960",
            summary="a set of in-flight function-call ids whose deletes are skipped",
            variant="unlocked",
            shape=evolve(OPENAI_INFLIGHT, name="openai-pr-4960"),
            link="https://github.com/livekit/agents/pull/4960",
            status="closed unmerged",
            fails=(
                Expected(
                    _NO_DELETE,
                    _SERVER_STALE,
                    "a copy taken before the tool started is pushed after: call1 is no longer "
                    "in flight, so its delete is sent",
                ),
            ),
        ),
        Fix(
            name="pr-5021",
            summary="a dispatched flag on each server-created call; undispatched ones are kept",
            variant="unlocked",
            shape=evolve(OPENAI_INFLIGHT, name="openai-pr-5021"),
            link="https://github.com/livekit/agents/pull/5021",
            status="closed unmerged",
            fails=(
                Expected(
                    _NO_DELETE,
                    _SERVER_STALE,
                    "a copy taken before dispatch is pushed after it: the flag no longer "
                    "protects call1",
                ),
            ),
        ),
    ),
    invariants=_INV,
    environments=(_SERVER, _SERVER_STALE),
)

CASE_4876 = Case(
    name="livekit-agents-4876",
    title="The function call handed to the agent gets a fresh id",
    reports=("https://github.com/livekit/agents/pull/4876",),
    summary="The OpenAI session passed each function call to the agent as a new object "
    "without the server's item id, so the agent's context and the session's mirror knew "
    "the same call under two ids. Every push of the agent's context then diffed as "
    "'delete the server's call, create a new one'. The fix passes the server's id on. "
    "It leaves the window of livekit-agents-4960 open: before the tool starts the agent "
    "does not have the call at all.",
    scenario=Scenario(
        name="livekit-agents-4876",
        summary="the application pushes its context while the model makes a function call",
        calls=(Call("replacement"),),
        server=("msg0",),
        server_pool=("call1",),
        environment=_SERVER,
        kinds=(("call1", ItemKind.FUNCTION_CALL),),
        seed_finding="the push deletes the server's call1 and creates call1-local",
    ),
    before=Fix(
        name="before",
        confirmed=(
            "livekit-agents 1.4.2 deletes call1 and creates it again under a fresh id "
            "(tests/livekit/test_cases_real_a.py)"
        ),
        summary="livekit 1.4.2: the call reaches the agent under a fresh id",
        variant="unlocked",
        shape=OPENAI_142,
        release="livekit-agents==1.4.2",
        fails=(
            Expected(
                _NO_DELETE,
                _SERVER,
                "the push deletes call1: before the tool starts the agent lacks it, after "
                "it the agent holds it as call1-local",
            ),
            Expected(_AGREE, _SERVER, "call1 is deleted and the agent's call1-local never sent"),
        ),
    ),
    fixes=(
        Fix(
            name="pr-4876",
            confirmed=(
                "livekit-agents 1.4.4, the first release with the fix, and 1.6.5 and 1.8.9 "
                "after it: the call keeps its id and the push sends nothing; a push before "
                "the tool starts still deletes call1 (tests/livekit/test_cases_real_a.py)"
            ),
            summary="the function call keeps the server's item id",
            variant="unlocked",
            shape=OPENAI_144,
            link="https://github.com/livekit/agents/pull/4876",
            status="merged",
            release="livekit-agents==1.4.4",
            fails=(
                Expected(
                    _NO_DELETE,
                    _SERVER,
                    "left open: a push before the tool starts still deletes call1 "
                    "(livekit-agents-4960)",
                ),
                Expected(_AGREE, _SERVER, "left open: call1, deleted in that window, stays lost"),
            ),
        ),
        # the two below close case 1's window with #4960's withheld deletes, so that what
        # is left is this report's mechanism alone: the fresh id fails, the server's holds
        Fix(
            name="before+pr-4960",
            summary="1.4.2 with case 1's window closed (#4960's withheld deletes): the "
            "fresh id alone",
            variant="unlocked",
            shape=evolve(
                OPENAI_142,
                name="openai-1.4.2-withheld",
                withheld_deletes=(Withheld.UNLEARNED_CALLS,),
            ),
            link="https://github.com/livekit/agents/pull/4960",
            status="proposal",
            fails=(
                Expected(
                    _NO_DELETE,
                    _SERVER,
                    "once the agent learns the call as call1-local, its push deletes call1",
                ),
            ),
        ),
        Fix(
            name="pr-4876+pr-4960",
            summary="the server's id and #4960's withheld deletes: nothing left to lose here",
            variant="unlocked",
            shape=evolve(
                OPENAI_144,
                name="openai-1.4.4-withheld",
                withheld_deletes=(Withheld.UNLEARNED_CALLS,),
            ),
            link="https://github.com/livekit/agents/pull/4876",
            status="proposal",
        ),
    ),
    invariants=_INV,
    environments=(_SERVER,),
)

CASE_5886 = Case(
    name="livekit-agents-5886",
    title="Trimmed user audio turns are never deleted",
    reports=("https://github.com/livekit/agents/issues/5886",),
    summary="The OpenAI session skipped the delete of any message whose content was "
    "empty, to spare items whose audio or image content the agent's copy lacks. Without "
    "input transcription every user audio turn is such a message, so an application "
    "that trims its context every turn never shrinks the server's: the conversation "
    "grows without bound. The fix (#5887) deletes what the application trimmed. The "
    "guard's own purpose shows under server-items: a user turn the server made, which "
    "the agent has not learned yet, is now deleted by a replacement.",
    scenario=Scenario(
        name="livekit-agents-5886",
        summary="the application trims a user audio turn that has no transcript",
        calls=(Call("replacement", drops=("audio1",)),),
        server=("msg0", "audio1"),
        server_pool=("audio2",),
        kinds=(("audio1", ItemKind.EMPTY_MESSAGE), ("audio2", ItemKind.EMPTY_MESSAGE)),
        seed_finding="the delete of audio1 is skipped and it stays on the server",
    ),
    before=Fix(
        name="before",
        confirmed=(
            "livekit-agents 1.4.2 sends no delete for the trimmed empty user turn "
            "(tests/livekit/test_cases_real_a.py)"
        ),
        summary="livekit 1.4.2: deletes of empty messages are skipped",
        variant="unlocked",
        shape=OPENAI_142,
        release="livekit-agents==1.4.2",
        fails=(Expected(_REMOVED, BASE, "the trim's delete of audio1 is withheld"),),
    ),
    fixes=(
        Fix(
            name="pr-5887",
            confirmed=(
                "livekit-agents 1.6.5, the first release with the fix, and 1.8.9 send the "
                "delete; 1.4.4, which has #4876 but not this fix, still withholds it "
                "(tests/livekit/test_cases_real_a.py)"
            ),
            summary="delete what the application trimmed, even with empty content",
            variant="unlocked",
            shape=OPENAI_5887,
            link="https://github.com/livekit/agents/pull/5887",
            status="merged",
            release="livekit-agents==1.6.5",
            fails=(
                Expected(
                    _NO_DELETE,
                    _SERVER,
                    "opened: a replacement deletes a user turn the server made that the "
                    "agent has not learned",
                ),
                Expected(_AGREE, _SERVER, "that turn, learned later, is off the server"),
                Expected(
                    _REMOVED, _REJECT, "the server rejects the delete and nothing sends it again"
                ),
            ),
        ),
    ),
    invariants=_INV,
    environments=(BASE, _SERVER, _REJECT),
)

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
    return evolve(
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
        confirmed=(
            "livekit-plugins-openai 1.6.8 over the gated socket, move by move: the mirror "
            "lacks asst1, the duplicate refusal arrives, the push still waits "
            "(tests/livekit/test_cases_real_b.py)"
        ),
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
            confirmed=(
                "livekit-plugins-openai 1.6.9: the mirror still lacks asst1; the refusal ends "
                "the push's wait (tests/livekit/test_cases_real_b.py)"
            ),
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
            confirmed=(
                "livekit-plugins-openai 1.7.1 and 1.8.9: nothing lost, the mirror in the "
                "server's order (tests/livekit/test_cases_real_b.py)"
            ),
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


# -- case 5: livekit/agents-js #1843 -------------------------------------------

_JS_SOURCE = "@livekit/agents-plugin-openai 1.7.0 plugins/openai/src/realtime/realtime_model.ts"

#: agents-js before #1843: the reconnect rejects the acks still awaited (:1155-1164),
#: empties the mirror (:1192) and rebuilds it without function calls and their
#: outputs (:1185-1189); the OpenAI server refuses an output whose call it lacks.
_JS_BEFORE = evolve(
    SHAPES_BY_NAME["openai-reconnect"],
    name="agents-js",
    summary="agents-js OpenAI realtime: the rebuild leaves out function calls and outputs",
    reconnect_resends=ReconnectResends.NONE,
    reconnect_mirror=ReconnectMirror.EMPTIED,
    rebuilds=Rebuilds.NO_FUNCTION_ITEMS,
    orphan_outputs=OrphanOutputs.REFUSED,
    # agents-js's send loop is not this record's: its pushes come after the connect
    # (the window of livekit's Python send task, `DropWindow.UNRECORDED`, is not read
    # into it; the loss of the first event after a reconnect is noted in the casebook)
    drop_window=DropWindow.NONE,
    source=_JS_SOURCE,
)

#: #1843 (open, not merged): a tool output whose function call is not in the
#: session's context is dropped before the push, and left out of the agent's history
#: too. No release has it: agents-js main (read 2026-08-21) and every npm release of
#: @livekit/agents up to 1.9.0 lack its filter (filterFunctionCallOutputsForRealtimeSession).
_JS_1843 = evolve(
    _JS_BEFORE,
    name="agents-js-1843",
    summary="agents-js with #1843: orphaned tool outputs dropped before the push",
    orphan_outputs=OrphanOutputs.DROPPED,
)

#: livekit-agents 1.8.9 (Python): the rebuild keeps every item, function calls too
#: (`_reconnect`, llm/_realtime/openai.py :1004-1009); the server refuses orphans.
_PYTHON = evolve(
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
        confirmed=(
            "@livekit/agents-plugin-openai 1.7.0 with @livekit/agents 1.7.0, under node over "
            "the gated socket, move by move: the rebuild leaves call1 off the new server, "
            "out1 is sent and refused, and call1 is lost under agreement-at-rest as in the "
            "model; the first client event after the reconnect is never sent "
            "(tests/livekit/test_cases_real_js.py)"
        ),
        summary="agents-js: rebuild without function items; the orphaned output is sent "
        "and refused",
        variant="unlocked",
        shape=_JS_BEFORE,
        link="https://github.com/livekit/agents-js/blob/main/plugins/openai/src/realtime/"
        "realtime_model.ts",
        # the plugin's reconnect copies its context with excludeFunctionCall, and
        # @livekit/agents 1.7.0 pushes tool outputs with no orphan filter; replayed on
        # both under node (proofs/adapters/livekit/cases_js.py)
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
            # no release: not merged, and no @livekit/agents on npm up to 1.9.0 has it
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
            confirmed=(
                "livekit-agents 1.8.9's plugin over the gated socket: its rebuild re-creates the "
                "function call, and a second drop inside the rebuild window loses msg0 "
                "(tests/livekit/test_reconnect_real.py)"
            ),
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
CASES: tuple[Case, ...] = (CASE_4960, CASE_4876, CASE_6964, CASE_5886, CASE_AGENTS_JS_1843)

for _case in CASES:
    validate(_case.scenario)

CASES_BY_NAME: dict[str, Case] = {case.name: case for case in CASES}
