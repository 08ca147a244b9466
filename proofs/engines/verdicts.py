"""The verdicts behind `ackguard verify`, one per cell, each with its scope.

A *cell* is (variant, invariant, environment). The default method gives each engine
what it is best at:

1. the explorer settles the catalog's scenarios exactly (`settle.explore_group`): a
   failing cell gets the counterexample with the fewest calls, then the shortest
   (mixes of fewer calls than the catalog's are searched first), replayed through
   `model/` and, given an adapter factory, through the implementation;
2. a holding cell that the first-order engine proves (`FOL_INVARIANTS`) gets
   `fol.prove`: "every number of calls of sites {...} and every number of items". By
   default that is only the check of a committed certificate, submitted when the run
   starts so it overlaps the explorer, once per first-order system (`_fol_key`: cells
   that differ only in options the engine leaves out share one check); with
   `fol_seconds` above 0, inference too, within that many seconds, once the explorer
   holds the cell;
3. otherwise, or when that engine answers unknown or runs out of time, the cell keeps
   the explorer's bounded proof and its scope says how far that goes.

A first-order `fails` on a cell the explorer holds is a finding: the cell is a
counterexample (and a mismatch). `--method bmc` and `--method invariant` are the
per-scenario z3 engines (`smt.verify`), reported in the same record.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Hashable, Sequence

from attrs import evolve, frozen

from model import (
    SHAPES_BY_NAME,
    SITES_BY_NAME,
    Config,
    Environment,
    Invariant,
    MirrorUpdate,
    Scenario,
    Site,
    Variant,
    Verdict,
    Violation,
    by_construction,
    check,
)
from proofs.engines.jobs import Finished, Jobs
from proofs.engines.settle import (
    MIX_CALLS,
    FolAnswer,
    GroupPart,
    GroupResult,
    Run,
    explore_group,
    fol_proof,
    fol_proofs,
)
from proofs.engines.trace import Trace, replay
from proofs.errors import CannotRun, InternalError, Interrupted

PROVED = "proved"
COUNTEREXAMPLE = "counterexample"
UNKNOWN = "unknown"

METHOD_DEFAULT = "default"
METHOD_BMC = "bmc"
METHOD_INVARIANT = "invariant"
#: `--method`: the default, and the per-scenario z3 engines kept beside it.
METHODS = (METHOD_DEFAULT, METHOD_BMC, METHOD_INVARIANT)

#: The invariants `fol.prove` proves: its face says "invariant 1 for the cell". A cell
#: of another invariant is not sent to it; one it does not model, it answers unknown.
FOL_INVARIANTS: frozenset[Invariant] = frozenset({Invariant.NO_UNINTENDED_DELETE})

#: The time limit of each job (an explorer group, one first-order proof), in seconds.
DEFAULT_TIMEOUT = 600.0
#: Wall seconds each first-order proof may take (`fol.prove(seconds_limit=)`; its
#: worker is stopped a little after): past it, the cell keeps the explorer's bounded
#: proof and says why. 0, the default, asks that engine only to check the committed
#: certificates (`fol.prove(certified_only=True)`, seconds a cell): inference proves
#: none of the catalog's other cells within a minute, and would add its limit to each
#: (docs/proofs.md, "Methods").
DEFAULT_FOL_SECONDS = 0.0
#: What a worker is given beyond the proof's own limit before it is stopped.
_FOL_GRACE = 5.0

#: Worker processes: one per core this process may run on.
DEFAULT_JOBS = (
    len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
)

#: What a bounded proof of the explorer rests on.
BOUNDED_ASSUMPTIONS = ("only the calls, items and starting conversation of the runs named",)

#: `progress(done, total, unit)`: called as each piece of work finishes.
Progress = Callable[[int, int, str], None]
#: Replays a counterexample in an implementation: "reproduced", or why not.
ImplReplay = Callable[["Witness"], str]


@frozen
class ScenarioCheck:
    """One catalog scenario's verdict in a cell, beside the catalog's expectation."""

    scenario: str
    verdict: str
    expected: str
    depth: int | None
    method: str
    bound: str
    seconds: float
    #: The variant whose check this one took, being the same model in this scenario.
    same_model_as: str = ""

    @property
    def matched(self) -> bool:
        return self.verdict == self.expected


@frozen
class Witness:
    """The run a cell's verdict names: a counterexample, or the run an unknown stopped in."""

    config: Config
    invariant: Invariant
    trace: Trace | None
    violation: Violation | None
    depth: int | None
    #: Its replay in the implementation: "reproduced", why not, or "" (not replayed).
    impl: str = ""

    @property
    def scenario(self) -> str:
        return self.config.scenario.name

    @property
    def impl_disagrees(self) -> bool:
        return bool(self.impl) and self.impl != "reproduced" and not self.impl.startswith("no ")


