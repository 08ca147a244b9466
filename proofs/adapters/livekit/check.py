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
  the shortest interleaving that shows it;
* a scenario whose cleanup and interrupted tool outputs can be one generation's
  two pushes is all of the above in both readings (`set_ups`), its verdict
  theirs together; runs the real code cannot take are counted by reason
  (`drivable.undrivable`), never run.

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

from model import (
    INTERNAL_MOVES,
    OPTIONS_BY_NAME,
    Config,
    Environment,
    Invariant,
    Move,
    MoveKind,
    Pc,
    Scenario,
    State,
    Verdict,
    initial_state,
)
from model.scenarios import SCENARIOS, Call
from model.shapes import (
    SHAPES_BY_NAME,
    CompletionChannel,
    DropWindow,
    InterruptionEnd,
    LocalTail,
    RemoteItemAdded,
    SessionShape,
)
from model.sites import (
    COPY_INSERTS,
    SITES,
    LocalUpdate,
    Site,
    with_hidden_calls,
    with_speech_turn,
)
from model.variants import VARIANTS_BY_NAME
from proofs.adapters.livekit.adapter import LivekitAdapter
from proofs.adapters.livekit.drivable import given, settled, undrivable
from proofs.adapters.livekit.one_generation import is_one_generation, one_generation
from proofs.adapters.livekit.releases import (
    RELEASES_BY_VERSION,
    Release,
    installed_version,
)
from proofs.adapters.livekit.replay import (
    Outcome,
    run,
    sequences,
)
from proofs.engines.audit import SITE_REQUESTS, audit_source
from proofs.engines.conformance.lockstep import model_side
from proofs.engines.explore import explore
from proofs.errors import ReleaseUnavailable, UnsupportedConfig

#: The realtime models a release can run over: ackguard's stand-in (in-process,
#: no socket) or the release's own OpenAI plugin over the gated websocket.
PROVIDERS = ("standin", "plugin")

Runner = Callable[[Config, Iterable[Any]], Outcome]

#: What a call's push did by the end of a run (the drain included): it never
#: entered the session's `update_chat_ctx`, entered it and still waits, or returned
#: (with or without an error). The model's counterparts are its program counters.
NO_PUSH, PUSHING, RETURNED = "no push", "pushing", "returned"
_PC_RAN: dict[Pc, str] = {
    Pc.IDLE: NO_PUSH,
    Pc.COPIED: NO_PUSH,
    Pc.WAIT_ACTIVITY: NO_PUSH,
    Pc.WAIT_PROVIDER: PUSHING,
    Pc.WAIT_ACKS: PUSHING,
    Pc.WAIT_SEND: PUSHING,
    Pc.DONE: RETURNED,
    Pc.FAILED: RETURNED,
}
Ran = tuple[str, ...]
RanRunner = Callable[[Config, Iterable[Any]], tuple[Outcome, Ran]]


def runner(provider: str) -> Runner:
    """How one interleaving is run over `provider` (see `PROVIDERS`)."""
    if provider == "standin":
        return run
    if provider == "plugin":
        from proofs.adapters.livekit.plugin import run_plugin

        return run_plugin
    raise ValueError(f"unknown provider {provider!r}; choose from {', '.join(PROVIDERS)}")


def real_ran(adapter: LivekitAdapter) -> Ran:
    """What each scenario call's push did in the real code, from the adapter's tracker."""
    statuses = []
    for index in range(len(adapter.config.scenario.calls)):
        record = adapter.tracker.records.get(index)
        if record is None or not record.entered:
            statuses.append(NO_PUSH)
        else:
            statuses.append(RETURNED if record.returned else PUSHING)
    return tuple(statuses)


def ran_runner(provider: str, build: type[LivekitAdapter] | None = None) -> RanRunner:
    """`runner(provider)`, which also says what each call's push did (`real_ran`, read
    as the run closes); `build` is the adapter class (a test passes a mutant)."""
    if provider not in PROVIDERS:
        runner(provider)  # the error that names the providers
    seen: list[Ran] = []

    def recording(base: type[LivekitAdapter]) -> type[LivekitAdapter]:
        class Recording(base):  # type: ignore[valid-type,misc]
            def close(self) -> None:
                seen.append(real_ran(self))
                super().close()

        return Recording

    def go(config: Config, moves: Iterable[Any]) -> tuple[Outcome, Ran]:
        seen.clear()
        base = build
        if base is None and is_one_generation(config):
            from proofs.adapters.livekit.one_generation_adapters import one_generation_adapter

            base = one_generation_adapter(provider)
        if provider == "plugin":
            from proofs.adapters.livekit.plugin import PluginAdapter, run_plugin

            adapter = recording(base or PluginAdapter)
            outcome = run_plugin(config, moves, build=adapter)  # type: ignore[arg-type]
        else:
            outcome = run(config, moves, build=recording(base or LivekitAdapter))
        return outcome, seen[0]

    return go


