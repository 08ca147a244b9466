"""Look-ups of catalog names for the command line, with errors that list the choices."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TypeVar

from model import ENVIRONMENTS, SCENARIOS_BY_NAME, VARIANTS_BY_NAME, Environment, Scenario, Variant
from model import parse_environment as _parse_environment

T = TypeVar("T")


class UsageError(Exception):
    """Bad input from the command line: printed as one line, exit status 2."""


def pick(kind: str, names: list[str] | None, catalog: Mapping[str, T]) -> list[T]:
    """The named entries of a catalog, or all of them when no name is given."""
    if not names:
        return list(catalog.values())
    unknown = [name for name in names if name not in catalog]
    if unknown:
        raise UsageError(f"unknown {kind} {unknown[0]!r}; choose from: {', '.join(catalog)}")
    return [catalog[name] for name in names]


def variants(names: list[str] | None) -> list[Variant]:
    return pick("variant", names, VARIANTS_BY_NAME)


def scenarios(names: list[str] | None) -> list[Scenario]:
    return pick("scenario", names, SCENARIOS_BY_NAME)


def environments(names: list[str] | None) -> list[Environment]:
    if not names:
        return list(ENVIRONMENTS)
    try:
        return [_parse_environment(name) for name in names]
    except ValueError as error:
        raise UsageError(str(error)) from None


def positive_int(text: str) -> int:
    """argparse type for bounds: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of at least 1, got {value}")
    return value


def add_catalog_arguments(parser: argparse.ArgumentParser) -> None:
    """`--variant` and `--scenario`, each repeatable: the catalog entries to run,
    every one of them when none is given (see `variants` and `scenarios`)."""
    parser.add_argument("--variant", action="append", metavar="V", help="repeatable")
    parser.add_argument("--scenario", action="append", metavar="S", help="repeatable")
