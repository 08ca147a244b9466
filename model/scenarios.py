"""Named starting points: which site calls happen, on which items."""

from __future__ import annotations

import enum

from attrs import frozen

from model.environment import BASE, Environment
from model.sites import SITES_BY_NAME, RequestSource, Site


class ItemKind(enum.Enum):
    """What an item is, for the session shapes and reports that treat kinds apart
    (deletes withheld for a class of items, a rebuild that leaves some out)."""

    MESSAGE = "message"
    FUNCTION_CALL = "function-call"
    FUNCTION_OUTPUT = "function-output"
    #: A user audio turn with no transcript: its content is empty.
    EMPTY_MESSAGE = "empty-message"


@frozen
class Call:
    """One call of a site: the items it adds and the items it means to remove."""

    site: str
    adds: tuple[str, ...] = ()
    #: What the call intends to remove: for a replacement, what the caller drops
    #: from its copy; for the cleanup, the never-played items.
    drops: tuple[str, ...] = ()
    #: Whether the call's generation, where another interrupted generation ran
    #: before it, is a reply started behind that one's push on the one socket: its
    #: function call or message reaches the session only after everything the
    #: earlier call sent and was answered, so it is called only once none of that
    #: is in flight (`model.moves.behind_earlier_push`).
    behind_earlier_push: bool = False
    #: Whether the call's never-played items (its drops) are made server-side when its
    #: generation runs, in the call's own step, rather than being on the server at the
    #: start: the later of two cleanups, whose generation runs only once the earlier
    #: one's push has returned (`model.moves.made_at_call`).
    made_at_call: bool = False


@frozen
class Scenario:
    """A bounded run to check: the calls that overlap, the conversation they start
    from, and the environment under which its finding shows."""

    name: str
    summary: str
    calls: tuple[Call, ...]
    #: The server conversation and mirror at the start (they agree: nothing in flight).
    server: tuple[str, ...] = ("msg0",)
    #: The local context at the start; by default the same as the server.
    local: tuple[str, ...] | None = None
    #: Items the model may create server-side, in order, when the environment allows.
    server_pool: tuple[str, ...] = ()
    #: The environment under which the scenario shows its finding.
    environment: Environment = BASE
    seed_finding: str = ""
    #: (item, kind) for every item that is not a plain message.
    kinds: tuple[tuple[str, ItemKind], ...] = ()

    def kind(self, item: str) -> ItemKind:
        """What `item` is: its entry in `kinds`, else a message."""
        for name, kind in self.kinds:
            if name == item:
                return kind
        return ItemKind.MESSAGE

    @property
    def initial_local(self) -> tuple[str, ...]:
        """The local context at the start (the server's, unless the scenario says)."""
        return self.server if self.local is None else self.local

    def items(self) -> tuple[str, ...]:
        """Every item id the scenario can ever mention, in a stable order."""
        seen: list[str] = []
        for item in (
            *self.server,
            *self.initial_local,
            *self.server_pool,
            *(i for call in self.calls for i in (*call.adds, *call.drops)),
        ):
            if item not in seen:
                seen.append(item)
        return tuple(seen)


