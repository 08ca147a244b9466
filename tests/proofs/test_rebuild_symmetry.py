"""Symmetry reduction under an emptied rebuild: its answers name no task, so renaming
interchangeable tasks maps runs to runs there too (it was off for a three-way
session while the rebuild's answers went to the last task, `tasks[REBUILD]`)."""

import attrs

from model import SHAPES_BY_NAME, VARIANTS_BY_NAME, Config
from model.shapes import OnReconnect, ReconnectMirror, ReconnectResends
from proofs.engines.compact import CompactModel, unsupported
from proofs.engines.symmetry import Symmetry, renamable
from tests.proofs.test_explore_compact_reconnect import RECONNECTS, _commutes, _mix

#: the three-way session given the released reconnect's emptied rebuild, sending again
#: only the current push's ops (the resend in task order turns symmetry off apart)
EMPTIED = attrs.evolve(
    SHAPES_BY_NAME["three-way"],
    on_reconnect=OnReconnect.REBUILD_FROM_MIRROR,
    reconnect_mirror=ReconnectMirror.EMPTIED,
    reconnect_resends=ReconnectResends.CURRENT_PUSH,
)


def test_an_emptied_three_way_rebuild_keeps_symmetry() -> None:
    config = Config(
        VARIANTS_BY_NAME["three-way"],
        _mix("user-turn", "user-turn").scenario,
        RECONNECTS,
        shape=EMPTIED,
    )
    assert unsupported(config) is None
    model = CompactModel(config)
    assert renamable(model)
    sym = Symmetry(model)
    assert sym.active
    assert list(_commutes(config, sym)) == []
