"""Soak: the released AgentSession over the real OpenAI plugin, with latency, jitter and faults.

Each round is one real `AgentSession` (livekit-agents, its own OpenAI
`RealtimeModel`) over `impl.gated_server` on a `SocketLoop`
(`proofs.adapters.livekit.socket_loop`): real sockets, virtual time. A round
makes 2 to 4 overlapping calls of the sites (a tool output, a text user turn,
`say()`, an application's replacement), each at a random moment of a 0.3 s
window; every message in each direction then takes `latency ± jitter`
(uniform) and never overtakes the one before it (one websocket is one ordered
stream). Virtual time moves from one due message or timer to the next, so the
plugin's real 5 s ack timer and its reconnect delay cost nothing.

Faults, one per cell:

* `none`;
* `rejections`: the server answers each item op with an `error` with
  probability 0.1;
* `timeouts`: with probability 0.1 the server holds an item op 6 s before it
  applies it, past the push's 5 s ack wait (the push raises, its op is applied
  later);
* `drops`: in half the rounds the server drops the connection at a random
  moment of the window; the plugin reconnects and rebuilds the new
  conversation from its mirror.

At rest it counts, per round, the items lost (in the local context, pushed,
and not on the server conversation of the last connection) and the
unintended deletes (a delete of an item whose "added" event the client had
been delivered, sent by a push that does not mean to remove it), and what the
fault did: the item ops rejected, the item ops held past the ack wait, and the
pushes whose `update_chat_ctx` raised.

    python benchmarks/soak_plugin.py                     # the installed release, every fault
    python benchmarks/soak_plugin.py --release 1.8.8     # the other, from .cache/livekit
    python benchmarks/soak_plugin.py --pushes 200 --fault drops
    python benchmarks/soak_plugin.py --without spoken-message   # 1.8.9 with every push locked
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FAULTS = ("none", "rejections", "timeouts", "drops")
SITES = (
    ("tool-outputs", "out1"),
    ("user-turn", "hello"),
    ("spoken-message", "spoken1"),
    ("replacement", "note1"),
)


def _scenario(rng: random.Random, sites: tuple[tuple[str, str], ...] = SITES) -> Any:
    from model.scenarios import Call, Scenario

    chosen = rng.sample(sites, rng.randint(2, min(4, len(sites))))
    return Scenario(
        "soak-round",
        "random overlapping calls",
        tuple(Call(site, (item,)) for site, item in chosen),
    )


class Round:
    """One round: a fresh session, random calls, paced deliveries, one fault."""

    def __init__(
        self,
        rng: random.Random,
        fault: str,
        latency: float,
        jitter: float,
        variant: str,
        sites: tuple[tuple[str, str], ...] = SITES,
    ) -> None:
        from model import Config
        from model.variants import VARIANTS_BY_NAME
        from proofs.adapters.livekit.plugin import PluginAdapter
        from proofs.adapters.livekit.socket_loop import new_socket_loop

        self.rng = rng
        self.fault = fault
        self.latency = latency
        self.jitter = jitter
        scenario = _scenario(rng, sites)
        self.config = Config(VARIANTS_BY_NAME[variant], scenario, scenario.environment)
        self.loop = new_socket_loop()
        with self.loop.running():
            self.adapter = PluginAdapter(self.config)
        self.loop.on_blocked = None  # every message is paced here, session traffic too
        calls = len(scenario.calls)
        self.starts = sorted((rng.uniform(0.0, 0.3), index) for index in range(calls))
        self.drop_at = rng.uniform(0.0, 0.3) if fault == "drops" and rng.random() < 0.5 else None
        self.due: dict[int, float] = {}
        self.last_in: dict[int, float] = {}
        self.last_out: dict[int, float] = {}
        self.dropped = 0
        #: Item ops the server answered with an error (the `rejections` fault).
        self.rejected = 0
        #: Item ops the server held past the push's ack wait (the `timeouts` fault).
        self.held = 0

    def _delay(self) -> float:
        return max(0.0, self.latency + self.rng.uniform(-self.jitter, self.jitter))

    def _stamp(self, now: float) -> None:
        """Give every message that has none its due time (FIFO per direction)."""
        for conn in self.adapter.gated.connections:
            key = id(conn)
            for event in conn.to_server:
                if id(event) not in self.due:
                    delay = self._delay()
                    if self.fault == "timeouts" and _item_op(event) and self.rng.random() < 0.1:
                        delay = 6.0
                        self.held += 1
                    due = max(self.last_in.get(key, 0.0), now + delay)
                    self.last_in[key] = due
                    self.due[id(event)] = due
            for event in conn.to_client:
                if id(event) not in self.due:
                    due = max(self.last_out.get(key, 0.0), now + self._delay())
                    self.last_out[key] = due
                    self.due[id(event)] = due

    def run(self, horizon: float = 60.0) -> dict[str, Any]:
        loop = self.loop
        adapter = self.adapter
        try:
            while True:
                loop.run_until_blocked()
                now = loop.time()
                self._stamp(now)
                conn = adapter.gated.current
                moments: list[tuple[float, str]] = []
                if self.starts:
                    moments.append((self.starts[0][0], "call"))
                if self.drop_at is not None:
                    moments.append((self.drop_at, "drop"))
                if conn.to_server:
                    moments.append((self.due[id(conn.to_server[0])], "apply"))
                if conn.to_client and not conn.conversation.closed:
                    moments.append((self.due[id(conn.to_client[0])], "deliver"))
                timer = loop.next_timer()
                if timer is not None and timer < horizon:
                    moments.append((timer, "timer"))
                if not moments:
                    break
                when, what = min(moments)
                if when > horizon:
                    break
                if when > now:
                    loop.advance(when - now)
                with loop.running():
                    if what == "call":
                        _, index = self.starts.pop(0)
                        adapter.call(index)
                    elif what == "drop":
                        self.drop_at = None
                        self.dropped += 1
                        loop.create_task(conn.drop())
                    elif what == "apply":
                        rejects = self.fault == "rejections" and _item_op(conn.to_server[0])
                        if rejects and self.rng.random() < 0.1:
                            conn.reject_next()
                            self.rejected += 1
                        else:
                            conn.apply_next()
                    elif what == "deliver":
                        adapter._deliver()
            return self._count()
        finally:
            self._close()

    def _count(self) -> dict[str, Any]:
        adapter = self.adapter
        local = adapter._named(adapter._local_ids())
        adapter._learn_server_names()
        gated = adapter.gated
        reached = {
            adapter.names[i]
            for conn in gated.connections
            for i in conn.conversation.reached
            if i in adapter.names
        }
        server = set(adapter._named(gated.current.conversation.ids()))
        lost = [item for item in local if item in reached and item not in server]
        unintended = 0
        sent = adapter.rt.sent
        for conn in gated.connections:
            for delete in conn.deletes:
                op = sent.get(str(delete.event_id))
                if op is None or not delete.acked:
                    continue
                call = adapter._who(op.origin)
                drops = () if call is None else self.config.call(call).drops
                name = adapter.names.get(delete.item_id, delete.item_id)
                if name not in drops:
                    unintended += 1
        records = adapter.tracker.records.values()
        pushes = sum(1 for record in records if record.entered)
        return {
            "pushes": pushes,
            "rejected": self.rejected,
            "held": self.held,
            # pushes whose `update_chat_ctx` raised (its 5 s ack wait ran out)
            "timed_out": sum(1 for record in records if record.returned and record.failed),
            "lost": len(lost),
            "lost_items": lost,
            "unintended_deletes": unintended,
            "connections": len(gated.connections),
            "dropped": self.dropped,
        }

    def _close(self) -> None:
        from proofs.engines.conformance.follow import shutdown

        with self.loop.running():
            self.adapter.close()
        shutdown(self.loop)  # type: ignore[arg-type]


def _item_op(event: dict[str, Any]) -> bool:
    return event.get("type") in ("conversation.item.create", "conversation.item.delete")


def soak_cell(
    fault: str,
    pushes: int,
    latency: float,
    jitter: float,
    seed: int,
    without: tuple[str, ...] = (),
) -> dict[str, Any]:
    from proofs.adapters.livekit.releases import RELEASES_BY_VERSION, installed_version

    version = installed_version()
    assert version is not None
    variant = RELEASES_BY_VERSION[version].variant
    rng = random.Random(f"{seed}/{fault}")
    sites = tuple(site for site in SITES if site[0] not in without)
    counted = ("pushes", "lost", "unintended_deletes", "dropped", "rejected", "held", "timed_out")
    totals = {"rounds": 0, **dict.fromkeys(counted, 0)}
    rounds_losing = 0
    examples: dict[str, int] = {}
    started = time.perf_counter()
    while totals["pushes"] < pushes:
        result = Round(rng, fault, latency, jitter, variant, sites).run()
        totals["rounds"] += 1
        for key in counted:
            totals[key] += result[key]
        if result["lost"]:
            rounds_losing += 1
        for item in result["lost_items"]:
            examples[item] = examples.get(item, 0) + 1
    return {
        "release": version,
        "variant": variant,
        "fault": fault,
        "latency_ms": latency * 1000,
        "jitter_ms": jitter * 1000,
        "without": list(without),
        **totals,
        "rounds_losing": rounds_losing,
        "lost_by_item": dict(sorted(examples.items())),
        "seconds": round(time.perf_counter() - started, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", help="a release other than the installed one")
    parser.add_argument("--fault", action="append", choices=FAULTS)
    parser.add_argument("--pushes", type=int, default=2000, help="at least this many per cell")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds, each direction")
    parser.add_argument("--jitter", type=float, default=0.03, help="seconds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--without",
        action="append",
        default=[],
        choices=[site for site, _ in SITES],
        help="leave a site out of the rounds (repeatable)",
    )
    args = parser.parse_args(argv)
    from proofs.adapters.livekit.releases import ensure_release, installed_version

    if args.release and args.release != installed_version():
        target, _ = ensure_release(args.release)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(target), str(ROOT), env.get("PYTHONPATH", "")])
        rest = [a for a in (argv if argv is not None else sys.argv[1:])]
        index = rest.index("--release")
        del rest[index : index + 2]
        return subprocess.run([sys.executable, __file__, *rest], env=env, check=False).returncode
    logging.getLogger("livekit").setLevel(logging.CRITICAL)
    logging.getLogger("ackguard").setLevel(logging.CRITICAL)
    for fault in args.fault or FAULTS:
        cell = soak_cell(
            fault, args.pushes, args.latency, args.jitter, args.seed, tuple(args.without)
        )
        print(json.dumps(cell), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
