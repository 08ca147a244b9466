"""`python -m proofs.cli.livekit_release`: one release's report, run in its own process.

`ackguard livekit` runs a release other than the installed one in a subprocess
whose path puts that release first (`proofs.adapters.livekit.releases`); this is
what that subprocess runs. It prints the report as JSON (`--json`) or as tables.
"""

from __future__ import annotations

import argparse
import json
import sys

from model.scenarios import SCENARIOS, SCENARIOS_BY_NAME
from proofs.adapters.livekit.check import PROVIDERS, check_release
from proofs.report.livekit import render


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m proofs.cli.livekit_release")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--scenario", action="append", metavar="S", help="repeatable")
    parser.add_argument("--no-sweep", action="store_true", help="replay counterexamples only")
    parser.add_argument("--with", dest="options", action="append", default=[], metavar="OPTION")
    parser.add_argument("--provider", choices=PROVIDERS, default="standin")
    parser.add_argument(
        "--pairs",
        choices=["auto", "yes", "no"],
        default="auto",
        help="the audited pairs of push places (auto: with the whole catalog)",
    )
    parser.add_argument("--hypothesis", type=int, default=0, metavar="N")
    parser.add_argument("--replay", metavar="STEPS")
    args = parser.parse_args(argv)
    names = args.scenario or [scenario.name for scenario in SCENARIOS]
    unknown = [name for name in names if name not in SCENARIOS_BY_NAME]
    if unknown:
        parser.error(f"unknown scenario(s): {', '.join(unknown)}")
    if args.replay is not None:
        return _replay(parser, args, names)
    report = check_release(
        [SCENARIOS_BY_NAME[n] for n in names],
        sweep=not args.no_sweep,
        options=tuple(args.options),
        provider=args.provider,
        pairs=None if args.pairs == "auto" else args.pairs == "yes",
        hypothesis=args.hypothesis,
    )
    if args.json:
        json.dump(report, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write("\n".join(render(report)) + "\n")
    return 0 if report["as_expected"] else 1


def _replay(parser: argparse.ArgumentParser, args: argparse.Namespace, names: list[str]) -> int:
    """One replay string over the plugin, for one scenario: what the real code did."""
    from proofs.adapters.livekit.check import release_config, with_options
    from proofs.adapters.livekit.explore_plugin import replay
    from proofs.adapters.livekit.releases import RELEASES_BY_VERSION, installed_version

    if len(names) != 1 or not args.scenario:
        parser.error("--replay needs exactly one --scenario")
    release = RELEASES_BY_VERSION[str(installed_version())]
    scenario = SCENARIOS_BY_NAME[names[0]]
    environment = with_options(scenario.environment, tuple(args.options))
    # the release's model: its sites wait for livekit's speech turn, as the runs do
    config = release_config(release.variant, scenario, environment)
    result = {"release": release.version, "scenario": scenario.name, **replay(config, args.replay)}
    json.dump(result, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