@frozen
class FirstOrder:
    """What the first-order engine's job said, and which cell it ran for: cells of one
    first-order system (`_fol_key`) share one job, so a proof can rest on another
    column's check, and says so."""

    status: str
    #: The committed certificate it checked (`fol.certificate.key`), or "".
    certificate: str
    #: The environment of the cell the job ran for (same variant and session shape);
    #: "" when no job ran (a cell the engine does not model, or no certificate).
    checked_on: str
    seconds: float
    #: When the certificate is another column's: why that column's first-order system
    #: contains this one's (`fol.cover`), so its check proves this cell too; else "".
    cover: str = ""


@frozen
class CellVerdict:
    """One row of the verdict table."""

    variant: Variant
    invariant: Invariant
    environment: Environment
    verdict: str
    method: str
    #: What the verdict covers, in words.
    scope: str
    assumptions: tuple[str, ...]
    #: The bounds it covers, compactly ("calls<=3 items<=4", "every size").
    bound: str
    scenarios: tuple[ScenarioCheck, ...]
    witness: Witness | None = None
    depth: int | None = None
    seconds: float = 0.0
    reason: str = ""
    #: False for a cell Ctrl-C stopped before its verdict.
    complete: bool = True
    #: The first-order job the cell's verdict may rest on, or None when none ran.
    first_order: FirstOrder | None = None

    @property
    def expected(self) -> str:
        if any(s.expected == COUNTEREXAMPLE for s in self.scenarios):
            return COUNTEREXAMPLE
        return PROVED

    @property
    def matched(self) -> bool:
        """The catalog's expectation, in every scenario and in the cell's own verdict; a
        counterexample the implementation does not reproduce is no match either, nor is
        a committed certificate that no longer checks (the cell keeps its bounded proof,
        but the repository claims one for every size that the code no longer has)."""
        if self.witness is not None and self.witness.impl_disagrees:
            return False
        if self.stale_certificate:
            return False
        return self.verdict == self.expected and all(s.matched for s in self.scenarios)

    @property
    def stale_certificate(self) -> str:
        """The key of the committed certificate the cell's first-order job checked and
        found no longer inductive, or "" (none, or it checked; a check that timed out
        records no answer and is not one)."""
        job = self.first_order
        if job is None or not job.certificate or job.status == "proved":
            return ""
        return job.certificate

    @property
    def scenario(self) -> str | None:
        return None if self.witness is None else self.witness.scenario

    @property
    def session(self) -> str:
        """The session shape the cell is checked under."""
        return self.variant.shape

    @property
    def by_construction(self) -> str | None:
        """Why the invariant cannot break under this session shape, on a cell that holds:
        the verdict says so rather than only "proved"."""
        if self.verdict != PROVED:
            return None
        return by_construction(self.invariant, SHAPES_BY_NAME[self.variant.shape])


