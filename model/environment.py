"""What the environment may do, as switchable options.

Delivery (the server applying the next op, the client applying the next event)
is always on: without it nothing is ever acknowledged. Each option below adds
moves, so a verdict under a larger environment covers every smaller one.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs
from attrs import frozen


@frozen
class OptionSpec:
    """One environment option: its name on the command line and in verdicts, and the
    `Environment` field that holds it."""

    name: str
    attribute: str
    summary: str


@frozen(order=True)
class Environment:
    """A set of environment options; a verdict holds under these assumptions."""

    #: The application takes its replacement copy in a step of its own, so the
    #: copy may predate any number of later moves.
    stale_copies: bool = False
    #: The model creates items server-side (assistant messages, function calls,
    #: transcribed audio) that reach the mirror before the local context.
    server_items: bool = False
    #: A push's wait for acks can time out; it ends with an error and releases its
    #: locks while its ops stay in flight.
    timeouts: bool = False
    #: The server can reject any op (answered by an error event).
    rejections: bool = False
    #: The connection can drop and come back; a shape that rebuilds on reconnect
    #: does so (a shape with no reconnect of its own is not affected).
    reconnects: bool = False
    #: The model's item can be announced anchored on an item the server has deleted
    #: (the server put it at its tail; the event names the stale anchor).
    stale_anchors: bool = False

    def on(self, option: str) -> bool:
        """Whether the option named `option` (`OPTIONS`) is on; KeyError for an unknown one."""
        return bool(getattr(self, OPTIONS_BY_NAME[option].attribute))

    @property
    def options(self) -> tuple[str, ...]:
        """The names of the options that are on, in `OPTION_NAMES` order."""
        return tuple(spec.name for spec in OPTIONS if getattr(self, spec.attribute))

    @property
    def name(self) -> str:
        """How verdicts name it: `base`, `all`, or the options joined by `+`."""
        on = self.options
        if not on:
            return "base"
        if len(on) == len(OPTION_NAMES):
            return "all"
        return "+".join(on)

    def covers(self, other: Environment) -> bool:
        """True when every option of `other` is on here."""
        return all(self.on(option) or not other.on(option) for option in OPTION_NAMES)

    @classmethod
    def of(cls, options: Iterable[str]) -> Environment:
        """The environment with exactly the named options on; KeyError for an unknown one."""
        return cls(**{OPTIONS_BY_NAME[name].attribute: True for name in options})


#: Every option, in the order verdicts name them. One row per `Environment` field.
OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "stale-copies",
        "stale_copies",
        "the application copies the local context in a step of its own, so the copy may be stale",
    ),
    OptionSpec(
        "server-items",
        "server_items",
        "the model creates items server-side that reach the mirror before the local context",
    ),
    OptionSpec(
        "timeouts",
        "timeouts",
        "an ack wait can time out: the push fails and releases its locks, its ops in flight",
    ),
    OptionSpec("rejections", "rejections", "the server can reject any op"),
    OptionSpec(
        "reconnects",
        "reconnects",
        "the connection drops (ops and events in flight lost) and comes back; a shape that "
        "rebuilds on reconnect rebuilds the server conversation from its mirror",
    ),
    OptionSpec(
        "stale-anchors",
        "stale_anchors",
        "the model's next item is announced anchored on an item the server has deleted",
    ),
)
OPTIONS_BY_NAME: dict[str, OptionSpec] = {spec.name: spec for spec in OPTIONS}
OPTION_NAMES: tuple[str, ...] = tuple(spec.name for spec in OPTIONS)


def _check_options() -> None:
    fields = {field.name for field in attrs.fields(Environment)}
    rows = {spec.attribute for spec in OPTIONS}
    if fields != rows:
        raise ValueError(f"Environment fields {sorted(fields)} and OPTIONS {sorted(rows)} differ")


_check_options()

BASE = Environment()
ALL = Environment(
    stale_copies=True,
    server_items=True,
    timeouts=True,
    rejections=True,
    reconnects=True,
    stale_anchors=True,
)

#: The environments the verdict table has a column for: none, each option alone, all.
ENVIRONMENTS: tuple[Environment, ...] = (
    BASE,
    Environment(stale_copies=True),
    Environment(server_items=True),
    Environment(timeouts=True),
    Environment(rejections=True),
    Environment(reconnects=True),
    Environment(stale_anchors=True),
    ALL,
)

ENVIRONMENTS_BY_NAME: dict[str, Environment] = {env.name: env for env in ENVIRONMENTS}


def parse_environment(text: str) -> Environment:
    """Parse `base`, `all`, or options joined by `+` (e.g. `stale-copies+timeouts`)."""
    if text in ENVIRONMENTS_BY_NAME:
        return ENVIRONMENTS_BY_NAME[text]
    parts = [part.strip() for part in text.split("+") if part.strip()]
    unknown = [part for part in parts if part not in OPTION_NAMES]
    if not parts or unknown:
        raise ValueError(
            f"unknown environment {text!r}; use base, all, or options joined by '+' "
            f"from: {', '.join(OPTION_NAMES)}"
        )
    return Environment.of(parts)
