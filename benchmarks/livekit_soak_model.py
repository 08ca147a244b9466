"""Which items the model can lose in the soak's rounds, with no drop and with one.

`benchmarks/soak_plugin.py` makes 2 to 4 calls of the four sites (tool output,
user turn, `say()`, replacement) per round, each at its moment: a tool returns at
its call and a replacement copies the local context at its call, and the server
drops the connection at most once. This script explores the release's reconnect
model (`proofs.adapters.livekit.reconnect.released_reconnect`, the variant of
1.8.9 or 1.8.8) on every such set of calls, breadth first, without `copy` and
`before-call` moves (the soak has neither), and prints, per set, the items whose
invariant 2 (`agreement-at-rest`: lost, or deleted and created again) the model
can break with no dropped connection and with exactly one. The soak's table
(docs/livekit.md, "The soak over the plugin") is read beside it.

    python benchmarks/livekit_soak_model.py                     # lock5, pairs and triples
    python benchmarks/livekit_soak_model.py --variant unlocked --calls 2 --calls 3
    python benchmarks/livekit_soak_model.py --without spoken-message
"""

from __future__ import annotations

import argparse
import itertools
import time
from collections import deque

from model import Environment, Invariant, MoveKind, State, check, initial_state
from model.scenarios import Call, Scenario
from proofs.adapters.livekit.reconnect import released_reconnect, successors

SITES = (
    ("tool-outputs", "out1"),
    ("user-turn", "hello"),
    ("spoken-message", "spoken1"),
    ("replacement", "note1"),
)
#: Moves the soak never makes: an early copy, an item made before its call.
LEFT_OUT = frozenset({MoveKind.COPY, MoveKind.BEFORE_CALL})


def broken_items(scenario: Scenario, variant: str, limit: int) -> tuple[dict[int, set[str]], bool]:
    """Per number of drops (0, 1): the items invariant 2 breaks on in some state the
    model reaches; and whether the search was complete (under `limit` states)."""
    config = released_reconnect(variant, scenario, Environment(reconnects=True))
    start = initial_state(config)
    seen: set[tuple[State, int]] = {(start, 0)}
    queue: deque[tuple[State, int]] = deque([(start, 0)])
    found: dict[int, set[str]] = {0: set(), 1: set()}
    while queue:
        state, used = queue.popleft()
        if state.connected:
            violation = check(state, config, Invariant.AGREEMENT_AT_REST)
            if violation is not None:
                found[used].add(violation.item)
        for move, after in successors(state, config):
            if move.kind in LEFT_OUT:
                continue
            count = used + (move.kind is MoveKind.DISCONNECT and state.connected is True)
            if count > 1 or (after, count) in seen:
                continue
            if len(seen) >= limit:
                return found, False
            seen.add((after, count))
            queue.append((after, count))
    return found, True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="lock5", help="lock5 (1.8.9) or unlocked (1.8.8)")
    parser.add_argument("--calls", type=int, action="append", help="calls per round (2 to 4)")
    parser.add_argument("--without", action="append", default=[], help="leave a site out")
    parser.add_argument("--limit", type=int, default=400_000)
    args = parser.parse_args()
    sites = tuple(site for site in SITES if site[0] not in args.without)
    print("| calls | no drop | one drop | states complete | seconds |")
    print("| --- | --- | --- | --- | --- |")
    for count in args.calls or [2, 3]:
        for combo in itertools.combinations(sites, count):
            scenario = Scenario("soak-round", "", tuple(Call(s, (i,)) for s, i in combo))
            started = time.perf_counter()
            found, complete = broken_items(scenario, args.variant, args.limit)
            names = ", ".join(site for site, _ in combo)
            cells = [", ".join(sorted(found[n])) or "-" for n in (0, 1)]
            print(
                f"| {names} | {cells[0]} | {cells[1]} | {'yes' if complete else 'NO'} | "
                f"{time.perf_counter() - started:.1f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
