"""`ackguard explore`: the explicit-state explorer over the catalog."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from model import Config, Environment, Site
from model.environment import OPTION_NAMES
from proofs.cli import options as choices
from proofs.engines.explore import Exploration, explore
from proofs.engines.site_file import load_sites, pair_scenarios
from proofs.errors import SiteFileError, UsageError
from proofs.report.explore import rows as result_rows
from proofs.report.explore import table_lines

_EXAMPLE = """\
examples:
  ackguard explore --variant lock3 --scenario replacement-first --trace
  ackguard explore --environment all
  ackguard explore --sites sites.json --trace   # sites.json: from ackguard audit --emit-sites

exit status: 0 when every verdict matches the catalog's expectation (with --sites: when
every pair of sites keeps both invariants), 1 when one does not, 2 on bad input
(a site file that does not follow proofs/schemas/site-file.schema.json), 130 on
Ctrl-C (after printing what was explored, marked incomplete)."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "explore",
        help="explore every reachable state of the model (breadth-first)",
        description=(
            "Breadth-first search over the model for each (variant, scenario): the shortest "
            "counterexample of each invariant, or the number of reachable states when it "
            "holds. Each scenario runs under its own environment unless --environment is given."
        ),
        epilog=_EXAMPLE,
    )
    choices.add_catalog_arguments(parser)
    parser.add_argument(
        "--environment",
        action="append",
        metavar="E",
        help="repeatable: every scenario runs under each one given; base, all, or options "
        "joined by '+' (stale-copies, server-items, timeouts, rejections)",
    )
    parser.add_argument(
        "--sites",
        metavar="FILE",
        help="site records (as `ackguard audit --emit-sites` writes them): check every pair "
        "of them under the lock discipline the file records, instead of the catalog",
    )
    parser.add_argument("--trace", action="store_true", help="print each counterexample")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    # every scenario under each environment given (each once), or under its own
    forced: list[Environment] = choices.environments(args.environment) if args.environment else []
    extra_sites: tuple[Site, ...] = ()
    if args.sites is not None:
        if args.variant or args.scenario:
            raise UsageError("--sites checks its own sites; drop --variant/--scenario")
        try:
            spec = load_sites(args.sites)
        except SiteFileError as error:
            raise UsageError(str(error)) from None
        variants = [spec.variant()]
        scenarios = pair_scenarios(spec)
        extra_sites = spec.sites
    else:
        variants = choices.variants(args.variant)
        scenarios = choices.scenarios(args.scenario)
    configs = [
        Config(variant, scenario, environment, extra_sites)
        for variant in variants
        for scenario in scenarios
        for environment in (forced or [scenario.environment])
    ]
    if forced:
        for note in idle_options(configs):
            print(f"ackguard explore: note: {note}", file=sys.stderr)
    rows: list[dict[str, Any]] = []
    results: list[Exploration] = []
    interrupted = False
    try:
        for config in configs:
            result = explore(config)
            results.append(result)
            rows.extend(result_rows(result))
    except KeyboardInterrupt:
        # Ctrl-C: the configurations explored so far are shown, and said to be incomplete
        interrupted = True
    matched = all(row["verdict"] == row["expected"] for row in rows)
    incomplete = (
        f"INTERRUPTED: {len(results)} of {len(configs)} (variant, scenario, environment) were "
        "explored before Ctrl-C; the run is incomplete, not a verdict"
    )
    if args.json:
        print(json.dumps(rows, indent=2))
        if interrupted:
            print(f"ackguard explore: {incomplete}", file=sys.stderr)
        return 130 if interrupted else 0 if matched else 1
    for line in table_lines(rows, results, args.trace):
        print(line)
    total = sum(result.states for result in results)
    seconds = sum(result.seconds for result in results)
    counts = f"({len(rows)} cells, {total} states, {seconds:.2f} s)"
    if interrupted:
        print(f"{incomplete} {counts}")
        return 130
    if args.sites is not None:
        broken = sum(row["verdict"] == "counterexample" for row in rows)
        print(
            f"every pair of sites in {args.sites} keeps both invariants {counts}"
            if matched
            else f"{broken} cells have counterexamples: the lock discipline in "
            f"{args.sites} does not keep the invariants {counts}"
        )
    else:
        print(
            f"{'every verdict matched' if matched else 'SOME VERDICTS DID NOT MATCH'} the "
            f"catalog's expectation {counts}"
        )
    return 0 if matched else 1


#: Why an option can leave every move as it is, for the note that says so.
_IDLE_BECAUSE = {
    "server-items": "none of these scenarios has items the model creates (a server pool), "
    "so every verdict is the one without it; the catalog's server-item-during-replacement "
    "has one",
    "stale-copies": "none of these scenarios calls a caller-copy site (a replacement), so "
    "every verdict is the one without it",
}


def idle_options(configs: Sequence[Config]) -> list[str]:
    """A sentence for each option that is on but adds no move to any of `configs`
    (`Config.options_read`): every row is then as it is without it."""
    on = {option for config in configs for option in config.environment.options}
    read = {option for config in configs for option in config.options_read()}
    return [
        f"{option} adds no move here: {_IDLE_BECAUSE.get(option, 'no call reads it')}"
        for option in sorted(on - read, key=OPTION_NAMES.index)
    ]
