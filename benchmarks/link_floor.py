"""The loopback link's own cost of messages ahead: no session, no sockets.

`impl/ws_server.py` holds every message for `latency ± jitter` (independent,
uniform) and never lets it overtake an earlier one. A message sent right behind
k others therefore arrives with the latest of k + 1 draws, and its answer
likewise. This simulates only that link, so the round trip of the last of
k + 1 messages sent together is the floor any client that awaits its own ack
pays, whatever its design. `docs/three-way.md` compares it with
`bench_latency.py`'s three-way figures.

    python benchmarks/link_floor.py [--latency-ms 20] [--jitter-ms 5] [--trials 100000]
"""

from __future__ import annotations

import argparse
import random
import statistics


def _ordered_arrivals(
    sends: list[float], latency: float, jitter: float, rng: random.Random
) -> list[float]:
    """Arrival times on one ordered link: each message's own delay, no overtaking."""
    arrivals: list[float] = []
    last = float("-inf")
    for sent in sends:
        last = max(last, sent + latency + rng.uniform(-jitter, jitter))
        arrivals.append(last)
    return arrivals


def round_trip_behind(ahead: int, latency: float, jitter: float, rng: random.Random) -> float:
    """Round trip of a message sent together with `ahead` earlier ones, each answered
    at once by the server, in order."""
    requests = _ordered_arrivals([0.0] * (ahead + 1), latency, jitter, rng)
    answers = _ordered_arrivals(requests, latency, jitter, rng)
    return answers[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency-ms", type=float, default=20.0, help="one way (default 20)")
    parser.add_argument("--jitter-ms", type=float, default=5.0, help="uniform, +/- (default 5)")
    parser.add_argument("--trials", type=int, default=100_000, help="per row (default 100000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    print(f"one ordered link, {args.latency_ms:g} ms +/- {args.jitter_ms:g} ms per message")
    print("| messages ahead | median round trip, ms | ratio to none ahead |")
    print("|---:|---:|---:|")
    base = None
    for ahead in (0, 1, 2, 4):
        trips = [
            round_trip_behind(ahead, args.latency_ms, args.jitter_ms, rng)
            for _ in range(args.trials)
        ]
        median = statistics.median(trips)
        base = median if base is None else base
        print(f"| {ahead} | {median:.1f} | {median / base:.2f} |")


if __name__ == "__main__":
    main()
