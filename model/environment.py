"""What the environment may do, as switchable options.

Delivery (the server applying the next op, the client applying the next event)
is always on: without it nothing is ever acknowledged. Each option below adds
moves, so a verdict under a larger environment covers every smaller one.
"""

from __future__ import annotations

from attrs import frozen


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

    @property
    def options(self) -> tuple[str, ...]:
        """The names of the options that are on, in `OPTION_NAMES` order."""
        return tuple(
            label
            for label, flag in (
                ("stale-copies", self.stale_copies),
                ("server-items", self.server_items),
                ("timeouts", self.timeouts),
                ("rejections", self.rejections),
            )
            if flag
        )

    @property
    def name(self) -> str:
        on = self.options
        if not on:
            return "base"
        if len(on) == len(OPTION_NAMES):
            return "all"
        return "+".join(on)

    def covers(self, other: Environment) -> bool:
        """True when every option of `other` is on here."""
        return all(
            mine or not theirs
            for mine, theirs in (
                (self.stale_copies, other.stale_copies),
                (self.server_items, other.server_items),
                (self.timeouts, other.timeouts),
                (self.rejections, other.rejections),
            )
        )


OPTION_NAMES: tuple[str, ...] = ("stale-copies", "server-items", "timeouts", "rejections")

BASE = Environment()
ALL = Environment(stale_copies=True, server_items=True, timeouts=True, rejections=True)

#: The environments the verdict table has a column for: none, each option alone, all.
ENVIRONMENTS: tuple[Environment, ...] = (
    BASE,
    Environment(stale_copies=True),
    Environment(server_items=True),
    Environment(timeouts=True),
    Environment(rejections=True),
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
    return Environment(
        stale_copies="stale-copies" in parts,
        server_items="server-items" in parts,
        timeouts="timeouts" in parts,
        rejections="rejections" in parts,
    )
