"""The default `verify`: what each cell makes of the explorer's and the first-order
engine's answers, and the worker processes' deadlines.

The first-order answers here are built by hand on purpose: they stand for each thing
`fol.prove` can say, so that every branch of the combination is shown, including a
`fails` on a cell the explorer holds (a finding, never hidden) and an `unknown` (never
printed as a proof for every size). Their counterexample traces are real runs of the
model, found by the explorer.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

import pytest

from model import (
    ENVIRONMENTS_BY_NAME,
    SCENARIOS,
    SCENARIOS_BY_NAME,
    SITES_BY_NAME,
    VARIANTS_BY_NAME,
    Config,
    Invariant,
    Scenario,
    Verdict,
)
from proofs.engines import fol, verdicts
from proofs.engines.explore import explore
from proofs.engines.fol import certificate, mixes
from proofs.engines.jobs import Finished, Jobs
from proofs.engines.settle import FolAnswer, explore_group
from proofs.engines.trace import replay
from proofs.engines.verdicts import (
    COUNTEREXAMPLE,
    PROVED,
    CellVerdict,
    Witness,
    _Default,
    catalog_sites,
)
from proofs.errors import InternalError
from proofs.report.verify import cell_json, table_lines

BASE = ENVIRONMENTS_BY_NAME["base"]
INV1 = Invariant.NO_UNINTENDED_DELETE
INV2 = Invariant.AGREEMENT_AT_REST
#: unlocked holds both invariants on this scenario in the base environment
HOLDING = SCENARIOS_BY_NAME["stale-replacement"]


def _settled(
    variant: str,
    answer: FolAnswer | None,
    timed_out: bool = False,
    mixes_too: bool = False,
    scenario: Scenario = HOLDING,
) -> tuple[CellVerdict, CellVerdict]:
    """Both invariants' cells of `variant` on the holding scenario (or `scenario`) under
    `base`, the explorer run in this process, the first-order answer given."""
    runner = _Default(
        [VARIANTS_BY_NAME[variant]],
        [scenario],
        [BASE],
        (INV1, INV2),
        timeout=5.0,
        impl=None,
        fol_seconds=5.0,
    )
    mixes_of = runner._mixes(BASE) if mixes_too else ()
    group = explore_group(
        VARIANTS_BY_NAME[variant], BASE, [scenario], (INV1, INV2), runner.sites, mixes_of
    )
    runner.groups[(f"{variant}@openai", "base")] = Finished(("explore",), group, False, 0.1)
    if answer is not None or timed_out:
        runner.proofs[runner._fol_key(VARIANTS_BY_NAME[variant], BASE)] = Finished(
            ("fol",), answer, timed_out, 5.0
        )
    first, second = runner.cells()
    return first, second


def _answer(status: str, **fields: object) -> FolAnswer:
    return FolAnswer(
        status,
        "every number of calls of sites {replacement, user-turn} and every number of items, "
        "environment base",
        ("each call pushes once",),
        str(fields.pop("reason", "")),
        1.0,
        **fields,  # type: ignore[arg-type]
    )


def test_a_first_order_proof_gives_the_scope_for_every_size() -> None:
    first, second = _settled("unlocked", _answer("proved"))
    assert (first.verdict, first.method, first.bound) == (PROVED, "fol", "every size")
    assert first.scope.startswith("every number of calls of sites {replacement, user-turn}")
    assert first.assumptions == ("each call pushes once",)
    assert first.matched and not first.reason
    # invariant 2 is not the first-order engine's: the explorer's bounded proof, said so
    assert (second.verdict, second.method, second.bound) == (PROVED, "explore", "calls<=2 items<=2")
    assert second.scope == "the catalog's scenario: 2 calls at most"
    assert "does not prove agreement-at-rest" in second.reason


@pytest.mark.parametrize(
    ("answer", "timed_out", "why"),
    [
        (_answer("unknown", reason="z3 did not settle a query"), False, "z3 did not settle"),
        (None, True, "no answer within the time limit (5 s)"),
    ],
)
def test_an_unknown_or_a_time_out_keeps_the_bounded_proof_and_says_why(
    answer: FolAnswer | None, timed_out: bool, why: str
) -> None:
    first, _ = _settled("unlocked", answer, timed_out)
    assert first.verdict == PROVED and first.method == "explore"
    assert "every number" not in first.scope and first.bound != "every size"
    assert first.scope.startswith("the catalog's scenario")
    assert why in first.reason


def test_a_first_order_counterexample_on_a_holding_cell_is_a_finding() -> None:
    sites = catalog_sites([HOLDING])
    config = None
    for mix in mixes(sites, 2, BASE):
        candidate = Config(VARIANTS_BY_NAME["unlocked"], mix, BASE, extra_sites=sites)
        if explore(candidate, (INV1,)).finding(INV1).verdict is Verdict.COUNTEREXAMPLE:
            config = candidate
            break
    assert config is not None, "no mix of two calls of these sites fails without a lock"
    trace = explore(config, (INV1,)).finding(INV1).trace
    first, _ = _settled("unlocked", _answer("fails", scenario=config.scenario, trace=trace))
    assert first.verdict == COUNTEREXAMPLE and first.method == "fol"
    assert not first.matched  # the catalog expects a proof here: exit status 1
    assert first.witness is not None and first.witness.scenario == config.scenario.name
    assert "the first-order engine found a counterexample" in first.reason


def test_a_first_order_counterexample_the_model_does_not_confirm_is_an_internal_error() -> None:
    sites = catalog_sites([HOLDING])
    mix = mixes(sites, 1, BASE)[0]
    config = Config(VARIANTS_BY_NAME["lock5"], mix, BASE, extra_sites=sites)
    harmless = replay(config, ())  # a run that breaks nothing, passed off as one that does
    with pytest.raises(InternalError, match="does not break the invariant"):
        _settled("lock5", _answer("fails", scenario=mix, trace=harmless))


def test_a_failing_cell_names_the_fewest_calls_and_searched_below_them() -> None:
    runner = _Default(
        [VARIANTS_BY_NAME["unlocked"]],
        [SCENARIOS_BY_NAME["two-replacements-during-user-turn"]],
        [BASE],
        (INV1,),
        timeout=5.0,
        impl=None,
    )
    group = explore_group(
        VARIANTS_BY_NAME["unlocked"],
        BASE,
        runner.scenarios,
        (INV1,),
        runner.sites,
        runner._mixes(BASE),
    )
    part = group.part(INV1)
    # the catalog's scenario has three calls; a mix of two already breaks it
    assert part.witness is not None and len(part.witness.config.scenario.calls) == 2
    assert part.mix_sizes == (1, 2)
    assert part.witness.config.scenario.name.startswith("mix:")
    runner.groups[("unlocked@openai", "base")] = Finished(("explore",), group, False, 0.1)
    (cell,) = runner.cells()
    assert cell.verdict == COUNTEREXAMPLE and cell.matched
    assert cell.scope.startswith("2 calls: ") and cell.scope.endswith("(no fewer calls fail)")


def test_a_mix_that_fails_where_the_catalog_holds_is_a_mismatch() -> None:
    # unlocked keeps invariant 1 on stale-replacement under base, but not on every mix of
    # two calls of its sites: the widened bounded proof finds that
    first, _ = _settled("unlocked", None, mixes_too=True)
    assert first.verdict == COUNTEREXAMPLE and not first.matched
    assert all(check.matched for check in first.scenarios)


def _sleep(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def _fail() -> None:
    raise ValueError("a job that breaks")


def test_a_job_past_its_deadline_is_ended_and_others_finish() -> None:
    pool = Jobs(2)
    pool.submit("slow", _sleep, (30.0,), timeout=0.5)
    pool.submit("quick", _sleep, (0.0,), timeout=10.0)
    started = time.monotonic()
    done = {f.key: f for f in pool.results()}
    assert time.monotonic() - started < 5
    assert done["slow"].timed_out and done["slow"].value is None
    assert not done["quick"].timed_out and done["quick"].value == 0.0


def test_a_job_that_raises_is_an_internal_error_naming_it() -> None:
    pool = Jobs(1)
    pool.submit("broken", _fail, (), timeout=10.0)
    with pytest.raises(InternalError, match=r"(?s)broken.*a job that breaks"):
        list(pool.results())


def _says(answer: str) -> Callable[[Witness], str]:
    return lambda witness: answer


def test_a_counterexample_the_implementation_does_not_reproduce_is_a_mismatch() -> None:
    scenario = SCENARIOS_BY_NAME["overlapping-push"]
    variant = VARIANTS_BY_NAME["unlocked"]
    verdicts = {}
    for said in ("reproduced", "not reproduced: the implementation did not break it"):
        runner = _Default([variant], [scenario], [BASE], (INV1,), 5.0, impl=_says(said))
        group = explore_group(variant, BASE, [scenario], (INV1,), runner.sites, ())
        runner.groups[("unlocked@openai", "base")] = Finished(("explore",), group, False, 0.1)
        (cell,) = runner.cells()
        assert cell.witness is not None and cell.witness.impl == said
        verdicts[said] = cell.matched
    assert verdicts == {
        "reproduced": True,
        "not reproduced: the implementation did not break it": False,
    }


# -- the default run's first-order part: committed certificates only -------------------

#: The sites of the whole catalog: three-way's certificates are for these.
EVERY_SITE = catalog_sites(SCENARIOS)


def test_a_cell_with_no_certificate_is_unknown_at_once_and_nothing_is_sampled() -> None:
    # three-way's certificates are for all six sites: five of them have none
    sites = tuple(site for site in EVERY_SITE if site.name != "spoken-message")
    cell = fol.Cell(VARIANTS_BY_NAME["three-way"], sites, ENVIRONMENTS_BY_NAME["server-items"])
    outcome = fol.prove(cell, certified_only=True)
    assert outcome.status == fol.UNKNOWN and outcome.reason.startswith("no certificate: ")
    assert certificate.key(cell) in outcome.reason
    assert outcome.sampled == 0 and outcome.candidates == 0 and not outcome.seconds


def test_a_certificate_the_model_no_longer_keeps_is_unknown_and_keeps_the_bounded_proof(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model change that breaks a committed certificate: lock5 {user-turn, cleanup}'s
    invariant, committed under the key of the mutant that releases the locks when the
    push sends. Its check fails (a real counterexample to induction), the answer is
    unknown and says why, and the cell keeps the explorer's bounded proof."""
    sites = tuple(SITES_BY_NAME[name] for name in ("user-turn", "cleanup"))
    sound = fol.Cell(VARIANTS_BY_NAME["lock5"], sites, BASE)
    mutant = fol.Cell(VARIANTS_BY_NAME["lock5"], sites, BASE, "early-release")
    (tmp_path / certificate.key(mutant)).write_text(
        (certificate.DIRECTORY / certificate.key(sound)).read_text()
    )
    monkeypatch.setattr(certificate, "DIRECTORY", tmp_path)
    outcome = fol.prove(mutant, certified_only=True)
    assert outcome.status == fol.UNKNOWN and outcome.cti is not None
    assert f"the committed certificate {certificate.key(mutant)} no longer checks" in outcome.reason
    assert outcome.sampled == 0 and set(outcome.seconds) == {"certificate"}
    stale = FolAnswer(
        outcome.status,
        outcome.scope,
        outcome.assumptions,
        outcome.reason,
        1.0,
        certificate=certificate.key(mutant),
    )
    first, _ = _settled("lock5", stale)
    assert (first.verdict, first.method) == (PROVED, "explore")
    # not a match: the exit status says the repository's proof for every size is gone
    assert not first.matched and first.stale_certificate == certificate.key(mutant)
    shown = "\n".join(table_lines([first]))
    assert "<-- MISMATCH" in shown
    assert f"the committed certificate {certificate.key(mutant)} no longer checks" in shown
    assert first.bound != "every size" and first.scope.startswith("the catalog's scenario")
    assert "no longer checks" in first.reason
    assert first.first_order is not None and first.first_order.status == fol.UNKNOWN
    assert first.first_order.certificate == certificate.key(mutant)


