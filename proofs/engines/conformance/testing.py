"""The conformance harness as a `unittest.TestCase` for a team's own pytest suite.

A team porting the fix writes one `Adapter` for its code and one line in a
test module:

    TestOurSession = conformance_test_case(our_adapter, variant="lock5")

pytest (or unittest) then collects three tests per (scenario, environment)
cell, one per mode, so a failure names the mode and the cell that found it:

* ``test_exhaustive__<cell>``: every stimulus sequence the model allows, up
  to `depth`, in lockstep; no mismatch, and the implementation breaks an
  invariant exactly where the variant's catalog entry says it does;
* ``test_hypothesis__<cell>``: Hypothesis in scheduler mode (bursts of stimuli
  and reordered ready callbacks), which sees awaits the model lacks that one
  stimulus at a time cannot; it fails on a mismatch or an unexpected break;
* ``test_replay__<cell>``: each shortest counterexample the explorer finds in
  the model, replayed in the implementation, breaks the same invariant on the
  same item through the same site.

Every failure message ends with the lines that replay it.
"""

from __future__ import annotations

import re
import unittest
from collections.abc import Callable, Iterable

import attrs
from hypothesis.stateful import run_state_machine_as_test

from model import (
    SCENARIOS,
    SCENARIOS_BY_NAME,
    VARIANTS_BY_NAME,
    Config,
    Environment,
    Invariant,
    Scenario,
    Site,
    Variant,
    Verdict,
    parse_environment,
)
from proofs.engines.conformance.adapter import AdapterFactory
from proofs.engines.conformance.exhaustive import exhaust
from proofs.engines.conformance.lockstep import FoundViolation, Mismatch, trace_steps
from proofs.engines.conformance.machine import (
    ConformanceMachine,
    conformance_machine,
    machine_settings,
)
from proofs.engines.conformance.run import DEFAULT_DEPTH, drivable, replay_trace
from proofs.engines.conformance.steps import Step, format_steps
from proofs.engines.explore import explore

#: The three modes, in the order each cell's tests run.
MODES = ("exhaustive", "hypothesis", "replay")


def conformance_test_case(
    factory: AdapterFactory,
    *,
    variant: str | Variant,
    scenarios: Iterable[str | Scenario] | None = None,
    sites: Iterable[str] | None = None,
    environments: Iterable[str | Environment] | None = None,
    extra_sites: Iterable[Site] = (),
    appends_locally: bool = False,
    depth: int = DEFAULT_DEPTH,
    examples: int = 20,
    modes: Iterable[str] = MODES,
    name: str | None = None,
) -> type[unittest.TestCase]:
    """A TestCase class checking `factory`'s implementation against `variant`.

    `variant` is the discipline the implementation claims (``"lock5"``, or a
    `model.Variant`): its catalog entry says which cells must break which
    invariant, and the tests hold the implementation to exactly that.
    `scenarios` defaults to the whole catalog; `sites`, the catalog sites the
    implementation has, leaves out scenarios that call any other. Each cell
    runs under its scenario's own environment unless `environments` is given
    (``"all"`` is the strictest). `depth` bounds the exhaustive mode (the
    default covers every catalog sequence), `examples` the Hypothesis mode.
    `extra_sites` are site records of your own (`model.Site`) that your own
    scenarios call. `appends_locally=True` says your agent's context appends every
    new item at its end; by default the model places items as livekit's
    `ChatContext` does, by creation time (`docs/model.md`, "The local context's order").
    """
    chosen = _variant(variant)
    asked_cells = [
        attrs.evolve(config, appends_locally=appends_locally)
        for config in _cells(chosen, scenarios, sites, environments, tuple(extra_sites))
    ]
    # a test is named by the environment asked for; it runs without a reconnect,
    # which the adapter interface cannot drive (`run.drivable`)
    _asked = [config.environment.name for config in asked_cells]
    cells = [drivable(config) for config in asked_cells]
    modes = tuple(modes)
    unknown = sorted(set(modes) - set(MODES))
    if unknown:
        raise ValueError(f"unknown mode {unknown[0]!r}; choose from: {', '.join(MODES)}")
    namespace: dict[str, object] = {
        "__doc__": f"Conformance of {getattr(factory, '__name__', factory)!s} "
        f"to the model's {chosen.name}.",
        "configs": tuple(cells),
        "factory": staticmethod(factory),
    }
    for asked, config in zip(_asked, cells, strict=True):
        cell = _ident(f"{config.scenario.name}__{asked}")
        for mode in MODES:
            if mode in modes:
                namespace[f"test_{mode}__{cell}"] = _TESTS[mode](config, factory, depth, examples)
    class_name = name or "Conformance_" + _ident(chosen.name)
    return type(class_name, (unittest.TestCase,), namespace)