def model_ran(config: Config, moves: Iterable[Move]) -> frozenset[Ran]:
    """Every way the model's calls can stand (`_PC_RAN`) after `moves` and the drain
    the harness gives after them (the next op to the server first, else the next
    event to the client, until nothing is in flight). Deliveries are positional, as
    the harness gives them; a move the model does not allow ends that branch."""
    side = model_side(config)
    states = settled(side, initial_state(config))
    for move in moves:
        if move.kind in INTERNAL_MOVES:
            continue
        states = {end for state in states for end in given(side, state, move)}
    ends: set[State] = set()
    todo = list(states)
    seen = set(todo)
    while todo:
        state = todo.pop()
        stimuli = side.stimuli(state)
        deliveries = [m for m in stimuli if m.kind is MoveKind.SERVER_APPLY] or [
            m for m in stimuli if m.kind is MoveKind.CLIENT_APPLY
        ]
        if not deliveries:
            ends.add(state)
        for move in deliveries:
            for end in given(side, state, move):
                if end not in seen:
                    seen.add(end)
                    todo.append(end)
    return frozenset(tuple(_PC_RAN[task.pc] for task in state.tasks) for state in ends)


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


def _outcome_json(
    outcome: Outcome, ran: Ran, expected: frozenset[Ran], source: str | None = None
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "stimuli": list(outcome.stimuli),
        "calls_ran": list(ran),
        "model_calls_ran": sorted(list(option) for option in expected),
        "ran_as_model": ran in expected,
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
        remote_item_added=RemoteItemAdded.APPENDED_AFTER_LAST,
        local_tail=LocalTail.LOCAL_ONLY,
        interruption_end=InterruptionEnd.ON_DONE_EVENT,
        drop_window=DropWindow.UNRECORDED,
        completion_channel=CompletionChannel.EVENTS,
    )


def release_sites(speech_turn: bool = True) -> tuple[Site, ...]:
    """The site records of a livekit release: livekit's speech turn (unless
    `speech_turn=False`), tool outputs after their function calls
    (`with_hidden_calls`), and a cleanup that leaves the local context alone: the
    activity removes nothing before that push (`_realtime_generation_task`, 1.8.9
    :4752-4758), its never-played messages are absent only because it never added
    them, so a placeholder of one stays in what it pushes (docs/model.md, "The
    placeholder handler")."""
    sites = with_hidden_calls(with_speech_turn() if speech_turn else SITES)
    return tuple(
        evolve(site, local_update=LocalUpdate.NONE) if site.name == "cleanup" else site
        for site in sites
    )