def test_a_proof_for_every_size_of_a_cell_the_explorer_fails_is_an_internal_error() -> None:
    """The check runs before the explorer's answer is in: a cell the explorer then fails
    keeps its counterexample, and a "proved" there (here a mutant answer: unlocked loses
    an item on overlapping-push) is a contradiction between two engines, never a verdict."""
    failing = SCENARIOS_BY_NAME["overlapping-push"]
    first, _ = _settled("unlocked", _answer("unknown", reason="no certificate"), scenario=failing)
    assert first.verdict == COUNTEREXAMPLE and first.method == "explore" and first.matched
    with pytest.raises(InternalError, match="where the explorer has a counterexample"):
        _settled("unlocked", _answer("proved"), scenario=failing)


class _Pool:
    """Records what `run` submits, and runs nothing."""

    submitted: ClassVar[list[tuple[object, ...]]] = []

    def __init__(self, workers: int, preload: object = ()) -> None:
        self.finished = 0

    def submit(self, key: tuple[object, ...], fn: object, args: object, timeout: float) -> None:
        _Pool.submitted.append(key)

    def results(self) -> list[Finished]:
        return []


@pytest.mark.parametrize("fol_seconds", [0.0, 5.0])
def test_certificate_checks_go_first_once_per_first_order_system(
    monkeypatch: pytest.MonkeyPatch, fol_seconds: float
) -> None:
    """By default the checks are submitted before any explorer group: for three-way one
    job, the check of the certificate of its cell with every option the engine reads
    (not a column of this run), which answers both of its first-order systems here (base,
    reconnects and stale-anchors are one, the options it leaves out being inert there;
    stale-copies another); lock5 has no certificate on the catalog's sites and is
    answered without a job. With --fol-seconds, proofs wait for the explorer."""
    monkeypatch.setattr(verdicts, "Jobs", _Pool)
    monkeypatch.setattr(_Pool, "submitted", [])
    names = ("base", "reconnects", "stale-anchors", "stale-copies")
    environments = [ENVIRONMENTS_BY_NAME[name] for name in names]
    variants = [VARIANTS_BY_NAME["three-way"], VARIANTS_BY_NAME["lock5"]]
    runner = _Default(variants, SCENARIOS, environments, (INV1,), 5.0, None, fol_seconds)
    runner.run(2, None)
    kinds = [key[0] for key in _Pool.submitted]
    explorer = ["explore"] * len(names) * len(variants)
    if fol_seconds:
        assert kinds == explorer and not runner.proofs
        return
    assert kinds == ["fols", *explorer]
    assert _Pool.submitted[0][2] == "stale-copies+server-items+timeouts+rejections"
    three_way = VARIANTS_BY_NAME["three-way"]
    shared = {runner._fol_key(three_way, env) for env in environments[:3]}
    assert len(shared) == 1
    assert runner._covering[_Pool.submitted[0]] == [  # type: ignore[index]
        runner._fol_key(three_way, environments[0]),
        runner._fol_key(three_way, environments[3]),
    ]
    lock5 = runner.proofs[runner._fol_key(VARIANTS_BY_NAME["lock5"], environments[0])]
    assert lock5.value.status == fol.UNKNOWN and lock5.value.reason


