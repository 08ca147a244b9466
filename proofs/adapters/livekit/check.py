"""Per-release dynamic verdicts: the installed livekit-agents against the model.

For every catalog scenario, under its own environment:

* the model's counterexamples (for the release's variant, and for `unlocked`,
  the weakest, so that a release the model clears is tried on the interleaving
  that breaks the others) are replayed against the real code (`replay.run`);
* every stimulus sequence the model allows for the release's variant is run
  too (the scenarios are small: at most a dozen sequences each), and each
  reports whether the real code stepped with the model;
* the verdict: which invariants the real code broke, which items it lost or
  brought back, whether that is what the catalog expects of the variant, and
  the shortest interleaving that shows it.

`python -m proofs.cli.livekit_release --json` prints the report of whatever release
is installed; `proofs.adapters.livekit.releases.run_release` runs it for another one.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from attrs import evolve

from model import OPTIONS_BY_NAME, Config, Environment, Invariant, Scenario, Verdict
from model.scenarios import SCENARIOS, Call
from model.shapes import SHAPES_BY_NAME, InterruptionEnd, SessionShape
from model.sites import with_speech_turn
from model.variants import VARIANTS_BY_NAME
from proofs.adapters.livekit.releases import (
    RELEASES_BY_VERSION,
    Release,
    installed_version,
)
from proofs.adapters.livekit.replay import Outcome, run, sequences
from proofs.engines.audit import SITE_REQUESTS, audit_source
from proofs.engines.explore import explore
from proofs.errors import ReleaseUnavailable, UnsupportedConfig

#: The realtime models a release can run over: ackguard's stand-in (in-process,
#: no socket) or the release's own OpenAI plugin over the gated websocket.
PROVIDERS = ("standin", "plugin")

Runner = Callable[[Config, Iterable[Any]], Outcome]


def runner(provider: str) -> Runner:
    """How one interleaving is run over `provider` (see `PROVIDERS`)."""
    if provider == "standin":
        return run
    if provider == "plugin":
        from proofs.adapters.livekit.plugin import run_plugin

        return run_plugin
    raise ValueError(f"unknown provider {provider!r}; choose from {', '.join(PROVIDERS)}")


#: The variant whose counterexamples every release is also tried on.
WEAKEST = "unlocked"

#: Each site alone, so that every path is shown reached through the public API
#: (the catalog's cleanup-during-tool-push has to call the activity's coroutine).
PATHS: tuple[Scenario, ...] = (
    Scenario("user-turn-alone", "generate_reply(user_input=...)", (Call("user-turn", ("hello",)),)),
    Scenario("tool-outputs-alone", "a tool returns", (Call("tool-outputs", ("out1",)),)),
    Scenario(
        "replacement-alone", "agent.update_chat_ctx(copy)", (Call("replacement", ("note1",)),)
    ),
    Scenario("spoken-message-alone", "say(text)", (Call("spoken-message", ("spoken1",)),)),
    Scenario(
        "cleanup-alone",
        "session.interrupt() before a message plays",
        (Call("cleanup", drops=("asst1",)),),
        server=("msg0", "asst1"),
        local=("msg0",),
    ),
    Scenario(
        "interrupted-tool-outputs-alone",
        "session.interrupt() after a tool returned",
        (Call("interrupted-tool-outputs", ("out1",)),),
    ),
)


def _labels(invariants: Iterable[Invariant]) -> list[str]:
    return sorted(invariant.value for invariant in invariants)


def _outcome_json(outcome: Outcome, source: str | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "stimuli": list(outcome.stimuli),
        "broken": _labels(outcome.broken),
        "lost": list(outcome.lost),
        "recreated": list(outcome.recreated),
        "divergence": outcome.divergence,
        "stuck": outcome.stuck,
        "unreached": list(outcome.unreached),
        "errors": list(outcome.errors),
        "background_losses": list(outcome.background_losses),
        "violations": {
            invariant.value: {
                "item": violation.item,
                "task": violation.task,
                "reason": violation.reason,
                "after": outcome.violation_steps[invariant],
            }
            for invariant, violation in sorted(
                outcome.violations.items(), key=lambda kv: kv[0].value
            )
        },
    }
    if source is not None:
        data["source"] = source
    return data


def release_shape(variant: str) -> SessionShape:
    """The provider session of a livekit release's model: the variant's own shape
    (livekit's OpenAI session), with the facts of the released plugin that the
    catalog's record leaves off, one `evolve` field per fact."""
    shape = SHAPES_BY_NAME[VARIANTS_BY_NAME[variant].shape]
    return evolve(
        shape,
        interruption_end=InterruptionEnd.ON_DONE_EVENT,
    )


def release_config(
    variant: str, scenario: Scenario, environment: Environment, speech_turn: bool = True
) -> Config:
    """The model of a livekit release: `variant` on the site records with livekit's
    speech turn (`model.sites.with_speech_turn`), the scheduler both releases have,
    and its session (`release_shape`); `speech_turn=False` gives the catalog's
    records, which wait for no turn."""
    extra = with_speech_turn() if speech_turn else ()
    return Config(
        VARIANTS_BY_NAME[variant],
        scenario,
        environment,
        extra_sites=extra,
        shape=release_shape(variant),
    )


def with_options(environment: Environment, options: Iterable[str]) -> Environment:
    """`environment` with more options on (`timeouts`, `rejections`, ...)."""
    on = {name.replace("_", "-") for name in options}
    unknown = on - set(OPTIONS_BY_NAME)
    if unknown:
        raise ValueError(f"unknown environment option(s): {', '.join(sorted(unknown))}")
    return Environment.of({*environment.options, *on})


def check_scenario(
    release: Release,
    scenario: Scenario,
    *,
    sweep: bool = True,
    options: tuple[str, ...] = (),
    provider: str = "standin",
    speech_turn: bool = True,
) -> dict[str, Any]:
    """One scenario: the model's counterexamples and (`sweep`) every interleaving the
    model allows, run over `provider`; the real outcome beside the explorer's verdict
    (`speech_turn=False`: the model without livekit's speech turn, to show it matters)."""
    go = runner(provider)
    variant = VARIANTS_BY_NAME[release.variant]
    environment = with_options(scenario.environment, options)
    config = release_config(release.variant, scenario, environment, speech_turn)
    applicable = all(call.site in release.sites for call in scenario.calls)
    replays: list[dict[str, Any]] = []
    outcomes: list[Outcome] = []
    seen: set[tuple[str, ...]] = set()
    explorations = {
        source: explore(release_config(source, scenario, environment, speech_turn))
        for source in dict.fromkeys((release.variant, WEAKEST))
    }
    for source, exploration in explorations.items():
        for finding in exploration.findings:
            if finding.trace is None:
                continue
            key = tuple(move.label() for move in finding.trace.moves)
            if key in seen:
                continue
            seen.add(key)
            outcome = go(config, finding.trace.moves)
            outcomes.append(outcome)
            replays.append(_outcome_json(outcome, f"{source} {finding.invariant.value}"))
    swept: list[dict[str, Any]] = []
    if sweep:
        for moves in sequences(config):
            outcome = go(config, moves)
            outcomes.append(outcome)
            swept.append(_outcome_json(outcome))
    real = frozenset(i for outcome in outcomes for i in outcome.broken)
    # the expectation is the explorer's verdict on this very scenario, never a
    # lookup by name: a scenario outside the catalog is judged as one inside it
    expected = explorations[release.variant]
    model = frozenset(
        finding.invariant
        for finding in expected.findings
        if finding.verdict is Verdict.COUNTEREXAMPLE
    )
    model_items = {
        finding.invariant.value: finding.violation.item
        for finding in expected.findings
        if finding.violation is not None
    }
    real_items = {
        invariant.value: sorted(
            {o.violations[invariant].item for o in outcomes if invariant in o.violations}
        )
        for invariant in sorted(real, key=lambda i: i.value)
    }
    catalog = {s.name: s for s in SCENARIOS}.get(scenario.name)
    catalog_broken = (
        None
        if catalog is None or catalog != scenario
        else _labels(
            i
            for i in Invariant
            if variant.expected(scenario.name, environment, i) is Verdict.COUNTEREXAMPLE
        )
    )
    shortest: list[str] | None = None
    for outcome in outcomes:
        for step in outcome.violation_steps.values():
            if shortest is None or step < len(shortest):
                shortest = list(outcome.stimuli[:step])
    drive = outcomes[0].drive if outcomes else {}
    return {
        "scenario": scenario.name,
        "summary": scenario.summary,
        "environment": environment.name,
        "calls": [
            {"task": index, "site": call.site, "drive": drive.get(index, "public")}
            for index, call in enumerate(scenario.calls)
        ],
        "applicable": applicable,
        "model_broken": _labels(model),
        "expectation": "explorer",
        "catalog_broken": catalog_broken,
        "model_items": model_items,
        "real_broken": _labels(real),
        "real_items": real_items,
        "matches": (real == model) if applicable else None,
        # the item the model's shortest counterexample loses is one the real code lost
        "same_items": all(
            item in real_items.get(invariant, []) for invariant, item in model_items.items()
        )
        if applicable and real == model
        else None,
        "lost": sorted({item for outcome in outcomes for item in outcome.lost}),
        "recreated": sorted({item for outcome in outcomes for item in outcome.recreated}),
        "shortest": shortest,
        "sequences": len(swept),
        "stepped_with_model": sum(1 for s in swept if s["divergence"] is None),
        "replays": replays,
        "sweep": swept,
        "errors": sorted({e for outcome in outcomes for e in outcome.errors}),
        "background_losses": sorted(
            {item for outcome in outcomes for item in outcome.background_losses}
        ),
        "push_lines": sorted(
            {line for outcome in outcomes for line in outcome.push_lines.values()}
        ),
    }


def check_path(release: Release, scenario: Scenario, provider: str = "standin") -> dict[str, Any]:
    """One site alone, through the public API: the line it pushes from, and whether
    it steps with the model (a lone push races nobody, so nothing may break)."""
    config = release_config(release.variant, scenario, scenario.environment)
    go = runner(provider)
    outcomes = [go(config, moves) for moves in sequences(config)]
    call = scenario.calls[0]
    return {
        "scenario": scenario.name,
        "site": call.site,
        "how": scenario.summary,
        "drive": outcomes[0].drive.get(0, "public"),
        "push_lines": sorted({line for o in outcomes for line in o.push_lines.values()}),
        "applicable": call.site in release.sites,
        "reached": not any(o.unreached for o in outcomes),
        "stepped_with_model": all(o.divergence is None for o in outcomes),
        "broken": _labels({i for o in outcomes for i in o.broken}),
        "errors": sorted({e for o in outcomes for e in o.errors}),
    }


def _path_as_expected(path: dict[str, Any]) -> bool:
    """A site the release has steps with the model and breaks nothing; one it lacks
    pushes nothing."""
    if not path["applicable"]:
        return not path["reached"] and not path["push_lines"]
    return bool(path["reached"] and path["stepped_with_model"]) and not (
        path["broken"] or path["errors"]
    )


def coverage(scenarios: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every push place the audit finds in the installed release, with what drove it."""
    import livekit.agents.voice.agent_activity as agent_activity

    path = Path(agent_activity.__file__)
    places = [
        place
        for place in audit_source(path.read_text(encoding="utf-8"), str(path))
        if place.kind in SITE_REQUESTS
    ]
    rows = []
    for place in places:
        driven = [s["scenario"] for s in scenarios if place.line in s["push_lines"]]
        rows.append(
            {
                "line": place.line,
                "function": place.function,
                "kind": place.kind,
                "lock": place.lock,
                "ok": place.ok,
                "scenarios": driven,
            }
        )
    return rows


def check_release(
    scenarios: Iterable[Scenario] = SCENARIOS,
    *,
    sweep: bool = True,
    options: tuple[str, ...] = (),
    provider: str = "standin",
    pairs: bool | None = None,
    hypothesis: int = 0,
) -> dict[str, Any]:
    """The report of the installed release (see the module docstring).

    `hypothesis` > 0 (plugin only): that many Hypothesis examples per scenario
    too, reported beside the verdicts (`explore_plugin`), not in `as_expected`."""
    version = installed_version()
    if version is None:
        raise ReleaseUnavailable("livekit-agents is not installed: pip install -e '.[livekit]'")
    if version not in RELEASES_BY_VERSION:
        raise ReleaseUnavailable(f"livekit-agents {version} is not a release ackguard checks")
    release = RELEASES_BY_VERSION[version]
    scenarios = list(scenarios)
    with _quiet():
        report = _check_release(release, scenarios, sweep, options, provider, pairs)
        if hypothesis:
            report["hypothesis"] = hypothesis_rows(release, scenarios, options, hypothesis)
        return report


def hypothesis_rows(
    release: Release, scenarios: Iterable[Scenario], options: tuple[str, ...], examples: int
) -> list[dict[str, Any]]:
    """Hypothesis over the plugin for each scenario it can drive (`explore_plugin`)."""
    from proofs.adapters.livekit.explore_plugin import hypothesis_check

    rows = []
    for scenario in scenarios:
        environment = with_options(scenario.environment, options)
        config = release_config(release.variant, scenario, environment)
        try:
            rows.append(hypothesis_check(config, examples=examples))
        except UnsupportedConfig as error:
            rows.append({"scenario": scenario.name, "unsupported": str(error)})
    return rows


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Timeouts and rejections are logged as warnings by design; keep them off stderr."""
    loggers = [logging.getLogger(name) for name in ("livekit", "ackguard.livekit")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def _check_release(
    release: Release,
    scenarios: Iterable[Scenario],
    sweep: bool,
    options: tuple[str, ...],
    provider: str,
    pairs: bool | None,
) -> dict[str, Any]:
    version = release.version
    started = time.perf_counter()
    scenarios = list(scenarios)
    full = {s.name for s in scenarios} == {s.name for s in SCENARIOS}
    checked = [
        _guarded(release, scenario, sweep=sweep, options=options, provider=provider)
        for scenario in scenarios
    ]
    paths = [check_path(release, scenario, provider) for scenario in PATHS] if full else []
    audited: list[dict[str, Any]] = []
    if pairs if pairs is not None else full:
        from proofs.adapters.livekit.pairs import audited_pairs

        for scenario in audited_pairs(release, paths or _lone_paths(release, provider)):
            audited.append(
                _guarded(release, scenario, sweep=sweep, options=options, provider=provider)
            )
    places = coverage(checked + paths + audited)
    return {
        "release": version,
        "variant": release.variant,
        "summary": release.summary,
        "provider": provider,
        "options": list(options),
        "scenarios": checked,
        "paths": paths,
        "pairs": audited,
        "coverage": places,
        "complete": full,
        "uncovered": [f"{p['function']}:{p['line']}" for p in places if not p["scenarios"]],
        "as_expected": all(s["matches"] in (True, None) for s in checked + audited)
        and not any(s.get("unsupported") for s in checked + audited)
        and all(_path_as_expected(p) for p in paths)
        and (not full or all(p["scenarios"] for p in places)),
        "seconds": round(time.perf_counter() - started, 2),
    }


def _lone_paths(release: Release, provider: str) -> list[dict[str, Any]]:
    return [check_path(release, scenario, provider) for scenario in PATHS]


def _guarded(release: Release, scenario: Scenario, **kwargs: Any) -> dict[str, Any]:
    """`check_scenario`, or a row that says why the provider cannot drive it."""
    try:
        return check_scenario(release, scenario, **kwargs)
    except UnsupportedConfig as error:
        options = kwargs.get("options", ())
        environment = with_options(scenario.environment, options)
        config = release_config(release.variant, scenario, environment)
        findings = explore(config).findings
        return {
            "scenario": scenario.name,
            "summary": scenario.summary,
            "environment": environment.name,
            "calls": [
                {"task": index, "site": call.site, "drive": "not driven"}
                for index, call in enumerate(scenario.calls)
            ],
            "applicable": False,
            "unsupported": str(error),
            "model_broken": _labels(
                f.invariant for f in findings if f.verdict is Verdict.COUNTEREXAMPLE
            ),
            "expectation": "explorer",
            "catalog_broken": None,
            "model_items": {
                f.invariant.value: f.violation.item for f in findings if f.violation is not None
            },
            "real_broken": [],
            "real_items": {},
            "matches": None,
            "same_items": None,
            "lost": [],
            "recreated": [],
            "shortest": None,
            "sequences": 0,
            "stepped_with_model": 0,
            "replays": [],
            "sweep": [],
            "errors": [],
            "background_losses": [],
            "push_lines": [],
        }