def validate(scenario: Scenario, extra_sites: tuple[Site, ...] = ()) -> None:
    """Reject a scenario the model cannot mean: unknown sites, reused item ids."""
    sites = {**SITES_BY_NAME, **{site.name: site for site in extra_sites}}
    fresh: list[str] = [item for call in scenario.calls for item in call.adds]
    fresh += list(scenario.server_pool)
    existing = set(scenario.server) | set(scenario.initial_local)
    for call in scenario.calls:
        if call.site not in sites:
            raise ValueError(
                f"scenario {scenario.name}: unknown site {call.site!r}; known: {', '.join(sites)}"
            )
        site = sites[call.site]
        if site.request is RequestSource.MIRROR_SNAPSHOT and call.drops:
            raise ValueError(f"scenario {scenario.name}: a mirror snapshot site drops nothing")
        if call.made_at_call and (not call.drops or set(call.drops) & existing):
            raise ValueError(
                f"scenario {scenario.name}: items made at a call are none of the start's"
            )
    if len(fresh) != len(set(fresh)) or set(fresh) & existing:
        raise ValueError(f"scenario {scenario.name}: an item id is created twice")
    unknown = [item for item, _ in scenario.kinds if item not in scenario.items()]
    if unknown:
        raise ValueError(f"scenario {scenario.name}: a kind for an unknown item {unknown[0]!r}")


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        name="overlapping-push",
        summary="a text user turn queued while a tool-output push waits for its ack",
        calls=(Call("tool-outputs", adds=("out1",)), Call("user-turn", adds=("hello",))),
        seed_finding="the user turn deletes the tool output without the lock; lock3 keeps it",
    ),
    Scenario(
        name="replacement-first",
        summary="the application's replacement pushes first, then a tool output is appended",
        calls=(Call("replacement", adds=("note1",)), Call("tool-outputs", adds=("out1",))),
        seed_finding="the tool push deletes the replacement's item under lock3, not lock5",
    ),
    Scenario(
        name="stale-replacement",
        summary="a text user turn, and a replacement whose copy may predate it",
        calls=(Call("user-turn", adds=("hello",)), Call("replacement")),
        environment=Environment(stale_copies=True),
        seed_finding="a copy older than the user turn deletes it, with or without a lock",
    ),
    Scenario(
        name="two-replacements-during-user-turn",
        summary="two replacements queue behind a text user turn; the second orphans the first",
        calls=(Call("user-turn", adds=("hello",)), Call("replacement"), Call("replacement")),
        seed_finding="(found by the soak) the user turn's late upsert lands in the second "
        "replacement's object, so the first, now orphaned, deletes it; hoisting saves it",
    ),
    Scenario(
        name="cleanup-during-tool-push",
        summary="the never-played cleanup overlapping the interrupted generation's tool outputs",
        calls=(
            Call("cleanup", drops=("asst1",)),
            Call("interrupted-tool-outputs", adds=("out1",)),
        ),
        server=("msg0", "asst1"),
        local=("msg0",),
        seed_finding="the tool push re-creates the never-played item under lock3, not lock5",
    ),
    Scenario(
        name="server-item-during-replacement",
        summary="the model creates a function call server-side while a replacement is pushed",
        calls=(Call("replacement"),),
        server_pool=("call1",),
        environment=Environment(server_items=True),
        seed_finding="a replacement deletes the model's item the local context has not learned",
    ),
    Scenario(
        name="spoken-during-tool-push",
        summary="the spoken text of say() pushed while a tool-output push waits for its ack",
        calls=(Call("tool-outputs", adds=("out1",)), Call("spoken-message", adds=("spoken1",))),
        seed_finding="(not in the seed) the site new in 1.8.9 snapshots outside the lock",
    ),
    Scenario(
        name="cleanup-during-spoken",
        summary="the never-played cleanup while the spoken text of say() is pushed",
        calls=(Call("cleanup", drops=("asst1",)), Call("spoken-message", adds=("spoken1",))),
        server=("msg0", "asst1"),
        local=("msg0",),
        seed_finding="(not in the seed) the spoken push's snapshot, outside the lock, still "
        "has the never-played item and creates it again",
    ),
    Scenario(
        name="trim-tool-output",
        summary="an application trims a tool output whose push is still under way",
        calls=(
            Call("interrupted-tool-outputs", adds=("out1",)),
            Call("replacement", drops=("out1",)),
        ),
        seed_finding="(not in the seed) the trim diffs against a mirror that lacks the output, "
        "so it sends no delete, and the output's create lands after it",
    ),
)

for _scenario in SCENARIOS:
    validate(_scenario)

SCENARIOS_BY_NAME: dict[str, Scenario] = {scenario.name: scenario for scenario in SCENARIOS}
