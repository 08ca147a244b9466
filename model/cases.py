"""The casebook as data: real reports of this bug class, each a scenario, the
configuration before the fix, and each proposed fix as another configuration.

A case is written with records only (a variant, a session shape, an environment,
a scenario); no model code is written per case, so the next report is one more
record (docs/casebook.md, "Adding a report"). `proofs.engines.casebook` judges each
configuration with the explorer and compares the result with what the record
expects.
"""

from __future__ import annotations

from attrs import frozen

from model.environment import Environment
from model.scenarios import Scenario
from model.shapes import SessionShape
from model.variants import Invariant


@frozen
class Expected:
    """One (invariant, environment) cell a configuration is expected to fail;
    every other cell of its case is expected to hold."""

    invariant: Invariant
    environment: Environment
    #: Why, in one line of our own words (shown beside the counterexample).
    why: str = ""


@frozen
class Fix:
    """One configuration of a case: before any fix, a merged fix, or a proposal."""

    #: "before", or the change's short name, e.g. "pr-4960".
    name: str
    #: One line, our own words.
    summary: str
    #: The agent-side variant (a name in `model.VARIANTS_BY_NAME`).
    variant: str
    #: The provider session's shape under this configuration.
    shape: SessionShape
    #: The pull request or commit, if any.
    link: str = ""
    #: "merged", "closed unmerged", "proposal", or "" for the configuration before.
    status: str = ""
    #: The release on the package registry that has this configuration, e.g.
    #: "livekit-agents==1.2.3", or "" when none does.
    release: str = ""
    #: The cells expected to fail; any other cell is expected to hold.
    fails: tuple[Expected, ...] = ()

    def expects_failure(self, invariant: Invariant, environment: Environment) -> bool:
        """Whether the record expects (invariant, environment) to fail: a failure
        needed under a smaller environment shows under every larger one too."""
        return any(
            e.invariant is invariant and environment.covers(e.environment) for e in self.fails
        )


@frozen
class Case:
    """One report: its scenario, the configuration before, and every fix."""

    #: The report's short name, e.g. "livekit-agents-4960".
    name: str
    title: str
    #: Links to the report and its discussion.
    reports: tuple[str, ...]
    #: What happened, in our own words (a paragraph).
    summary: str
    scenario: Scenario
    before: Fix
    fixes: tuple[Fix, ...]
    #: The invariants the case is judged on.
    invariants: tuple[Invariant, ...]
    #: The environment columns every configuration is judged under.
    environments: tuple[Environment, ...]

    @property
    def configurations(self) -> tuple[Fix, ...]:
        """The configuration before, then each fix, in order."""
        return (self.before, *self.fixes)


#: The catalog of cases, in the order of docs/casebook.md.
CASES: tuple[Case, ...] = ()

CASES_BY_NAME: dict[str, Case] = {case.name: case for case in CASES}
