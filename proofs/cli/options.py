"""Look-ups of catalog names for the command line, with errors that list the choices."""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NoReturn, TypeVar

from model import (
    ENVIRONMENTS,
    SCENARIOS_BY_NAME,
    SHAPES_BY_NAME,
    VARIANTS_BY_NAME,
    Environment,
    Scenario,
    SessionShape,
    Variant,
)
from model import parse_environment as _parse_environment
from proofs.errors import UsageError

T = TypeVar("T")


def pick(kind: str, names: list[str] | None, catalog: Mapping[str, T]) -> list[T]:
    """The named entries of a catalog, each once (a name given twice would double its
    rows and its time), or all of them when no name is given."""
    if not names:
        return list(catalog.values())
    unknown = [name for name in names if name not in catalog]
    if unknown:
        raise UsageError(f"unknown {kind} {unknown[0]!r}; choose from: {', '.join(catalog)}")
    return [catalog[name] for name in dict.fromkeys(names)]


def variants(names: list[str] | None) -> list[Variant]:
    return pick("variant", names, VARIANTS_BY_NAME)


def scenarios(names: list[str] | None) -> list[Scenario]:
    return pick("scenario", names, SCENARIOS_BY_NAME)


#: The shapes some variant goes with (`Variant.shapes`): what `--session` chooses
#: from. A shape no variant goes with (the released reconnect, `openai-reconnect`) is
#: a record the casebook and the livekit checks use, with no expectations per cell.
PAIRED_SHAPES: dict[str, SessionShape] = {
    name: shape
    for name, shape in SHAPES_BY_NAME.items()
    if any(name in variant.shapes for variant in VARIANTS_BY_NAME.values())
}


def add_session_argument(parser: argparse.ArgumentParser) -> None:
    """`--session NAME`, repeatable: the provider session shapes to check."""
    parser.add_argument(
        "--session",
        action="append",
        metavar="NAME",
        help=f"repeatable: a provider session shape ({', '.join(PAIRED_SHAPES)}); default: "
        "every shape each variant goes with",
    )


def sessions(names: list[str] | None) -> list[SessionShape]:
    """The named session shapes (UsageError, one line, for an unknown name or one no
    variant goes with), or all."""
    for name in names or ():
        if name in SHAPES_BY_NAME and name not in PAIRED_SHAPES:
            raise UsageError(
                f"session {name!r} goes with no variant: it is a released shape the casebook "
                f"(verify --case) and the livekit checks use; choose from: "
                f"{', '.join(PAIRED_SHAPES)}"
            )
    return pick("session", names, PAIRED_SHAPES)


def pairs(
    variants: list[Variant], shapes: list[SessionShape]
) -> list[tuple[Variant, SessionShape]]:
    """The meaningful (variant, shape) pairs of the chosen ones; UsageError when none is."""
    chosen = [
        (variant, shape) for variant in variants for shape in shapes if shape.name in variant.shapes
    ]
    if not chosen:
        raise UsageError(
            f"no chosen variant goes with session {', '.join(s.name for s in shapes)} "
            "(the three-way variant is the three-way session; the others go with the rest)"
        )
    return chosen


def environments(names: list[str] | None) -> list[Environment]:
    if not names:
        return list(ENVIRONMENTS)
    try:
        # each once, also when two spellings name one ("timeouts+rejections", "rejections+timeouts")
        return list(dict.fromkeys(_parse_environment(name) for name in names))
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


def bounded_int(high: int, why: str) -> Callable[[str], int]:
    """argparse type for a count with a ceiling: a whole number from 1 to `high`; the
    error above it says `why` the ceiling is there."""

    def parse(text: str) -> int:
        value = positive_int(text)
        if value > high:
            raise argparse.ArgumentTypeError(f"expected at most {high} ({why}), got {value}")
        return value

    return parse


def writable_file(option: str, text: str) -> Path:
    """The file an option will write, checked before any work starts: its directory
    exists and takes a new file, and the name is not a directory."""
    path = Path(text)
    if path.is_dir():
        raise UsageError(f"{option} {text}: is a directory; name a file")
    writable_directory(option, text, path.parent)
    if path.exists() and not os.access(path, os.W_OK):
        raise UsageError(f"{option} {text}: not writable")
    return path


def writable_directory(option: str, text: str, directory: Path) -> None:
    """Raise unless a file can be made in `directory` (tried, not guessed from modes)."""
    if not directory.is_dir():
        what = "does not exist" if not directory.exists() else "is not a directory"
        raise UsageError(f"{option} {text}: {directory} {what}")
    try:
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as error:
        raise UsageError(
            f"{option} {text}: cannot write in {directory}: {error.strerror}"
        ) from None


def add_catalog_arguments(parser: argparse.ArgumentParser) -> None:
    """`--variant` and `--scenario`, each repeatable: the catalog entries to run,
    every one of them when none is given (see `variants` and `scenarios`)."""
    parser.add_argument("--variant", action="append", metavar="V", help="repeatable")
    parser.add_argument("--scenario", action="append", metavar="S", help="repeatable")


class HelpFormatter(argparse.HelpFormatter):
    """Prose is wrapped to the terminal; examples keep their line breaks.

    Text is split into paragraphs at blank lines. A paragraph with an indented
    line (`examples:` followed by one indented command a line) is printed as
    written, so no command is broken in two; any other paragraph is filled.
    Every subcommand gets this formatter (`build_parser`), so all render alike.
    """

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        filled = []
        for part in text.split("\n\n"):
            lines = part.strip("\n").splitlines()
            if any(line.startswith(" ") for line in lines):
                filled.append("\n".join(indent + line for line in lines))
            elif lines:
                filled.append(super()._fill_text(part, width, indent))
        return "\n\n".join(filled)


class Parser(argparse.ArgumentParser):
    """Argument errors as one line and status 2, without the usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")