def test_a_column_that_takes_another_columns_check_says_whose() -> None:
    three_way = VARIANTS_BY_NAME["three-way"]
    columns = [BASE, ENVIRONMENTS_BY_NAME["reconnects"]]
    runner = _Default([three_way], [HOLDING], columns, (INV1,), 5.0, None)
    for environment in columns:
        group = explore_group(three_way, environment, [HOLDING], (INV1,), runner.sites, ())
        key = ("three-way@three-way", environment.name)
        runner.groups[key] = Finished(("explore",), group, False, 0.1)
    answer = _answer("proved", certificate="three-way--x--base.json")
    runner.proofs[runner._fol_key(three_way, BASE)] = Finished(("fol",), answer, False, 2.0)
    base, reconnects = runner.cells()
    assert base.bound == reconnects.bound == "every size"
    assert reconnects.scope.endswith("environment reconnects")
    assert reconnects.first_order is not None and reconnects.first_order.checked_on == "base"
    assert cell_json(reconnects)["first_order"] == {
        "status": "proved",
        "certificate": "three-way--x--base.json",
        "checked_on": "base",
        "seconds": 2.0,
        "cover": None,
    }
    lines = table_lines([base, reconnects])
    assert any(
        "three-way / three-way / base: certificate three-way--x--base.json: proved" in line
        and line.endswith("the same answer for reconnects")
        for line in lines
    )


