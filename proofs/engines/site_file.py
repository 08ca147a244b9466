"""Site records from a file (as `ackguard audit --emit-sites` writes them), turned
into something the model can check at once: the variant the code is (which of
its sites hold the activity lock), and a scenario for every pair of its sites.

A pair is the unit of the bug: every finding in the catalog needs at most two
pushes. Three or more are left to `benchmarks/stress_model.py`.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from attrs import frozen

from model import Call, LocalUpdate, RequestSource, Scenario, Site, Variant
from model.scenarios import validate
from proofs.errors import SiteFileError

#: The never-played item a local-context push (a cleanup) means to remove.
NEVER_PLAYED = "asst1"


@frozen
class SiteSpec:
    """Sites found in real code, and which of them hold the activity lock."""

    sites: tuple[Site, ...]
    locked: frozenset[str]
    path: str

    def variant(self) -> Variant:
        return Variant(
            name="as-audited",
            summary=f"the lock discipline found in {self.path}",
            locked_sites=self.locked,
        )


#: How a site file is made, for the messages about a missing or empty one.
MAKE_ONE = (
    "ackguard audit PATH --emit-sites {path} writes one from your code "
    "(with your names: --session-attr, --mirror-attr, --push-method, --lock-attr; "
    "docs/porting.md, steps 1 and 2)"
)


def load_sites(path: str) -> SiteSpec:
    try:
        records = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise SiteFileError(f"{path}: no such file; {MAKE_ONE.format(path=path)}") from None
    except OSError as error:
        raise SiteFileError(f"cannot read {path}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise SiteFileError(f"{path}:{error.lineno}: not JSON: {error.msg}") from None
    if records == []:
        raise SiteFileError(
            f"{path}: no site records (an audit that found no push writes an empty list); "
            + MAKE_ONE.format(path=path)
        )
    if not isinstance(records, list):
        raise SiteFileError(f"{path}: expected a non-empty JSON list of site records")
    sites: list[Site] = []
    locked: set[str] = set()
    for number, record in enumerate(records, start=1):
        site, is_locked = _site(record, f"{path}: record {number}")
        if site.name in {s.name for s in sites}:
            raise SiteFileError(f"{path}: record {number}: the name {site.name!r} is taken")
        sites.append(site)
        if is_locked:
            locked.add(site.name)
    return SiteSpec(tuple(sites), frozenset(locked), path)


def _site(record: Any, where: str) -> tuple[Site, bool]:
    if not isinstance(record, dict):
        raise SiteFileError(f"{where}: expected an object")
    missing = [key for key in ("name", "request", "local_update") if key not in record]
    if missing:
        raise SiteFileError(f"{where}: missing {', '.join(missing)}")
    requests = {source.value: source for source in RequestSource}
    updates = {update.value: update for update in LocalUpdate}
    if record["request"] not in requests:
        raise SiteFileError(
            f"{where}: request {record['request']!r}; choose from: {', '.join(requests)}"
        )
    if record["local_update"] not in updates:
        raise SiteFileError(
            f"{where}: local_update {record['local_update']!r}; choose from: {', '.join(updates)}"
        )
    site = Site(
        name=str(record["name"]),
        summary=str(record.get("summary", "")),
        request=requests[record["request"]],
        local_update=updates[record["local_update"]],
        source=str(record.get("source", "")),
    )
    return site, bool(record.get("locked", False))


def pair_scenarios(spec: SiteSpec) -> list[Scenario]:
    """One scenario per unordered pair of sites (a site with itself included)."""
    scenarios = []
    for first, second in itertools.combinations_with_replacement(spec.sites, 2):
        pair = (first, second)
        sources = {site.request for site in pair}
        # a cleanup needs a never-played item in the mirror; a replacement beside it
        # would delete that item itself, so such a pair pushes the live context only
        never_played = (
            RequestSource.LOCAL_CONTEXT in sources and RequestSource.CALLER_COPY not in sources
        )
        calls = tuple(_call(site, index, never_played) for index, site in enumerate(pair))
        scenario = Scenario(
            name=f"{first.name} + {second.name}",
            summary=f"{first.name} and {second.name} overlap",
            calls=calls,
            server=("msg0", NEVER_PLAYED) if never_played else ("msg0",),
            local=("msg0",),
        )
        validate(scenario, spec.sites)
        scenarios.append(scenario)
    return scenarios


def _call(site: Site, index: int, never_played: bool) -> Call:
    if site.request is RequestSource.LOCAL_CONTEXT:
        return Call(site.name, drops=(NEVER_PLAYED,) if never_played else ())
    return Call(site.name, adds=(f"item{index}",))