def expected_verdict(config: Config, invariant: Invariant) -> str:
    verdict = config.variant.expected(config.scenario.name, config.environment, invariant)
    return COUNTEREXAMPLE if verdict is Verdict.COUNTEREXAMPLE else PROVED


def catalog_sites(scenarios: Sequence[Scenario]) -> tuple[Site, ...]:
    """The site records the scenarios call, by name."""
    return tuple(
        SITES_BY_NAME[name] for name in sorted({c.site for s in scenarios for c in s.calls})
    )


def run(
    variants: Sequence[Variant],
    scenarios: Sequence[Scenario],
    environments: Sequence[Environment],
    invariants: Sequence[Invariant] = tuple(Invariant),
    timeout: float = DEFAULT_TIMEOUT,
    jobs: int = DEFAULT_JOBS,
    method: str = METHOD_DEFAULT,
    progress: Progress | None = None,
    impl: ImplReplay | None = None,
    share: bool = True,
    fol_seconds: float = DEFAULT_FOL_SECONDS,
) -> list[CellVerdict]:
    """Every cell's verdict, in (variant, invariant, environment) order; a variant
    record carries the session shape it is checked under (`Variant.shape`).

    Ctrl-C stops every worker at once and raises `Interrupted` with every cell, those
    not settled marked `complete=False`."""
    if method == METHOD_DEFAULT:
        return _Default(
            variants, scenarios, environments, invariants, timeout, impl, fol_seconds
        ).run(jobs, progress)
    from proofs.engines.smt import verify as smt

    def counted(done: int, total: int) -> None:
        if progress is not None:
            progress(done, total, "(variant, scenario) checked")

    def convert(cells: Sequence[smt.Cell]) -> list[CellVerdict]:
        return [_from_smt(cell, len(scenarios), impl) for cell in cells]

    smt_method = "k-induction" if method == METHOD_BMC else method
    try:
        cells = smt.run(
            variants,
            scenarios,
            environments,
            invariants,
            timeout,
            jobs,
            smt_method,
            share=share,
            progress=counted,
        )
    except Interrupted as stop:
        raise Interrupted(convert([c for c in stop.done if isinstance(c, smt.Cell)])) from None
    return convert(cells)


# -- the default method -----------------------------------------------------------------