def test_a_column_proved_by_a_wider_columns_certificate_names_it_and_why() -> None:
    """The default run's one check for three-way: a column whose first-order system the
    widest cell's contains is proved by that cell's certificate, and its scope, its JSON
    and the job's line say whose check it was and why it covers the column."""
    three_way = VARIANTS_BY_NAME["three-way"]
    every = ENVIRONMENTS_BY_NAME["all"]
    columns = [BASE, every]
    runner = _Default([three_way], [HOLDING], columns, (INV1,), 5.0, None)
    for environment in columns:
        group = explore_group(three_way, environment, [HOLDING], (INV1,), runner.sites, ())
        runner.groups[("three-way@three-way", environment.name)] = Finished(
            ("explore",), group, False, 0.1
        )
    wide = "three-way--x--stale-copies+server-items+timeouts+rejections.json"
    why = f"proved by the check of certificate {wide}, whose first-order system contains"
    answers = {
        BASE.name: _answer("proved", certificate=wide, checked_on="all", cover=why),
        every.name: _answer("proved", certificate=wide, checked_on="all"),
    }
    for environment in columns:
        runner.proofs[runner._fol_key(three_way, environment)] = Finished(
            ("fols",), answers[environment.name], False, 2.0
        )
    base, widest = runner.cells()
    assert base.bound == widest.bound == "every size"
    assert base.scope.endswith(f"environment base; {why}")
    assert widest.scope.endswith("environment all")
    shown = cell_json(base)["first_order"]
    assert shown["checked_on"] == "all" and shown["cover"] == why
    assert cell_json(widest)["first_order"]["cover"] is None
    lines = table_lines([base, widest])
    assert any(
        f"three-way / three-way / all: certificate {wide}: proved" in line
        and "it proves base too" in line
        for line in lines
    )
