"""`ackguard conform`: the implementation against the model, in lockstep."""

from __future__ import annotations

import argparse
import json
import logging

from model import SHAPES_BY_NAME, Environment
from proofs.adapters import ADAPTERS, adapter_factory, adapter_for
from proofs.cli import options as choices
from proofs.engines.conformance.adapter import AdapterFactory
from proofs.engines.conformance.machine import conformance_machine, machine_settings
from proofs.engines.conformance.run import DEFAULT_DEPTH, VariantReport, check_variant
from proofs.errors import UnsupportedConfig, UsageError
from proofs.report.conform import table_lines, variant_json

_EXAMPLE = """\
examples:
  ackguard conform --variant lock3 --scenario replacement-first --depth 8
  ackguard conform --variant lock5 --environment all
  ackguard conform --json
  ackguard conform --session duplex-await --variant unlocked   # livekit's real duplex class

exit status: 0 when every variant breaks exactly what the catalog expects (no mismatch,
every counterexample reproduced), 1 when one does not, 2 on bad input."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "conform",
        help="check the asyncio implementation against the model, step by step",
        description=(
            "Drive the implementation (impl/) and the model in lockstep over every stimulus "
            "sequence up to a depth, and replay every counterexample the explorer finds. "
            "Per variant: sequences explored, mismatches between implementation and model, "
            "and the invariants the implementation breaks, each with its shortest failing "
            "sequence."
        ),
        epilog=_EXAMPLE,
    )
    choices.add_catalog_arguments(parser)
    choices.add_session_argument(parser)
    parser.add_argument(
        "--environment",
        action="append",
        metavar="E",
        help="base, all, or options joined by '+' (repeatable; default: each scenario's own)",
    )
    parser.add_argument(
        "--depth",
        type=choices.positive_int,
        default=DEFAULT_DEPTH,
        metavar="D",
        help=f"longest stimulus sequence (default {DEFAULT_DEPTH}: every catalog sequence)",
    )
    parser.add_argument(
        "--hypothesis",
        type=choices.positive_int,
        metavar="N",
        help="also run N Hypothesis examples per cell with bursts and random schedules",
    )
    parser.add_argument(
        "--adapter",
        metavar="NAME",
        help="the adapter to drive (default: the registry's for each session shape: impl for "
        "openai and three-way, duplex for duplex and duplex-await, gemini for gemini)",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    variants = choices.variants(args.variant)
    scenarios = choices.scenarios(args.scenario)
    if args.session:
        pairs = choices.pairs(variants, choices.sessions(args.session))
    else:
        pairs = [(variant, SHAPES_BY_NAME[variant.shape]) for variant in variants]
    names = [_adapter_name(shape.name, args.adapter) for _, shape in pairs]
    environments: list[Environment] | None = None
    if args.environment:
        environments = choices.environments(args.environment)
    factories = {name: adapter_factory(name) for name in names}
    # timeouts, rejections, dropped removals and dropped connections are logged by design
    quiet = {"impl": logging.ERROR, "livekit": logging.CRITICAL}
    levels = [logging.getLogger(name).level for name in quiet]
    for name, level in quiet.items():
        logging.getLogger(name).setLevel(level)
    try:
        reports = [
            check_variant(
                v,
                scenarios,
                environments,
                args.depth,
                factory=factories[name],
                shape=shape,
                reconnects=ADAPTERS[name].reconnects,
            )
            for (v, shape), name in zip(pairs, names, strict=True)
        ]
        hypothesis_failures: dict[str, list[str]] = {}
        if args.hypothesis:
            for report, name in zip(reports, names, strict=True):
                found = _hypothesis([report], args.hypothesis, factories[name])
                for variant, failures in found.items():
                    hypothesis_failures.setdefault(variant, []).extend(failures)
    finally:
        for name, level in zip(quiet, levels, strict=True):
            logging.getLogger(name).setLevel(level)
    ok = all(report.as_expected for report in reports) and not hypothesis_failures
    if args.json:
        print(json.dumps([variant_json(r, hypothesis_failures) for r in reports], indent=2))
    else:
        for line in table_lines(reports, hypothesis_failures):
            print(line)
        print()
        print(
            "every variant behaves as the catalog expects"
            if ok
            else "SOME VARIANTS DO NOT BEHAVE AS THE CATALOG EXPECTS"
        )
    return 0 if ok else 1


def _adapter_name(shape: str, named: str | None) -> str:
    """The adapter that drives `shape`: the one named, or the registry's for it."""
    if named is not None:
        entry = ADAPTERS.get(named)
        if entry is None:
            raise UsageError(f"unknown adapter {named!r}; choose from: {', '.join(ADAPTERS)}")
        if shape not in entry.shapes:
            raise UnsupportedConfig(
                f"the {named} adapter drives the {' and '.join(entry.shapes) or 'no'} session "
                f"shapes, not {shape}"
            )
        return named
    found = adapter_for(shape)
    if found is None:
        raise UnsupportedConfig(f"no adapter drives the {shape} session; the explorer checks it")
    return found.name


def _hypothesis(
    reports: list[VariantReport], examples: int, factory: AdapterFactory
) -> dict[str, list[str]]:
    """Mismatches found by scheduled Hypothesis runs, by variant name."""
    from hypothesis.stateful import run_state_machine_as_test

    found: dict[str, list[str]] = {}
    for report in reports:
        for cell in report.cells:
            machine = conformance_machine(cell.config, factory, scheduled=True)
            try:
                run_state_machine_as_test(machine, settings=machine_settings(examples))
            except Exception as error:  # a mismatch, with Hypothesis's steps as notes
                notes = "\n".join(getattr(error, "__notes__", []))
                found.setdefault(report.variant.name, []).append(f"{error}\n{notes}")
    return found
