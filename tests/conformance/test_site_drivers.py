"""A site the implementation's adapter cannot call is refused when the adapter is built,
not when a run reaches it."""

import pytest

from model import SITES, VARIANTS_BY_NAME, Call, Config, LocalUpdate, RequestSource, Scenario, Site
from model.environment import BASE
from proofs.adapters.impl import impl_adapter
from proofs.adapters.impl.adapter import SITE_DRIVERS
from proofs.engines.conformance import Lockstep
from proofs.errors import UnsupportedConfig


def test_every_catalog_site_has_a_driver() -> None:
    assert set(SITE_DRIVERS) == {site.name for site in SITES}


def test_a_site_without_a_driver_is_refused_before_any_step() -> None:
    extra = Site(
        "audited-push", "found by an audit", RequestSource.MIRROR_SNAPSHOT, LocalUpdate.BEFORE_PUSH
    )
    scenario = Scenario("odd", "a site impl lacks", (Call("audited-push", adds=("x1",)),))
    config = Config(VARIANTS_BY_NAME["lock5"], scenario, BASE, (extra,))
    with pytest.raises(UnsupportedConfig, match="impl has no site 'audited-push'"):
        Lockstep(config, impl_adapter)