class _Default:
    """The default method's jobs and what each cell makes of them."""

    def __init__(
        self,
        variants: Sequence[Variant],
        scenarios: Sequence[Scenario],
        environments: Sequence[Environment],
        invariants: Sequence[Invariant],
        timeout: float,
        impl: ImplReplay | None,
        fol_seconds: float = DEFAULT_FOL_SECONDS,
    ) -> None:
        self.variants = tuple(variants)
        self.scenarios = tuple(scenarios)
        self.environments = tuple(environments)
        self.invariants = tuple(invariants)
        self.timeout = timeout
        self.fol_seconds = fol_seconds
        self.impl = impl
        self.sites = catalog_sites(scenarios)
        self.groups: dict[tuple[str, str], Finished] = {}
        #: First-order answers by `_fol_key`, one per first-order system.
        self.proofs: dict[tuple[str, str], Finished] = {}
        self.replayed: dict[Hashable, str] = {}
        #: Per `_fol_key`, the environment the one job for it runs with (the first).
        self.fol_first: dict[tuple[str, str], Environment] = {}
        self._fol_keys: dict[tuple[str, str], tuple[str, str]] = {}
        self._fol_asked: set[tuple[str, str]] = set()
        #: Keys answered in this process, with no job: nothing to check or infer.
        self._answered_here: set[tuple[str, str]] = set()
        #: The default run's covering jobs (`fol_proofs`): the keys each one answers.
        self._covering: dict[tuple[str, str, str, str], list[tuple[str, str]]] = {}
        #: Invariant 2's certificate checks (`fol.agreement.certified`), by (variant key,
        #: certificate key): asked only with `fol_seconds` above 0.
        self.agreement: dict[tuple[str, str], Finished] = {}
        if any(invariant in FOL_INVARIANTS for invariant in self.invariants):
            for variant in self.variants:
                for environment in self.environments:
                    self.fol_first.setdefault(self._fol_key(variant, environment), environment)

    def _fol_key(self, variant: Variant, environment: Environment) -> tuple[str, str]:
        """The cell's first-order system: its variant and session shape, and its
        certificate's key (`fol.certificate.key`: the sites, and the options the
        first-order actions read). Cells with one key are one query to that engine, so
        it is asked once and every such cell takes the answer."""
        found = self._fol_keys.get((_key(variant), environment.name))
        if found is None:
            from proofs.engines.fol import Cell
            from proofs.engines.fol.certificate import key

            found = (_key(variant), key(Cell(variant, self.sites, environment)))
            self._fol_keys[(_key(variant), environment.name)] = found
        return found

    def _compact(self, variant: Variant, environment: Environment) -> bool:
        """Whether the mixes of calls are explored for this configuration: where the
        compact explorer covers it with no reconnect. On the readable states (other
        session shapes) mixes of three calls take minutes, so those cells keep the
        catalog's scenarios as their scope and say so; a reconnect, which the compact
        explorer covers too, keeps that scope as before (docs/proofs.md, "Methods")."""
        from proofs.engines.compact import unsupported

        return all(
            unsupported(config) is None and not config.reconnects()
            for config in (Config(variant, s, environment) for s in self.scenarios)
        )

    def _mixes(self, environment: Environment) -> tuple[tuple[Scenario, ...], ...]:
        """Mixes of 1, 2, ... calls: enough for every holding cell (`MIX_CALLS`) and for
        a failing one to look below its catalog scenarios."""
        from proofs.engines.fol import mixes

        most = max([MIX_CALLS, *(len(s.calls) - 1 for s in self.scenarios)])
        every = mixes(self.sites, most, environment)
        return tuple(tuple(m for m in every if len(m.calls) == k) for k in range(1, most + 1))

    def run(self, jobs: int, progress: Progress | None) -> list[CellVerdict]:
        pool = Jobs(jobs, preload=["proofs.engines.settle", "proofs.engines.fol"])
        if not self.fol_seconds:
            # the certificate checks first: they are the longest jobs
            self._ask_certificates(pool)
        else:
            self._ask_agreement(pool)
        # the longest groups first, so that the short ones fill in beside them and no
        # long one starts last (longest-processing-time-first). The estimate: more
        # options on, more moves; a mirror that follows events has an event in flight
        # per op, more interleavings (`all` under openai and three-way takes several
        # times as long as any other group: docs/proofs.md, "Performance"). The cells'
        # order is `cells`' own.
        order = sorted(
            ((v, e) for v in self.variants for e in self.environments),
            key=lambda pair: (
                -len(pair[1].options),
                SHAPES_BY_NAME[pair[0].shape].mirror_update is not MirrorUpdate.ON_EVENTS,
            ),
        )
        for variant, environment in order:
            args = (
                variant,
                environment,
                self.scenarios,
                self.invariants,
                self.sites,
                self._mixes(environment) if self._compact(variant, environment) else (),
            )
            key = ("explore", _key(variant), environment.name, "")
            pool.submit(key, explore_group, args, self.timeout)
        try:
            for finished in pool.results():
                done: tuple[str, str, str, str] = finished.key  # type: ignore[assignment]
                kind, variant_name, env_name, certificate = done
                if kind == "explore":
                    self.groups[(variant_name, env_name)] = finished
                    self._ask_fol(pool, finished)
                elif kind == "fols":
                    for n, fol_key in enumerate(self._covering[done]):
                        answer = None if finished.timed_out else finished.value[n]
                        self.proofs[fol_key] = Finished(
                            fol_key, answer, finished.timed_out, finished.seconds
                        )
                elif kind == "agreement":
                    self.agreement[(variant_name, certificate)] = finished
                else:
                    self.proofs[(variant_name, certificate)] = finished
                if progress is not None:
                    progress(pool.finished, pool.submitted, "jobs done (explorer groups, proofs)")
        except KeyboardInterrupt:
            raise Interrupted(self.cells()) from None
        return self.cells()

    def _ask_certificates(self, pool: Jobs) -> None:
        """The default: one job per variant whose cell with every option the engine reads
        has a committed certificate (`fol_proofs`: its one check proves every column whose
        first-order system it contains); otherwise one certificate check per first-order
        system. Submitted before the explorer groups (they need none of their answers, so
        the two overlap on the workers). A cell the engine does not model, or with no
        certificate, is answered here at once, in this process: nothing would run."""
        from proofs.engines.fol import Cell, coverage, widest
        from proofs.engines.fol.certificate import committed

        covered: set[tuple[str, str]] = set()
        for variant in dict((_key(v), v) for v in self.variants).values():
            keys = [
                k
                for k, env in self.fol_first.items()
                if k[0] == _key(variant) and not coverage(Cell(variant, self.sites, env))
            ]
            if not keys:
                continue
            wide = widest(Cell(variant, self.sites, self.fol_first[keys[0]]))
            if coverage(wide) or committed(wide) is None:
                continue
            environments = tuple(self.fol_first[k] for k in keys)
            job = ("fols", _key(variant), wide.environment.name, "")
            self._covering[job] = keys
            covered.update(keys)
            pool.submit(job, fol_proofs, (variant, self.sites, environments), self.timeout)
        for fol_key, environment in self.fol_first.items():
            if fol_key in covered:
                continue
            variant = next(v for v in self.variants if _key(v) == fol_key[0])
            args = (variant, self.sites, environment, None, True)
            cell = Cell(variant, self.sites, environment)
            if coverage(cell) or committed(cell) is None:
                answer = fol_proof(*args)
                self.proofs[fol_key] = Finished(fol_key, answer, False, answer.seconds)
                self._answered_here.add(fol_key)
            else:
                key = ("fol", fol_key[0], environment.name, fol_key[1])
                pool.submit(key, fol_proof, args, self.timeout)

    def _agreement_key(self, variant: Variant, environment: Environment) -> tuple[str, str]:
        from proofs.engines.fol import Cell
        from proofs.engines.fol.agreement import key

        return (_key(variant), key(Cell(variant, self.sites, environment, agreement=True)))

    def _ask_agreement(self, pool: Jobs) -> None:
        """Invariant 2: one check of a committed certificate per first-order system
        (`fol.agreement.certified`), where that engine models the cell and one exists."""
        if Invariant.AGREEMENT_AT_REST not in self.invariants:
            return
        from proofs.engines.fol import Cell
        from proofs.engines.fol.agreement import certified, committed, coverage

        asked: set[tuple[str, str]] = set()
        for variant in self.variants:
            for environment in self.environments:
                cell = Cell(variant, self.sites, environment, agreement=True)
                found = self._agreement_key(variant, environment)
                if found in asked or coverage(cell) or committed(cell) is None:
                    continue
                asked.add(found)
                args = (variant, self.sites, environment)
                pool.submit(
                    ("agreement", *found[:1], environment.name, found[1]),
                    certified,
                    args,
                    self.timeout,
                )

    def _ask_fol(self, pool: Jobs, finished: Finished) -> None:
        """With `fol_seconds` above 0: a proof with inference, once per first-order
        system, when the explorer first holds one of its cells."""
        if finished.timed_out or not self.fol_seconds:
            return
        group: GroupResult = finished.value
        for part in group.parts:
            if part.witness is None and part.invariant in FOL_INVARIANTS:
                fol_key = self._fol_key(group.variant, group.environment)
                if fol_key in self._fol_asked:
                    continue
                self._fol_asked.add(fol_key)
                environment = self.fol_first[fol_key]
                key = ("fol", fol_key[0], environment.name, fol_key[1])
                args = (group.variant, self.sites, environment, self.fol_seconds)
                pool.submit(key, fol_proof, args, min(self.timeout, self.fol_seconds + _FOL_GRACE))

    def cells(self) -> list[CellVerdict]:
        return [
            self.cell(variant, invariant, environment)
            for variant in self.variants
            for invariant in self.invariants
            for environment in self.environments
        ]

    def cell(self, variant: Variant, invariant: Invariant, environment: Environment) -> CellVerdict:
        key = (_key(variant), environment.name)
        finished = self.groups.get(key)
        blank = CellVerdict(
            variant, invariant, environment, UNKNOWN, "explore", "", (), "", (), complete=False
        )
        if finished is None:
            return evolve(blank, reason="not checked: interrupted")
        if finished.timed_out:
            return evolve(
                blank,
                complete=True,
                seconds=finished.seconds,
                reason=f"the explorer did not finish within the time limit ({self.timeout:g} s)",
            )
        group: GroupResult = finished.value
        part = group.part(invariant)
        checks = tuple(_check(run) for run in part.scenarios)
        base = evolve(blank, complete=True, scenarios=checks, seconds=group.seconds)
        proof = None
        if invariant in FOL_INVARIANTS:
            fol_key = self._fol_key(variant, environment)
            proof = self.proofs.get(fol_key)
            if proof is not None and not proof.timed_out:
                base = evolve(base, first_order=self._first_order(fol_key, proof))
        if part.witness is not None:
            failing = self._failing(base, part)
            if base.first_order is not None and base.first_order.status == "proved":
                raise InternalError(
                    f"the first-order engine proved {invariant.value} for every size on "
                    f"{variant.name} / {variant.shape} / {environment.name} (its check on "
                    f"{base.first_order.checked_on}), where the explorer has a counterexample "
                    f"({failing.scenario}, depth {failing.depth})"
                )
            return failing
        bounded = self._bounded(base, part)
        if invariant is Invariant.AGREEMENT_AT_REST:
            return self._with_agreement(bounded, variant, environment)
        if invariant not in FOL_INVARIANTS:
            return evolve(
                bounded, reason=f"the first-order engine does not prove {invariant.value}"
            )
        if proof is None:
            return evolve(bounded, complete=False, reason="interrupted during the proof")
        seconds = group.seconds + proof.seconds
        if proof.timed_out:
            limit = min(self.timeout, self.fol_seconds) if self.fol_seconds else self.timeout
            return evolve(
                bounded,
                seconds=seconds,
                reason=f"the first-order engine gave no answer within the time limit ({limit:g} s)",
            )
        answer: FolAnswer = proof.value
        return self._with_fol(evolve(bounded, seconds=seconds), answer)

    def _first_order(self, fol_key: tuple[str, str], proof: Finished) -> FirstOrder:
        answer: FolAnswer = proof.value
        ran = fol_key not in self._answered_here
        return FirstOrder(
            answer.status,
            answer.certificate,
            (answer.checked_on or self.fol_first[fol_key].name) if ran else "",
            proof.seconds,
            answer.cover,
        )

    def _failing(self, base: CellVerdict, part: GroupPart) -> CellVerdict:
        run = part.witness
        assert run is not None
        witness = self._replayed(
            Witness(run.config, run.invariant, run.trace, run.violation, run.depth)
        )
        calls = run.config.scenario.calls
        names = ", ".join(call.site for call in calls)
        fewer = (
            " (no fewer calls fail)"
            if len(calls) > 1 and set(range(1, len(calls))) <= set(part.mix_sizes)
            else ""
        )
        return evolve(
            base,
            verdict=COUNTEREXAMPLE,
            scope=f"{len(calls)} call{'s' if len(calls) > 1 else ''}: {names}{fewer}",
            bound=f"calls={len(calls)} items={len(run.config.scenario.items())}",
            witness=witness,
            depth=run.depth,
        )

    def _bounded(self, base: CellVerdict, part: GroupPart) -> CellVerdict:
        calls = max(len(s.calls) for s in self.scenarios)
        items = max(len(s.items()) for s in self.scenarios)
        mixed = max(part.mix_sizes, default=0)
        plural = "s" if len(self.scenarios) > 1 else ""
        scope = f"the catalog's scenario{plural}: {calls} calls at most"
        if mixed:
            scope += f", and every mix of up to {mixed} calls of sites {{{_names(self.sites)}}}"
        return evolve(
            base,
            verdict=PROVED,
            scope=scope,
            assumptions=BOUNDED_ASSUMPTIONS,
            bound=f"calls<={max(calls, mixed)} items<={items}",
        )

    def _with_agreement(
        self, bounded: CellVerdict, variant: Variant, environment: Environment
    ) -> CellVerdict:
        """Invariant 2 for every size where its certificate checked (`_ask_agreement`)."""
        from proofs.engines.fol import Cell
        from proofs.engines.fol.agreement import coverage

        if coverage(Cell(variant, self.sites, environment, agreement=True)):
            return evolve(bounded, reason="the first-order engine does not prove agreement-at-rest")
        if not self.fol_seconds:
            return evolve(
                bounded,
                reason="the first-order engine does not prove agreement-at-rest in the default "
                "run: its committed certificates are checked with --fol-seconds above 0",
            )
        finished = self.agreement.get(self._agreement_key(variant, environment))
        if finished is None or finished.timed_out:
            return evolve(bounded, reason="no first-order certificate of agreement-at-rest checked")
        answer = finished.value
        if answer.status != "proved":
            return evolve(bounded, reason=answer.reason)
        from proofs.engines.fol.proving import scope

        own = Cell(bounded.variant, self.sites, bounded.environment, agreement=True)
        return evolve(
            bounded,
            method="fol",
            scope=scope(own),
            assumptions=answer.assumptions,
            bound="every size",
            seconds=bounded.seconds + finished.seconds,
        )

    def _with_fol(self, bounded: CellVerdict, answer: FolAnswer) -> CellVerdict:
        if answer.status == "proved":
            from proofs.engines.fol import Cell, scope

            # the answer may be another column's (one first-order system): the scope
            # names this cell's own environment
            own = Cell(bounded.variant, self.sites, bounded.environment)
            cover = f"; {answer.cover}" if answer.cover else ""
            return evolve(
                bounded,
                method="fol",
                scope=scope(own) + cover,
                assumptions=answer.assumptions,
                bound="every size",
            )
        if answer.status == "fails":
            if answer.trace is None or answer.scenario is None:
                return evolve(
                    bounded,
                    verdict=UNKNOWN,
                    method="fol",
                    reason="the first-order engine says it fails but gave no trace",
                )
            config = Config(
                bounded.variant, answer.scenario, bounded.environment, extra_sites=self.sites
            )
            violation = check(replay(config, answer.trace.moves).last, config, bounded.invariant)
            if violation is None:
                raise InternalError(
                    "the first-order engine's counterexample does not break the invariant "
                    f"in the model ({config.variant.name} / {config.scenario.name})"
                )
            witness = self._replayed(
                Witness(config, bounded.invariant, answer.trace, violation, answer.trace.depth)
            )
            return evolve(
                bounded,
                verdict=COUNTEREXAMPLE,
                method="fol",
                scope=f"{len(answer.scenario.calls)} calls (found by the first-order engine)",
                assumptions=(),
                witness=witness,
                depth=witness.depth,
                reason="the first-order engine found a counterexample the explorer's "
                "scenarios and mixes do not have",
            )
        why = answer.reason or "no reason given"
        if not self.fol_seconds and not answer.certificate:
            from proofs.engines.fol import Cell, coverage

            if not coverage(Cell(bounded.variant, self.sites, bounded.environment)):
                why += "; the default run only checks committed ones, --fol-seconds N infers"
        return evolve(bounded, reason=f"the first-order engine: unknown ({why})")

    def _replayed(self, witness: Witness) -> Witness:
        if self.impl is None or witness.trace is None:
            return witness
        key = (witness.config.behaviour(), witness.invariant, witness.trace.moves)
        if key not in self.replayed:
            self.replayed[key] = self.impl(witness)
        return evolve(witness, impl=self.replayed[key])


