"""Every catalog verdict that livekit's speech turn moves, over every configuration.

Explores each (variant, session shape, scenario, environment) of the verdict table
twice, on the catalog's site records and on `model.sites.with_speech_turn`'s, and
prints each verdict that differs, then whether the set is the one recorded in
`model.variants.MOVED_BY_SPEECH_TURN`. The test
(`tests/livekit/test_speech_turn.py`) runs the same comparison for the two
release variants over `openai` only, to stay cheap.

    python benchmarks/speech_turn_moves.py
"""

from __future__ import annotations

import time

from model import CONFIGURATIONS, ENVIRONMENTS, SCENARIOS, Config
from model.sites import with_speech_turn
from model.variants import MOVED_BY_SPEECH_TURN
from proofs.engines.explore import explore


def main() -> int:
    """Print the moved verdicts; exit status 1 when they are not the recorded ones."""
    started = time.perf_counter()
    turn = with_speech_turn()
    found = set()
    for variant, shape in CONFIGURATIONS:
        for scenario in SCENARIOS:
            for env in ENVIRONMENTS:
                plain = explore(Config(variant, scenario, env, shape=shape))
                turned = explore(Config(variant, scenario, env, shape=shape, extra_sites=turn))
                for finding in plain.findings:
                    after = turned.finding(finding.invariant).verdict
                    if finding.verdict is not after:
                        key = (variant.name, shape.name, scenario.name, env.name)
                        found.add((*key, finding.invariant.value))
                        print(
                            *key, finding.invariant.value, finding.verdict.value, "->", after.value
                        )
    recorded = {
        (m.variant, m.shape, m.scenario, env.name, m.invariant.value)
        for m in MOVED_BY_SPEECH_TURN
        for env in ENVIRONMENTS
        if not any(env.on(option) for option in m.kept_by)
    }
    print(
        f"{len(found)} moved, recorded: {found == recorded}, {time.perf_counter() - started:.1f} s"
    )
    return 0 if found == recorded else 1


if __name__ == "__main__":
    raise SystemExit(main())
