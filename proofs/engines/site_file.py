"""Site records from a file (as `ackguard audit --emit-sites` writes them), turned
into something the model can check at once: the variant the code is (which of
its sites hold the activity lock), and a scenario for every pair of its sites.

A pair is the unit of the bug: every finding in the catalog needs at most two
pushes. Three or more are left to `benchmarks/stress_model.py`.
"""

from __future__ import annotations

import functools
import itertools
import json
from importlib import resources
from typing import Any

import jsonschema
import jsonschema.protocols
from attrs import frozen

from model import Call, LocalUpdate, RequestSource, Scenario, Site, SpeechTurn, Variant
from model.scenarios import validate
from proofs.errors import SiteFileError

#: The request kind of a place the audit could not follow (kept in the file with a note).
UNKNOWN = "unknown"

#: The never-played item a local-context push (a cleanup) means to remove.
NEVER_PLAYED = "asst1"


@frozen
class SiteSpec:
    """Sites found in real code, and which of them hold the activity lock."""

    sites: tuple[Site, ...]
    locked: frozenset[str]
    path: str
    #: Records of unknown request kind, by name, with their notes: kept in the file,
    #: reported as skipped, never checked as sites.
    skipped: tuple[tuple[str, str], ...] = ()

    def skipped_lines(self) -> list[str]:
        """One line per skipped record, for the command that loaded the file to print."""
        return [
            f"{self.path}: skipped {name} (unknown request kind): {note}"
            for name, note in self.skipped
        ]

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
    """The site records of `path`, checked against `site_file_schema()` first.

    Nothing is coerced: a string where a boolean belongs (`"locked": "no"`) is an
    error, never read as true, so a hand-edited file cannot pass by accident.
    """
    records = read_json(path)
    if records == []:
        raise SiteFileError(
            f"{path}: no site records (an audit that found no push writes an empty list); "
            + MAKE_ONE.format(path=path)
        )
    errors = sorted(_validator().iter_errors(records), key=error_order)
    if errors:
        raise SiteFileError(f"{path}: {explain(errors[0])} ({SCHEMA_NOTE})")
    sites: list[Site] = []
    locked: set[str] = set()
    skipped: list[tuple[str, str]] = []
    names: set[str] = set()
    for number, record in enumerate(records):
        if record["name"] in names:
            raise SiteFileError(f"{path}: $[{number}].name: the name {record['name']!r} is taken")
        names.add(record["name"])
        if record["request"] == UNKNOWN:
            skipped.append((record["name"], record["note"]))
            continue
        site = Site(
            name=record["name"],
            summary=record.get("summary", ""),
            request=RequestSource(record["request"]),
            local_update=LocalUpdate(record["local_update"]),
            source=record.get("source", ""),
            speech=SpeechTurn(record.get("speech", SpeechTurn.NONE.value)),
            after_hidden_call=record.get("after_hidden_call", False),
        )
        sites.append(site)
        if record.get("locked", False):
            locked.add(site.name)
    if not sites:
        notes = "; ".join(f"{name}: {note}" for name, note in skipped)
        raise SiteFileError(
            f"{path}: no site the model can check, only places of unknown kind ({notes})"
        )
    return SiteSpec(tuple(sites), frozenset(locked), path, tuple(skipped))


#: Where the schema is, for the messages; `docs/porting.md` points editors at it.
SCHEMA_NOTE = "schema: proofs/schemas/site-file.schema.json"
#: Larger site files are refused before parsing; 64 records take well under 100 kB.
MAX_BYTES = 1_000_000


def site_file_schema() -> dict[str, Any]:
    """The published JSON Schema (draft 2020-12) of a site file, shipped with the package."""
    text = resources.files("proofs.schemas").joinpath("site-file.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    schema = site_file_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def read_json(path: str) -> Any:
    """The JSON value of a site or session file, with one-line errors naming it."""
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise SiteFileError(f"{path}: no such file; {MAKE_ONE.format(path=path)}") from None
    except IsADirectoryError:
        raise SiteFileError(f"{path}: is a directory, not a site file") from None
    except OSError as error:
        raise SiteFileError(f"cannot read {path}: {error.strerror}") from None
    if len(data) > MAX_BYTES:
        raise SiteFileError(f"{path}: larger than {MAX_BYTES} bytes; not a site file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise SiteFileError(f"{path}:{line}: not UTF-8 (byte {error.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise SiteFileError(f"{path}:{error.lineno}: not JSON: {error.msg}") from None
    except RecursionError:
        # a site file is two levels deep; this deep, it is not one
        raise SiteFileError(f"{path}: JSON nested too deeply; not a site file") from None


def error_order(error: jsonschema.ValidationError) -> tuple[int, ...]:
    """The first record's error first, the outermost of that record's first."""
    return tuple(part if isinstance(part, int) else 0 for part in error.absolute_path)


def explain(
    error: jsonschema.ValidationError, whole: str = "a non-empty JSON list of site records"
) -> str:
    """`$[2].locked: expected true or false, got "no"`: the JSON path and what was expected
    (`whole`: what the file as a whole must be)."""
    where = error.json_path
    # jsonschema types these as possibly unset; on a validation error they are set
    instance: Any = error.instance
    expected: Any = error.validator_value
    schema: Any = error.schema
    properties: dict[str, Any] = schema.get("properties", {}) if isinstance(schema, dict) else {}
    got = _shown(instance)
    kind = error.validator
    if kind == "type":
        words = {"boolean": "true or false", "string": "a string", "object": "an object"}
        wanted = words.get(str(expected), f"a JSON {expected}")
        if where == "$":
            wanted = whole
        return f"{where}: expected {wanted}, got {got}"
    if kind == "enum":
        return f"{where}: expected a known value, got {got}; choose from: {', '.join(expected)}"
    if kind == "required":
        missing = [key for key in expected if key not in instance]
        return f"{where}: missing {', '.join(missing)}"
    if kind == "additionalProperties":
        unknown = sorted(set(instance) - set(properties))
        return f"{where}: unknown field {_shown(unknown[0])}; known fields: {', '.join(properties)}"
    if kind in ("maxItems", "minItems"):
        return (
            f"{where}: expected {'at most' if kind == 'maxItems' else 'at least'} {expected} "
            f"records, got {len(instance)}"
        )
    if kind in ("maxLength", "minLength"):
        bound = "at most" if kind == "maxLength" else "at least"
        return f"{where}: expected {bound} {expected} characters, got {len(instance)}"
    if kind == "pattern":
        return (
            f"{where}: expected a name with no control characters and no space at either end, "
            f"got {got}"
        )
    return f"{where}: {error.message}"


def _shown(value: Any) -> str:
    """A value as JSON, cut short: the message stays one line."""
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 60 else text[:57] + "..."


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