def _key(variant: Variant) -> str:
    """A configuration's key among the jobs: the variant and its session shape (a
    variant record carries the shape it is checked under, `Variant.shape`)."""
    return f"{variant.name}@{variant.shape}"


def _names(sites: Sequence[Site]) -> str:
    return ", ".join(site.name for site in sites)


def _check(run: Run) -> ScenarioCheck:
    return ScenarioCheck(
        run.name,
        PROVED if run.holds else COUNTEREXAMPLE,
        expected_verdict(run.config, run.invariant),
        run.depth,
        "explore",
        f"states={run.states}",
        run.seconds,
    )


def replay_in(factory: Callable[[Config], object]) -> ImplReplay:
    """A replay of counterexamples in the implementation `factory` builds adapters for;
    the implementation's own log lines (errors it handles) are held back meanwhile."""
    from proofs.engines.conformance import AdapterFactory
    from proofs.engines.conformance.lockstep import trace_steps
    from proofs.engines.conformance.run import replay_trace

    adapters: AdapterFactory = factory  # type: ignore[assignment]

    def replay_one(witness: Witness) -> str:
        assert witness.trace is not None and witness.violation is not None
        config = witness.config
        logging.disable(logging.CRITICAL)
        try:
            steps = trace_steps(config, witness.trace.moves)
            result = replay_trace(
                config,
                witness.invariant,
                steps,
                witness.violation.item,
                witness.violation.site,
                adapters,
            )
        except CannotRun as error:
            return f"no counterpart in the implementation: {error}"
        finally:
            logging.disable(logging.NOTSET)
        return "reproduced" if result.reproduced else f"not reproduced: {result.detail}"

    return replay_one


