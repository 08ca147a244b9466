"""Casebook cases 1, 2 and 4 confirmed on the released OpenAI realtime session.

The model's counterexample before each fix is replayed on the release's own code
(`proofs.adapters.livekit.cases_a`: its mirror type, its function-call handler, its
diff; no socket): on livekit-agents 1.4.2, before #4876 and #5887, it sends what the
model's configuration before the fix sends, and so loses what the report says; on
the first release with each fix (1.4.4 for #4876, 1.6.5 for #5887) and on the
installed 1.8.9 it sends what the configuration after the fix sends. Case 1's
proposals were never merged: no release, no confirmation.
"""

from __future__ import annotations

from typing import Any

import pytest
from attrs import evolve

from model import Config, Invariant
from model.cases import CASES_BY_NAME
from model.moves import fresh_id
from model.shapes import Withheld
from proofs.engines.casebook import config_of
from proofs.engines.explore import explore
from proofs.engines.trace import Trace, replay
from proofs.errors import ReleaseUnavailable
from tests.livekit.conftest import _unavailable

INV1 = Invariant.NO_UNINTENDED_DELETE
INV5 = Invariant.REMOVED_AT_REST


def _before(
    name: str, invariant: Invariant, withheld: tuple[Withheld, ...] = ()
) -> tuple[Config, Trace]:
    """The case's configuration before the fix (with `withheld` added, to close another
    window) and its shortest counterexample of `invariant` in the case's first column."""
    case = CASES_BY_NAME[name]
    config = config_of(case, case.before, case.environments[0])
    search = evolve(
        config,
        shape=evolve(config.shape, withheld_deletes=(*config.shape.withheld_deletes, *withheld)),
    )
    trace = explore(search, (invariant,)).finding(invariant).trace
    assert trace is not None
    return config, trace


#: (label, case, configuration before, counterexample): replayed on both releases.
REPLAYS: dict[str, tuple[str, Config, Trace]] = {
    "4960-window": ("livekit-agents-4960", *_before("livekit-agents-4960", INV1)),
    "4876-window": ("livekit-agents-4876", *_before("livekit-agents-4876", INV1)),
    # the window of case 1 closed, the shortest loss has the call learned under a fresh id
    "4876-learned": (
        "livekit-agents-4876",
        *_before("livekit-agents-4876", INV1, (Withheld.UNLEARNED_CALLS,)),
    ),
    "5886-trim": ("livekit-agents-5886", *_before("livekit-agents-5886", INV5)),
}


#: The releases replayed besides the installed one: before the fixes, the first with
#: #4876 (and not #5887), the first with #5887.
BEFORE, FIRST_4876, FIRST_5887 = "1.4.2", "1.4.4", "1.6.5"


@pytest.fixture(scope="module")
def reports(livekit_version: str) -> dict[str, dict[str, dict[str, Any]]]:
    """Every replay on every release, each release's replays in one subprocess (the
    installed release's in-process), the subprocesses at once."""
    from proofs.adapters.livekit import cases_a

    versions = [BEFORE, FIRST_4876, FIRST_5887, livekit_version]
    replays = [(config, trace) for _, config, trace in REPLAYS.values()]
    try:
        found = cases_a.run_releases(versions, replays)
    except ReleaseUnavailable as error:
        _unavailable(str(error))
    return {v: dict(zip(REPLAYS, found[v], strict=True)) for v in versions}


@pytest.fixture(scope="module")
def before(reports: dict[str, dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    return reports[BEFORE]


@pytest.fixture(scope="module")
def after(
    reports: dict[str, dict[str, dict[str, Any]]], livekit_version: str
) -> dict[str, dict[str, Any]]:
    return reports[livekit_version]


def _model_after(label: str, fix: str) -> list[list[list[str]]]:
    """The ops of each push when the counterexample runs under the fix's configuration."""
    from proofs.adapters.livekit.cases_a import script_of

    name, config, trace = REPLAYS[label]
    case = CASES_BY_NAME[name]
    (record,) = [f for f in case.fixes if f.name == fix]
    fixed = config_of(case, record, config.environment)
    return script_of(fixed, replay(fixed, trace.moves))[1]


@pytest.mark.parametrize("label", list(REPLAYS))
def test_the_release_before_the_fix_sends_what_the_model_before_sends(
    before: dict[str, dict[str, Any]], label: str
) -> None:
    assert before[label]["renamed"] == before[label]["model"]


def test_case_1_before_the_window_deletes_the_function_call(
    before: dict[str, dict[str, Any]],
) -> None:
    (ops,) = before["4960-window"]["renamed"]
    assert ["delete", "call1"] in ops
    assert all(f.release == "" for f in CASES_BY_NAME["livekit-agents-4960"].fixes)


def test_case_2_before_the_learned_call_is_deleted_and_sent_again_under_a_fresh_id(
    before: dict[str, dict[str, Any]],
) -> None:
    report = before["4876-learned"]
    assert report["fresh"]["call1"] != "call1"
    assert report["renamed"] == [[["delete", "call1"], ["create", fresh_id("call1")]]]


def _release(
    reports: dict[str, dict[str, dict[str, Any]]], version: str, installed: str
) -> dict[str, dict[str, Any]]:
    return reports[installed if version == "installed" else version]


@pytest.mark.parametrize("version", [FIRST_4876, FIRST_5887, "installed"])
def test_case_2_after_the_call_keeps_its_id_and_the_push_sends_nothing(
    reports: dict[str, dict[str, dict[str, Any]]], livekit_version: str, version: str
) -> None:
    report = _release(reports, version, livekit_version)["4876-learned"]
    assert report["fresh"]["call1"] == "call1"
    assert report["renamed"] == _model_after("4876-learned", "pr-4876") == [[]]
    # the model before the fix would not match this release: the comparison can fail
    assert report["renamed"] != report["model"]


@pytest.mark.parametrize("version", [FIRST_4876, FIRST_5887, "installed"])
def test_case_2_after_the_window_of_case_1_still_deletes_the_call(
    reports: dict[str, dict[str, dict[str, Any]]], livekit_version: str, version: str
) -> None:
    report = _release(reports, version, livekit_version)["4876-window"]
    assert report["renamed"] == _model_after("4876-window", "pr-4876")
    assert ["delete", "call1"] in report["renamed"][0]


def test_case_4_the_first_release_with_4876_still_withholds_the_trim(
    reports: dict[str, dict[str, dict[str, Any]]],
) -> None:
    # 1.4.4 is after #4876 and before #5887: the record's shape for it withholds too
    report = reports[FIRST_4876]["5886-trim"]
    assert report["renamed"] == report["model"] == [[]]


@pytest.mark.parametrize("version", [FIRST_5887, "installed"])
def test_case_4_before_the_trim_sends_no_delete_and_after_it_does(
    reports: dict[str, dict[str, dict[str, Any]]], livekit_version: str, version: str
) -> None:
    assert reports[BEFORE]["5886-trim"]["renamed"] == [[]]
    report = _release(reports, version, livekit_version)["5886-trim"]
    assert report["renamed"] == _model_after("5886-trim", "pr-5887")
    assert report["renamed"] == [[["delete", "audio1"]]]