# -- choosing the cells ------------------------------------------------------------------


def _variant(variant: str | Variant) -> Variant:
    if isinstance(variant, Variant):
        return variant
    if variant not in VARIANTS_BY_NAME:
        raise ValueError(
            f"unknown variant {variant!r}; choose the discipline your code implements from: "
            f"{', '.join(VARIANTS_BY_NAME)}"
        )
    return VARIANTS_BY_NAME[variant]


def _cells(
    variant: Variant,
    scenarios: Iterable[str | Scenario] | None,
    sites: Iterable[str] | None,
    environments: Iterable[str | Environment] | None,
    extra_sites: tuple[Site, ...],
) -> list[Config]:
    chosen: list[Scenario] = []
    for scenario in SCENARIOS if scenarios is None else scenarios:
        if isinstance(scenario, str):
            if scenario not in SCENARIOS_BY_NAME:
                raise ValueError(
                    f"unknown scenario {scenario!r}; choose from: {', '.join(SCENARIOS_BY_NAME)}, "
                    "or pass a model.Scenario of your own"
                )
            scenario = SCENARIOS_BY_NAME[scenario]
        chosen.append(scenario)
    if sites is not None:
        have = set(sites)
        chosen = [s for s in chosen if {call.site for call in s.calls} <= have]
        if not chosen:
            raise ValueError(
                f"no scenario calls only the sites {sorted(have)}; name catalog sites "
                "(see `model.SITES`) or pass scenarios of your own"
            )
    forced: list[Environment] | None = None
    if environments is not None:
        forced = [parse_environment(env) if isinstance(env, str) else env for env in environments]
    return [
        Config(variant, scenario, environment, extra_sites)
        for scenario in chosen
        for environment in (forced if forced is not None else [scenario.environment])
    ]


def _ident(text: str) -> str:
    return re.sub(r"\W", "_", text)


# -- the three modes ---------------------------------------------------------------------

_Test = Callable[[unittest.TestCase], None]


def _exhaustive(config: Config, factory: AdapterFactory, depth: int, examples: int) -> _Test:
    def test(self: unittest.TestCase) -> None:
        result = exhaust(config, depth, factory)
        problems: list[tuple[str, tuple[Step, ...]]] = [
            (
                f"MISMATCH after {format_steps(failure.steps) or 'the start'}:\n  {failure.detail}",
                failure.steps,
            )
            for failure in result.mismatches
        ]
        for invariant, found in sorted(result.violations.items(), key=lambda kv: kv[0].value):
            if _expected(config, invariant) is Verdict.HOLDS:
                problems.append((_unexpected(config, found), found.steps))
        for invariant in Invariant:
            if _expected(config, invariant) is Verdict.COUNTEREXAMPLE and (
                invariant not in result.violations
            ):
                problems.append((_missed(config, invariant, depth, result.truncated), ()))
        if problems:
            self.fail(_report(config, "exhaustive", problems))

    test.__doc__ = f"Every stimulus sequence up to depth {depth}: {_cell(config)}."
    return test


def _hypothesis(config: Config, factory: AdapterFactory, depth: int, examples: int) -> _Test:
    def test(self: unittest.TestCase) -> None:
        machine = _expecting_machine(config, factory)
        try:
            run_state_machine_as_test(machine, settings=machine_settings(examples))
        except (Mismatch, _Unexpected) as error:
            notes = "\n".join(getattr(error, "__notes__", []))
            text = error.detail if isinstance(error, Mismatch) else str(error)
            problem = f"{text}\nthe steps, as Hypothesis shrank them:\n{notes}"
            self.fail(
                _report(config, "Hypothesis (bursts and schedules)", [(problem, error.steps)])
            )

    test.__doc__ = f"{examples} Hypothesis runs with bursts and schedules: {_cell(config)}."
    return test


def _replay_mode(config: Config, factory: AdapterFactory, depth: int, examples: int) -> _Test:
    def test(self: unittest.TestCase) -> None:
        findings = [
            f for f in explore(config).findings if f.trace is not None and f.violation is not None
        ]
        if not findings:
            self.skipTest(f"the model keeps every invariant in {_cell(config)}: nothing to replay")
        problems: list[tuple[str, tuple[Step, ...]]] = []
        for finding in findings:
            assert finding.trace is not None and finding.violation is not None
            steps = trace_steps(config, finding.trace.moves)
            replay = replay_trace(
                config,
                finding.invariant,
                steps,
                finding.violation.item,
                finding.violation.site,
                factory,
            )
            if not replay.reproduced:
                problems.append(
                    (
                        f"the model's counterexample for {finding.invariant.value} "
                        f"({finding.violation.describe()}) did not reproduce: {replay.detail}\n"
                        f"  steps: {format_steps(steps)}\n"
                        "  code that matches the model step by step breaks what the model "
                        "breaks; check that the adapter reports every delete it sends",
                        steps,
                    )
                )
        if problems:
            self.fail(_report(config, "replay of the explorer's counterexamples", problems))

    test.__doc__ = f"The explorer's shortest counterexamples, replayed: {_cell(config)}."
    return test


