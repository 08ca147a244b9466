"""Judging the casebook (`model.cases`): every configuration of a case, before the
fix and after each one, explored under every environment column of the case.

The explorer is exact on the case's bounded scenario: a failing cell gets its
shortest counterexample, a holding one a proof for that scenario at every depth.
Each verdict is compared with what the case's record expects, so a fix that
closes less than its record says, or more, shows as a mismatch.
"""

from __future__ import annotations

from collections.abc import Callable

from attrs import frozen

from model import VARIANTS_BY_NAME, Config, Environment, Invariant, Verdict, Violation
from model.cases import Case, Fix
from proofs.engines.explore import explore
from proofs.engines.trace import Trace


@frozen
class CaseVerdict:
    """One cell of a case: a configuration, an invariant, an environment."""

    case: str
    #: The configuration's name: "before" or a fix's name.
    fix: str
    invariant: Invariant
    environment: Environment
    verdict: Verdict
    #: What the case's record expects.
    expected: Verdict
    #: What the verdict covers, e.g. "the case's scenario, every depth (12 states)".
    scope: str
    states: int
    seconds: float
    violation: Violation | None = None
    trace: Trace | None = None

    @property
    def matches(self) -> bool:
        return self.verdict is self.expected


def config_of(case: Case, fix: Fix, environment: Environment) -> Config:
    """The model's configuration for one (case, fix, environment)."""
    return Config(
        variant=VARIANTS_BY_NAME[fix.variant],
        scenario=case.scenario,
        environment=environment,
        shape=fix.shape,
    )


#: How a (fix, environment) cell becomes a model configuration.
Configure = Callable[[Fix, Environment], Config]


def judge_fix(case: Case, fix: Fix, configure: Configure | None = None) -> tuple[CaseVerdict, ...]:
    """Every (invariant, environment) cell of one configuration of `case`; `configure`
    builds each cell's model configuration (default `config_of`; a case file adds its
    own sites and variants that way)."""
    rows: list[CaseVerdict] = []
    for environment in case.environments:
        config = (
            config_of(case, fix, environment) if configure is None else configure(fix, environment)
        )
        exploration = explore(config, case.invariants)
        for finding in exploration.findings:
            expected = (
                Verdict.COUNTEREXAMPLE
                if fix.expects_failure(finding.invariant, environment)
                else Verdict.HOLDS
            )
            rows.append(
                CaseVerdict(
                    case=case.name,
                    fix=fix.name,
                    invariant=finding.invariant,
                    environment=environment,
                    verdict=finding.verdict,
                    expected=expected,
                    scope=f"the case's scenario, every depth ({exploration.states} states)",
                    states=exploration.states,
                    seconds=exploration.seconds,
                    violation=finding.violation,
                    trace=finding.trace,
                )
            )
    return tuple(rows)


def judge(case: Case) -> tuple[CaseVerdict, ...]:
    """Every cell of every configuration of `case`, the configuration before first."""
    return tuple(row for fix in case.configurations for row in judge_fix(case, fix))
