"""What the z3 per-scenario encoding models, for the tests that walk it.

The encoding's entry guard (`refuse_unmodelled`) turns away a session shape other
than those of `MODELLED_SHAPES` and a config where a reconnect can happen. The
tests that iterate over environments and move kinds leave out exactly that, read
off the model's tables, and `test_z3_schema.py` checks that the guard refuses
each config left out and accepts every other one, so a test never covers less
than the guard lets through.
"""

from __future__ import annotations

import attrs

from model import MOVES, OPTIONS, Config, Environment, MoveKind
from model.shapes import SHAPES_BY_NAME
from proofs.engines.smt.encoding import MODELLED_SHAPES

#: The options the encoding does not model: a reconnect of a shape that has one, an
#: item announced after a deleted one where the mirror does not put it at the tail.
UNMODELLED_OPTIONS: frozenset[str] = frozenset({"reconnects", "stale-anchors"})
#: The move kinds only those options enable (`model.MOVES`), and the local order's
#: `before-call` step, which the encoding leaves to the explorer (`ORDER_UNENCODED`).
UNMODELLED_MOVES: frozenset[MoveKind] = frozenset(
    kind for kind, spec in MOVES.items() if spec.option in UNMODELLED_OPTIONS
) | {MoveKind.BEFORE_CALL}
#: Every option the encoding models, on.
ALL_MODELLED = Environment.of(spec.name for spec in OPTIONS if spec.name not in UNMODELLED_OPTIONS)


def refused(config: Config) -> bool:
    """Whether the guard must refuse `config`: a shape it does not model, or a
    reconnect that can happen (the option on, and the shape rebuilds on it)."""
    bare = attrs.evolve(config.shape, name="", summary="", source="")
    modelled = any(
        bare == attrs.evolve(SHAPES_BY_NAME[name], name="", summary="", source="")
        for name in MODELLED_SHAPES
    )
    return not modelled or any(
        config.environment.on(option) and option not in config.inert_options()
        for option in UNMODELLED_OPTIONS
    )


def modelled(config: Config) -> Config:
    """`config` with the unmodelled options that apply to it turned off; an option
    its shape gives nothing to do (three-way's reconnect) stays on."""
    off = {
        OPTIONS_ATTR[option]: False
        for option in UNMODELLED_OPTIONS
        if option not in config.inert_options()
    }
    return attrs.evolve(config, environment=attrs.evolve(config.environment, **off))


OPTIONS_ATTR: dict[str, str] = {spec.name: spec.attribute for spec in OPTIONS}
