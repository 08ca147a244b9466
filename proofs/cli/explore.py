"""`ackguard explore`: the explicit-state explorer over the catalog."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from model import SHAPES_BY_NAME, SITES_BY_NAME, Config, Environment, Site
from model.environment import OPTION_NAMES
from proofs.cli import options as choices
from proofs.engines.executors import dask_executor, local_pool
from proofs.engines.explore import Exploration, explore
from proofs.engines.site_file import SiteSpec, load_sites, pair_scenarios
from proofs.engines.sweep import jobs, shapes, sweep
from proofs.errors import SiteFileError, UsageError
from proofs.report.explore import rows as result_rows
from proofs.report.explore import sweep_lines, sweep_rows, table_lines

_EXAMPLE = """\
examples:
  ackguard explore --variant lock3 --scenario replacement-first --trace
  ackguard explore --environment all
  ackguard explore --sites sites.json --trace   # sites.json: from ackguard audit --emit-sites
  ackguard explore --sweep 3 --variant lock5 --environment base
  ackguard explore --sweep 2 --sites sites.json --scheduler tcp://10.0.0.5:8786

exit status: 0 when every verdict matches the catalog's expectation (with --sites: when
every pair of sites keeps every invariant; with --sweep: when no mix fails), 1 when one does
not, 2 on bad input (a site file that does not follow
proofs/schemas/site-file.schema.json), 130 on Ctrl-C (after printing what was explored,
marked incomplete)."""


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
    choices.add_session_argument(parser)
    parser.add_argument(
        "--environment",
        action="append",
        metavar="E",
        help="repeatable: every scenario runs under each one given; base, all, or options "
        "joined by '+' (stale-copies, server-items, timeouts, rejections, reconnects)",
    )
    parser.add_argument(
        "--sites",
        metavar="FILE",
        help="site records (as `ackguard audit --emit-sites` writes them): check every pair "
        "of them under the lock discipline the file records, instead of the catalog",
    )
    parser.add_argument(
        "--sweep",
        metavar="N",
        type=choices.positive_int,
        help="explore every mix of 1 to N calls of the chosen sites, under each variant and "
        "environment (all six columns unless --environment), and report which mixes fail and "
        "the smallest failing mix per cell",
    )
    parser.add_argument(
        "--site",
        action="append",
        metavar="NAME",
        help="with --sweep: a site to mix (repeatable; default every site, or the site file's)",
    )
    parser.add_argument(
        "--workers",
        metavar="N",
        type=choices.positive_int,
        help="with --sweep: local worker processes (default one per core; 1: in this process)",
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="with --sweep: run the mixes on the Dask cluster whose scheduler is at ADDRESS "
        "(tcp://HOST:PORT) instead of local processes; needs ackguard[dask]",
    )
    parser.add_argument(
        "--no-symmetry",
        action="store_true",
        help="keep every state, not one per renaming of interchangeable calls (for comparison)",
    )
    parser.add_argument("--trace", action="store_true", help="print each counterexample")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.sweep is not None:
        return run_sweep(args)
    for flag in ("site", "workers", "scheduler"):
        if getattr(args, flag) is not None:
            raise UsageError(f"--{flag} goes with --sweep")
    # every scenario under each environment given (each once), or under its own
    forced: list[Environment] = choices.environments(args.environment) if args.environment else []
    extra_sites: tuple[Site, ...] = ()
    if args.sites is not None:
        if args.variant or args.scenario:
            raise UsageError("--sites checks its own sites; drop --variant/--scenario")
        spec = _load_sites(args.sites)
        variants = [spec.variant()]
        scenarios = pair_scenarios(spec)
        extra_sites = spec.sites
    else:
        variants = choices.variants(args.variant)
        scenarios = choices.scenarios(args.scenario)
    # a site file is about the agent's lock discipline: its own variant's shape
    # unless --session asks for others
    shapes = (
        choices.sessions(args.session)
        if args.session or args.sites is None
        else [SHAPES_BY_NAME[variant.shape] for variant in variants]
    )
    configs = [
        Config(variant, scenario, environment, extra_sites, shape)
        for variant, shape in choices.pairs(variants, shapes)
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
            result = explore(config, symmetry=not args.no_symmetry)
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
            f"every pair of sites in {args.sites} keeps every invariant {counts}"
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


def run_sweep(args: argparse.Namespace) -> int:
    """`--sweep N`: every mix of up to N calls, by cell (variant x environment)."""
    if args.scenario:
        raise UsageError("--sweep makes its own scenarios; drop --scenario")
    if args.no_symmetry:
        raise UsageError("--sweep always reduces by symmetry; drop --no-symmetry")
    if args.scheduler is not None and args.workers is not None:
        raise UsageError("--workers is for local processes; the Dask cluster has its own")
    extra_sites: tuple[Site, ...] = ()
    if args.sites is not None:
        if args.variant:
            raise UsageError("--sites checks its own lock discipline; drop --variant")
        spec = _load_sites(args.sites)
        variants = [spec.variant()]
        extra_sites = spec.sites
        known = {site.name: site for site in spec.sites}
    else:
        variants = choices.variants(args.variant)
        known = dict(SITES_BY_NAME)
    if args.site:
        unknown = [name for name in args.site if name not in known]
        if unknown:
            raise UsageError(f"unknown site {unknown[0]!r}; choose from: {', '.join(known)}")
        chosen = [known[name] for name in args.site]
    else:
        chosen = list(known.values())
    environments = choices.environments(args.environment)
    work = jobs(variants, environments, shapes(chosen), args.sweep, extra_sites)
    terminal = sys.stderr.isatty()
    checked = 0

    def progress(done: int, total: int) -> None:
        nonlocal checked
        checked = done
        if terminal:
            _progress_line(done, total)

    try:
        if args.scheduler is not None:
            with dask_executor(args.scheduler) as executor:
                cells = sweep(work, executor, progress)
        elif args.workers == 1:
            cells = sweep(work, None, progress)
        else:
            with local_pool(args.workers) as executor:
                cells = sweep(work, executor, progress)
    except KeyboardInterrupt:
        # Ctrl-C: no cell is complete, so no table; say how far it got, as explore does
        if terminal:
            print(file=sys.stderr)
        print(
            f"ackguard explore: INTERRUPTED: {checked} of {len(work)} mixes were checked "
            "before Ctrl-C; the sweep is incomplete, not a verdict",
            file=sys.stderr,
        )
        return 130
    if terminal:
        print(file=sys.stderr)
    if args.json:
        print(json.dumps(sweep_rows(cells), indent=2))
    else:
        for line in sweep_lines(cells, args.trace):
            print(line)
    return 1 if any(cell.failing for cell in cells) else 0


def _load_sites(path: str) -> SiteSpec:
    """The site file at `path` (UsageError, one line, when it is wrong); each place it
    keeps but cannot check (unknown request kind) is noted on stderr, so that a run
    that holds never hides a push it did not look at."""
    try:
        spec = load_sites(path)
    except SiteFileError as error:
        raise UsageError(str(error)) from None
    for line in spec.skipped_lines():
        print(f"ackguard explore: note: {line}", file=sys.stderr)
    return spec


def _progress_line(done: int, total: int) -> None:
    width = 30
    filled = width * done // total
    bar = "#" * filled + "." * (width - filled)
    print(f"\rsweep [{bar}] {done}/{total} mixes", end="", file=sys.stderr, flush=True)


#: Why an option can leave every move as it is, for the note that says so.
_IDLE_BECAUSE = {
    "server-items": "none of these scenarios has items the model creates (a server pool), "
    "so every verdict is the one without it; the catalog's server-item-during-replacement "
    "has one",
    "stale-copies": "none of these scenarios calls a caller-copy site (a replacement), so "
    "every verdict is the one without it",
    "reconnects": "none of these session shapes has a reconnect of its own, so the option "
    "does not apply",
    "timeouts": "none of these session shapes waits for acks, so none can time out",
    "stale-anchors": "every one of these session shapes puts an item announced after a "
    "deleted one at the mirror's tail, as the server does, so the move changes nothing "
    "(case 3's release before its fix drops it: ackguard verify --case livekit-agents-6964)",
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