_TESTS: dict[str, Callable[[Config, AdapterFactory, int, int], _Test]] = {
    "exhaustive": _exhaustive,
    "hypothesis": _hypothesis,
    "replay": _replay_mode,
}


class _Unexpected(AssertionError):
    """An invariant broken where the variant keeps it, with the steps that broke it."""

    def __init__(self, text: str, steps: tuple[Step, ...]) -> None:
        super().__init__(text)
        self.steps = steps


def _expecting_machine(config: Config, factory: AdapterFactory) -> type[ConformanceMachine]:
    """The scheduled Hypothesis machine, failing on a break the variant does not expect
    (an expected one is the variant's own bug, which the implementation must have)."""
    base = conformance_machine(config, factory, scheduled=True)

    def teardown(self: ConformanceMachine) -> None:
        base.teardown(self)
        for invariant, found in self.run.violations.items():
            if _expected(config, invariant) is Verdict.HOLDS:
                raise _Unexpected(_unexpected(config, found), found.steps)

    return type(base.__name__, (base,), {"teardown": teardown})


# -- messages that say what to do next -----------------------------------------------------


def _expected(config: Config, invariant: Invariant) -> Verdict:
    return config.variant.expected(config.scenario.name, config.environment, invariant)


def _cell(config: Config) -> str:
    return f"{config.variant.name} / {config.scenario.name} / {config.environment.name}"


def _report(config: Config, mode: str, problems: list[tuple[str, tuple[Step, ...]]]) -> str:
    """The problems a mode found, shortest first, then the lines that replay the first."""
    problems = sorted(problems, key=lambda problem: len(problem[1]) or 10**6)
    text = f"{_cell(config)}, {mode}:\n" + "\n\n".join(problem for problem, _ in problems)
    steps = next((steps for _, steps in problems if steps), None)
    return text if steps is None else text + "\n\n" + _replay(config, steps)


def _unexpected(config: Config, found: FoundViolation) -> str:
    return (
        f"the implementation breaks {found.invariant.value}, which the model's "
        f"{config.variant.name} keeps here: {found.reason}\n"
        f"  steps: {format_steps(found.steps)}\n"
        "  a site of yours pushes without the discipline the variant has (run `ackguard "
        "audit` on it), or it awaits where the model does not (compare with docs/model.md)"
    )


def _missed(config: Config, invariant: Invariant, depth: int, truncated: bool) -> str:
    why = next(
        (
            failure.why
            for failure in config.variant.known_failures
            if failure.scenario == config.scenario.name and failure.invariant is invariant
        ),
        "",
    )
    hint = (
        f"raise depth (now {depth}): some sequences were cut"
        if truncated
        else "your code is not the variant you named: pick the one it implements "
        "(`ackguard explore --variant V --scenario S --trace` shows each variant's trace)"
    )
    return (
        f"the model's {config.variant.name} breaks {invariant.value} here ({why}), "
        f"the implementation never did\n  {hint}"
    )


def _replay(config: Config, steps: tuple[Step, ...]) -> str:
    """Lines that replay `steps` on a fresh run, for a cell of the catalog's own."""
    call = f'run = Lockstep.replay(config, parse_steps("{format_steps(steps)}"), factory)'
    catalog = (
        VARIANTS_BY_NAME.get(config.variant.name) == config.variant
        and SCENARIOS_BY_NAME.get(config.scenario.name) == config.scenario
        and not config.extra_sites
    )
    if not catalog:
        return f"replay, with your config and factory:\n    {call}"
    return (
        "replay (the run raises the mismatch, or has the break in run.violations):\n"
        "    from model import SCENARIOS_BY_NAME, VARIANTS_BY_NAME, Config, parse_environment\n"
        "    from proofs.engines.conformance import Lockstep, parse_steps\n"
        f'    config = Config(VARIANTS_BY_NAME["{config.variant.name}"], '
        f'SCENARIOS_BY_NAME["{config.scenario.name}"], '
        f'parse_environment("{config.environment.name}"))\n'
        f"    {call}  # factory: your adapter factory"
    )