# -- the per-scenario z3 engines --------------------------------------------------------


def _from_smt(cell: object, scenarios: int, impl: ImplReplay | None) -> CellVerdict:
    """A `smt.verify.Cell` as a verdict record; its scope is its scenarios' bounds."""
    from proofs.engines.smt.verify import Cell

    assert isinstance(cell, Cell)
    checks = tuple(
        ScenarioCheck(
            v.scenario,
            v.result.verdict,
            v.expected,
            v.result.depth,
            v.result.method,
            v.result.bound,
            v.result.seconds,
            v.result.same_as,
        )
        for v in cell.scenarios
    )
    found = cell.witness
    witness = None
    reason = ""
    if found is not None:
        result = found.result
        witness = Witness(
            result.config, result.invariant, result.trace, result.violation, result.depth
        )
        if cell.verdict == COUNTEREXAMPLE and impl is not None and result.trace is not None:
            witness = evolve(witness, impl=impl(witness))
        reason = result.reason
    verdict = cell.verdict
    if verdict == PROVED:
        scope = f"the catalog's scenario{'s' if len(checks) > 1 else ''}: {cell.bound}"
    elif verdict == COUNTEREXAMPLE and witness is not None:
        scope = f"scenario {witness.scenario}: {cell.bound}"
    else:
        scope = ""
    return CellVerdict(
        cell.variant,
        cell.invariant,
        cell.environment,
        verdict,
        cell.method,
        scope,
        (),
        cell.bound,
        checks,
        witness,
        cell.depth,
        cell.seconds,
        reason,
        complete=len(checks) == scenarios,
    )
