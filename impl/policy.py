"""Which variant of the fix the activity runs, chosen by name.

The sites and variants are the model's own records (`model.sites`,
`model.variants`), read here as data, so one activity runs every variant of the
catalog and a new variant or site is written once: a policy is a variant asked by
site name, saying which sites hold the activity lock, which sites change the local
context at another moment than the real code does, and which session diffs.
"""

from __future__ import annotations

from attrs import frozen

from model.sites import SITES_BY_NAME, LocalUpdate
from model.variants import VARIANTS, SessionKind, Variant

__all__ = ["DEFAULT_POLICY", "POLICIES", "Policy", "SessionKind", "policy"]


@frozen
class Policy:
    """A variant of the model's catalog as the activity asks it: by site name."""

    variant: Variant

    @property
    def name(self) -> str:
        """The variant's name, which is also the policy's."""
        return self.variant.name

    @property
    def session(self) -> SessionKind:
        """Which session the variant's activity pushes through."""
        return self.variant.session

    @property
    def locked_sites(self) -> frozenset[str]:
        """The sites the variant names as locked (a three-way session locks none)."""
        return self.variant.locked_sites

    def locks(self, site: str) -> bool:
        """Whether `site` holds the activity lock across snapshot, push and acks."""
        return self.variant.locks(SITES_BY_NAME[site])

    def local_update(self, site: str) -> LocalUpdate:
        """When `site` changes the local context under this variant."""
        return self.variant.local_update(SITES_BY_NAME[site])


#: One policy per variant of the model's catalog, by name.
POLICIES: dict[str, Policy] = {variant.name: Policy(variant) for variant in VARIANTS}

#: The fixed variant (livekit-agents 1.8.9): all five sites lock.
DEFAULT_POLICY = POLICIES["lock5"]


def policy(name: str) -> Policy:
    """The policy of the variant called `name`; ValueError naming the choices otherwise."""
    try:
        return POLICIES[name]
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; choose from: {', '.join(POLICIES)}") from None
