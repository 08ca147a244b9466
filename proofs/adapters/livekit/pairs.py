"""Scenarios for every pair of push places the audit finds in the installed release.

The audit (`proofs.engines.audit`, as `ackguard audit --emit-sites` lists them)
reads `agent_activity.py` without running it and names each push place by its
function and line. Which model site a place is, is what the real code says:
each site driven alone (`check.PATHS`) pushes from one line, and that line is
the place. Every unordered pair of places, a place with itself included (two
calls of one site), becomes one scenario of two calls, in both orders the model
allows (the model's interleavings start either call first). A place that no lone
site reaches has no scenario, and `check.coverage` reports it as not driven.

Each pair starts from a state the release reaches (`pair_scenario`): a cleanup
beside a tool-output push starts with the placeholder of its never-played
message in the local context (`PLACEHOLDER_PAIRS`). Two interrupted calls run
one generation after the other, the later one a reply sent behind the earlier
one's push (`Call.behind_earlier_push`); of two cleanups, the first one's message
is on the server at the start and the second one's is made at its call
(`Call.made_at_call`), as the speech scheduler runs them (docs/livekit.md,
"Audited pairs").
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import attrs

from model.scenarios import Call, Scenario, validate
from proofs.adapters.livekit.releases import Release
from proofs.engines.audit import SITE_REQUESTS, Place, audit_source

__all__ = ["INTERRUPTED", "PLACEHOLDER_PAIRS", "audited_pairs", "pair_scenario", "push_places"]


def push_places() -> list[Place]:
    """The push places the audit finds in the installed release's agent_activity.py."""
    import livekit.agents.voice.agent_activity as agent_activity

    path = Path(agent_activity.__file__)
    return [
        place
        for place in audit_source(path.read_text(encoding="utf-8"), str(path))
        if place.kind in SITE_REQUESTS
    ]


#: The sites whose call interrupts a generation that is the current speech.
INTERRUPTED = frozenset({"cleanup", "interrupted-tool-outputs"})


def _call(site: str, n: int, behind: bool = False) -> Call:
    """Call number `n` (1 or 2) of `site`, with items of its own; `behind`: its
    generation may be the later of two (`Call.behind_earlier_push`)."""
    if site == "user-turn":
        return Call(site, (f"hello{n}",))
    if site == "tool-outputs":
        return Call(site, (f"out{n}",))
    if site == "interrupted-tool-outputs":
        return Call(site, (f"iout{n}",), behind_earlier_push=behind)
    if site == "spoken-message":
        return Call(site, (f"spoken{n}",))
    if site == "replacement":
        return Call(site, (f"note{n}",))
    if site == "cleanup":
        return Call(site, drops=(f"asst{n}",), behind_earlier_push=behind)
    raise ValueError(f"no pair call for site {site!r}")


#: Pairs whose never-played message has a local placeholder at the start: the
#: tool's reply runs before the cleanup's generation (the speech turn), so the
#: message follows the tool's function call, the local context's last item, and
#: the activity's `_on_remote_item_added` appends it locally.
PLACEHOLDER_PAIRS: frozenset[frozenset[str]] = frozenset({frozenset({"cleanup", "tool-outputs"})})


def pair_scenario(first: str, second: str, lines: tuple[int, int]) -> Scenario:
    """Two calls, of `first` and of `second`, pushing from `lines` of agent_activity.py,
    from a start the release reaches: a cleanup's never-played message is on the
    server and not in the local context, unless the pair is a `PLACEHOLDER_PAIRS` one,
    where the local context holds its placeholder too, or it is the second of two
    cleanups, whose message its call makes."""
    # two interrupted generations run one after the other, the later one a reply
    # started behind the earlier one's push on the one socket
    behind = {first, second} <= INTERRUPTED
    calls = (_call(first, 1, behind), _call(second, 2, behind))
    if first == second == "cleanup":
        # the later cleanup's generation runs once the earlier one's push has
        # returned, and makes its never-played message then
        calls = (calls[0], attrs.evolve(calls[1], made_at_call=True))
    dropped = tuple(item for call in calls for item in call.drops)
    on_server = tuple(item for call in calls if not call.made_at_call for item in call.drops)
    placeholder = frozenset({first, second}) in PLACEHOLDER_PAIRS
    scenario = Scenario(
        f"pair-{lines[0]}-{lines[1]}",
        f"{first} (line {lines[0]}) and {second} (line {lines[1]}), overlapping",
        calls,
        server=("msg0", *on_server),
        local=("msg0",) if dropped and not placeholder else None,
    )
    validate(scenario)
    return scenario


def audited_pairs(release: Release, paths: list[dict[str, Any]]) -> list[Scenario]:
    """One scenario per unordered pair of audited places, a place with itself included."""
    del release  # the installed one: the audit reads the file on the path
    site_of: dict[int, str] = {}
    for path in paths:
        for line in path["push_lines"]:
            site_of.setdefault(int(line), str(path["site"]))
    lines = sorted({place.line for place in push_places() if place.line in site_of})
    return [
        pair_scenario(site_of[a], site_of[b], (a, b))
        for a, b in itertools.combinations_with_replacement(lines, 2)
    ]