def release_config(
    variant: str, scenario: Scenario, environment: Environment, speech_turn: bool = True
) -> Config:
    """The model of a livekit release: `variant` on the site records with livekit's
    speech turn (`model.sites.with_speech_turn`), the scheduler both releases have,
    and its session (`release_shape`), with `say()`'s push inserting into its copy
    of the mirror by creation time (`model.sites.COPY_INSERTS`); `speech_turn=False`
    gives the catalog's records, which wait for no turn."""
    extra = release_sites(speech_turn)
    return Config(
        VARIANTS_BY_NAME[variant],
        scenario,
        environment,
        extra_sites=extra,
        shape=release_shape(variant),
        local_orders=COPY_INSERTS,
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
    go = ran_runner(provider)
    variant = VARIANTS_BY_NAME[release.variant]
    environment = with_options(scenario.environment, options)
    config = release_config(release.variant, scenario, environment, speech_turn)
    #: the scenario's readings (`set_ups`): the model of each is explored, run and
    #: swept; the row's verdict is every reading's together
    readings = set_ups(config)
    applicable = all(call.site in release.sites for call in scenario.calls)
    replays: list[dict[str, Any]] = []
    outcomes: list[Outcome] = []
    #: per run: whether each call's push started and ended as the model's run says
    ran_as_model: list[bool] = []
    seen: set[tuple[int, tuple[str, ...]]] = set()
    #: The runs (replays and sweep) left out, by why the real code cannot take them.
    left: dict[str, int] = {}
    explorations = {
        source: [
            explore(reading)
            for reading in set_ups(release_config(source, scenario, environment, speech_turn))
        ]
        for source in dict.fromkeys((release.variant, WEAKEST))
    }
    for source, per_reading in explorations.items():
        for number, exploration in enumerate(per_reading):
            reading = readings[number]
            for finding in exploration.findings:
                if finding.trace is None:
                    continue
                key = (number, tuple(move.label() for move in finding.trace.moves))
                if key in seen:
                    continue
                seen.add(key)
                why = undrivable(reading, finding.trace.moves)
                if why is not None:
                    # a counterexample the real code cannot take is counted, not run
                    left[why] = left.get(why, 0) + 1
                    continue
                outcome, ran = go(reading, finding.trace.moves)
                # the calls of a trace run as the model it comes from says: the release's
                # own model may not allow a weaker variant's trace at all
                expected_ran = model_ran(exploration.config, finding.trace.moves)
                outcomes.append(outcome)
                ran_as_model.append(ran in expected_ran)
                label = f"{source} {finding.invariant.value}"
                replays.append(_outcome_json(outcome, ran, expected_ran, label) | _reading(reading))
    swept: list[dict[str, Any]] = []
    if sweep:
        for reading in readings:
            driven, undriven_runs = drivable_sequences(reading)
            for why, count in undriven_runs.items():
                left[why] = left.get(why, 0) + count
            for moves in driven:
                outcome, ran = go(reading, moves)
                expected_ran = model_ran(reading, moves)
                outcomes.append(outcome)
                ran_as_model.append(ran in expected_ran)
                swept.append(_outcome_json(outcome, ran, expected_ran) | _reading(reading))
    real = frozenset(i for outcome in outcomes for i in outcome.broken)
    # the expectation is the explorer's verdict on this very scenario, never a
    # lookup by name: a scenario outside the catalog is judged as one inside it
    expected = [finding for e in explorations[release.variant] for finding in e.findings]
    model = frozenset(
        finding.invariant for finding in expected if finding.verdict is Verdict.COUNTEREXAMPLE
    )
    model_items: dict[str, str] = {}
    for finding in expected:
        if finding.violation is not None:
            model_items.setdefault(finding.invariant.value, finding.violation.item)
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
        # the broken invariants alone: a row where a call never ran can still agree
        "same_broken": (real == model) if applicable else None,
        "calls_ran_as_model": all(ran_as_model) if applicable else None,
        "matches": (real == model and all(ran_as_model)) if applicable else None,
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
        # runs `drivable` says the real code cannot take, counted and named by reason
        "not_driven": sum(left.values()),
        "not_driven_why": dict(sorted(left.items())),
        "readings": [_reading(reading)["reading"] for reading in readings],
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


def set_ups(config: Config) -> tuple[Config, ...]:
    """The readings of `config`'s scenario that the release's code has: the scenario
    as its calls say, and, where its cleanup and its interrupted tool outputs can be
    one generation's two pushes, that reading too (`one_generation`): livekit's
    generation task pushes both, the tool push once its cleanup has returned."""
    one = one_generation(config)
    return (config,) if one is None else (config, one)


def _reading(config: Config) -> dict[str, str]:
    """The name of a reading (`set_ups`), for the report."""
    return {"reading": "one generation" if is_one_generation(config) else "as called"}


def drivable_sequences(config: Config) -> tuple[list[tuple[Move, ...]], dict[str, int]]:
    """The model's stimulus sequences the livekit adapters drive, and how many of each
    kind they leave out (`UNDRIVABLE`, by the reason the real code cannot take them)."""
    driven: list[tuple[Move, ...]] = []
    left: dict[str, int] = {}
    for moves in sequences(config):
        why = undrivable(config, moves)
        if why is None:
            driven.append(moves)
        else:
            left[why] = left.get(why, 0) + 1
    return driven, left


def check_path(release: Release, scenario: Scenario, provider: str = "standin") -> dict[str, Any]:
    """One site alone, through the public API: the line it pushes from, and whether
    it steps with the model (a lone push races nobody, so nothing may break)."""
    config = release_config(release.variant, scenario, scenario.environment)
    go = runner(provider)
    outcomes = [go(config, moves) for moves in drivable_sequences(config)[0]]
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
            "same_broken": None,
            "calls_ran_as_model": None,
            "matches": None,
            "same_items": None,
            "lost": [],
            "recreated": [],
            "shortest": None,
            "sequences": 0,
            "not_driven": 0,
            "not_driven_why": {},
            "readings": [],
            "stepped_with_model": 0,
            "replays": [],
            "sweep": [],
            "errors": [],
            "background_losses": [],
            "push_lines": [],
        }
