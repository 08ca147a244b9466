"""Case files: a report of the bug class written as data (`model.cases.Case`), so a
reviewer adds the next one with no model code (`docs/casebook.md`, "Adding a report").

A file names records the model has: sites (the catalog's, or its own written as a
site file writes them), variants and session shapes by catalog name, a shape's
fields by their value names, environments by option names. The shipped schema
(`case-file.schema.json`) fixes the file's structure; the names the model defines
are filled into it from the model when a file is loaded (`effective_schema`), so a
field added to `SessionShape`, an invariant or an item kind is accepted with no
change here, and a misspelt one is refused with the values there are.

`CaseRecord` joins a case with what judging it needs beyond the record (the file's
own sites, and variants that lock them); the catalog's cases are records too.
"""

from __future__ import annotations

import enum
import functools
import json
import os
import sys
import typing
from collections.abc import Callable
from importlib import resources
from typing import Any

import attrs
import jsonschema
import jsonschema.protocols
from attrs import evolve, frozen

from model import (
    SHAPES_BY_NAME,
    SITES_BY_NAME,
    VARIANTS_BY_NAME,
    Call,
    Config,
    Environment,
    Invariant,
    ItemKind,
    LocalUpdate,
    RequestSource,
    Scenario,
    SessionShape,
    Site,
    Variant,
    parse_environment,
)
from model.cases import Case, Expected, Fix
from model.scenarios import validate
from proofs.engines import casebook
from proofs.engines.casebook import CaseVerdict
from proofs.engines.site_file import error_order, explain, read_json
from proofs.errors import CaseFileError, SiteFileError

__all__ = [
    "SCHEMA_NOTE",
    "CaseRecord",
    "case_file_schema",
    "effective_schema",
    "fields_of",
    "load_case_file",
    "shape_fields",
]

#: Where the schema is, for the messages.
SCHEMA_NOTE = "schema: proofs/schemas/case-file.schema.json"


@frozen
class CaseRecord:
    """A case, and what judging it needs beyond `model.cases.Case`: the sites a case
    file adds, and the variants that lock some of them (named in its fixes)."""

    case: Case
    #: The file it was read from; "" for a case of the catalog.
    path: str = ""
    sites: tuple[Site, ...] = ()
    variants: tuple[Variant, ...] = ()

    @property
    def name(self) -> str:
        return self.case.name

    def variant(self, fix: Fix) -> Variant:
        """The variant a configuration names: one of the file's, else the catalog's."""
        for variant in self.variants:
            if variant.name == fix.variant:
                return variant
        return VARIANTS_BY_NAME[fix.variant]

    def config(self, fix: Fix, environment: Environment) -> Config:
        """The model's configuration of one (fix, environment) cell."""
        if not self.sites and not self.variants:
            return casebook.config_of(self.case, fix, environment)
        return Config(
            variant=self.variant(fix),
            scenario=self.case.scenario,
            environment=environment,
            extra_sites=self.sites,
            shape=fix.shape,
        )

    def judge_fix(self, fix: Fix) -> tuple[CaseVerdict, ...]:
        """Every cell of one configuration: `casebook.judge_fix`, with the record's own
        sites and variants in each cell's configuration where it has any."""
        if not self.sites and not self.variants:
            return casebook.judge_fix(self.case, fix)
        return casebook.judge_fix(self.case, fix, self.config)

    def judge(self) -> tuple[CaseVerdict, ...]:
        """Every cell of every configuration: `casebook.judge` itself (and whatever it
        comes to reach) unless the record adds sites."""
        if not self.sites and not self.variants:
            return casebook.judge(self.case)
        return tuple(row for fix in self.case.configurations for row in self.judge_fix(fix))


# -- the schema -------------------------------------------------------------------


def case_file_schema() -> dict[str, Any]:
    """The published JSON Schema (draft 2020-12) of a case file, as shipped."""
    text = resources.files("proofs.schemas").joinpath("case-file.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


#: A shape field's value in a file, read back: (its schema, its parser).
FieldSpec = tuple[dict[str, Any], Callable[[Any], Any]]


def _field_spec(kind: Any) -> FieldSpec | None:
    """How a field of this type is written in a file, or None when it cannot be."""
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        cls = kind
        return {"enum": [member.value for member in cls]}, cls
    if kind is bool:
        return {"type": "boolean"}, bool
    if kind is int:
        return {"type": "integer"}, int
    if kind is str:
        return {"type": "string", "maxLength": 1000}, str
    origin = typing.get_origin(kind)
    if origin in (tuple, frozenset):
        args = [arg for arg in typing.get_args(kind) if arg is not Ellipsis]
        inner = _field_spec(args[0]) if len(args) == 1 else None
        if inner is None:
            return None
        schema, parse = inner
        collect: Callable[[Any], Any] = tuple if origin is tuple else frozenset
        return (
            {"type": "array", "items": schema, "uniqueItems": True, "maxItems": 64},
            lambda values: collect(parse(value) for value in values),
        )
    return None


@functools.cache
def shape_fields() -> dict[str, FieldSpec]:
    """Every `SessionShape` field a file may set (all but its name), read from the
    class: its schema and how its value is read."""
    return fields_of(SessionShape)


def fields_of(cls: type[Any]) -> dict[str, FieldSpec]:
    """Every field of the attrs class `cls` but `name`, by its type hint (enums by
    their values; bool, int, str; tuples and frozensets of those); a field of any
    other type is not settable from a file."""
    specs: dict[str, FieldSpec] = {}
    for field in attrs.fields(cls):
        if field.name == "name":
            continue
        spec = _field_spec(_hint(cls, field))
        if spec is not None:
            specs[field.name] = spec
    return specs


def _hint(cls: type[Any], field: attrs.Attribute[Any]) -> Any:
    """A field's type: its annotation resolved in the class's module, one field at a
    time (so a hint only a type checker resolves costs that field alone), else the
    type of its default."""
    kind: Any = field.type
    if isinstance(kind, str):
        namespace = vars(sys.modules[cls.__module__])
        try:
            kind = eval(kind, dict(namespace))  # an annotation, as typing.get_type_hints does
        except NameError:
            kind = None
    if kind is None and field.default is not attrs.NOTHING:
        kind = type(field.default)
    return kind


def effective_schema() -> dict[str, Any]:
    """The shipped schema with the model's names filled in: invariants, item kinds,
    variants, session shapes and the shape's fields (each with its values)."""
    schema = case_file_schema()
    defs = schema["$defs"]
    defs["invariant"]["enum"] = [invariant.value for invariant in Invariant]
    defs["item-kind"]["enum"] = [kind.value for kind in ItemKind]
    defs["variant"]["enum"] = list(VARIANTS_BY_NAME)
    defs["shape"]["enum"] = list(SHAPES_BY_NAME)
    defs["shape-fields"]["additionalProperties"] = False
    defs["shape-fields"]["properties"] = {name: spec for name, (spec, _) in shape_fields().items()}
    return schema


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    schema = effective_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


# -- loading --------------------------------------------------------------------


def load_case_file(path: str) -> CaseRecord:
    """The case of the file at `path`, checked against `effective_schema()` and then
    against the model (known sites, fresh item ids, expectations the case judges).

    Every error is `CaseFileError`, one line: the file, the JSON path, what was expected.
    """
    if not os.path.exists(path):
        raise CaseFileError(
            f"{path}: no such file (a case file: docs/casebook.md, 'Adding a report')"
        )
    if os.path.isdir(path):
        raise CaseFileError(f"{path}: is a directory, not a case file")
    try:
        data = read_json(path)
    except SiteFileError as error:
        raise CaseFileError(str(error).replace("a site file", "a case file")) from None
    errors = sorted(_validator().iter_errors(data), key=error_order)
    if errors:
        raise CaseFileError(f"{path}: {explain(errors[0], 'a case file object')} ({SCHEMA_NOTE})")
    return _Reader(path, data).record()


class _Reader:
    """Turns a file that follows the schema into records, checking what the schema
    cannot say (which names exist, what the model accepts)."""

    def __init__(self, path: str, data: dict[str, Any]) -> None:
        self.path = path
        self.data = data

    def fail(self, where: str, what: str) -> CaseFileError:
        return CaseFileError(f"{self.path}: {where}: {what}")

    def record(self) -> CaseRecord:
        data = self.data
        sites = self.sites()
        scenario = self.scenario(sites)
        invariants = tuple(Invariant(name) for name in data.get("invariants", [])) or tuple(
            Invariant
        )
        if len(set(invariants)) != len(invariants):
            raise self.fail("$.invariants", "an invariant is named twice")
        environments = self.environments()
        variants: dict[str, Variant] = {}
        before = self.fix(data["before"], "$.before", sites, variants, default_name="before")
        fixes = tuple(
            self.fix(record, f"$.fixes[{number}]", sites, variants)
            for number, record in enumerate(data.get("fixes", []))
        )
        names = [fix.name for fix in (before, *fixes)]
        for number, name in enumerate(names):
            if name in names[:number]:
                raise self.fail(f"$.fixes[{number - 1}].name", f"the name {name!r} is taken")
        if before.name != "before":
            raise self.fail("$.before.name", f'expected "before", got {json.dumps(before.name)}')
        case = Case(
            name=data["name"],
            title=data["title"],
            reports=tuple(data.get("reports", [])),
            summary=data["summary"],
            scenario=scenario,
            before=before,
            fixes=fixes,
            invariants=invariants,
            environments=environments,
        )
        for fix, where in zip(
            case.configurations,
            ["$.before", *(f"$.fixes[{n}]" for n in range(len(fixes)))],
            strict=True,
        ):
            self.check_expectations(case, fix, where)
        return CaseRecord(case, self.path, sites, tuple(variants.values()))

    def sites(self) -> tuple[Site, ...]:
        sites: list[Site] = []
        for number, record in enumerate(self.data.get("sites", [])):
            where = f"$.sites[{number}].name"
            if record["name"] in SITES_BY_NAME:
                raise self.fail(where, f"{record['name']!r} is a catalog site; choose another name")
            if record["name"] in {site.name for site in sites}:
                raise self.fail(where, f"the name {record['name']!r} is taken")
            sites.append(
                Site(
                    name=record["name"],
                    summary=record.get("summary", ""),
                    request=RequestSource(record["request"]),
                    local_update=LocalUpdate(record["local_update"]),
                    source=record.get("source", ""),
                )
            )
        return tuple(sites)

    def scenario(self, sites: tuple[Site, ...]) -> Scenario:
        record = self.data["scenario"]
        known = {**SITES_BY_NAME, **{site.name: site for site in sites}}
        for number, call in enumerate(record["calls"]):
            if call["site"] not in known:
                raise self.fail(
                    f"$.scenario.calls[{number}].site",
                    f"expected a known site, got {json.dumps(call['site'])}; choose from: "
                    + ", ".join(known),
                )
        scenario = Scenario(
            name=record.get("name", self.data["name"]),
            summary=record.get("summary", self.data["title"]),
            calls=tuple(
                Call(call["site"], tuple(call.get("adds", ())), tuple(call.get("drops", ())))
                for call in record["calls"]
            ),
            server=tuple(record.get("server", ("msg0",))),
            local=tuple(record["local"]) if "local" in record else None,
            server_pool=tuple(record.get("server_pool", ())),
            kinds=tuple((item, ItemKind(kind)) for item, kind in record.get("kinds", {}).items()),
        )
        try:
            validate(scenario, sites)
        except ValueError as error:
            raise self.fail("$.scenario", str(error)) from None
        return scenario

    def environment(self, text: str, where: str) -> Environment:
        try:
            return parse_environment(text)
        except ValueError as error:
            raise self.fail(where, str(error)) from None

    def environments(self) -> tuple[Environment, ...]:
        columns: list[Environment] = []
        for number, text in enumerate(self.data["environments"]):
            environment = self.environment(text, f"$.environments[{number}]")
            if environment in columns:
                raise self.fail(f"$.environments[{number}]", f"{text!r} is a column already")
            columns.append(environment)
        return tuple(columns)

    def shape(self, record: dict[str, Any], name: str) -> SessionShape:
        shape = SHAPES_BY_NAME[record["shape"]]
        fields = record.get("fields", {})
        if not fields:
            return shape
        specs = shape_fields()
        values = {field: specs[field][1](value) for field, value in fields.items()}
        return evolve(shape, name=f"{shape.name}/{name}", **values)

    def fix(
        self,
        record: dict[str, Any],
        where: str,
        sites: tuple[Site, ...],
        variants: dict[str, Variant],
        default_name: str = "",
    ) -> Fix:
        name = record.get("name", default_name)
        if not name:
            raise self.fail(where, "missing name")
        variant = VARIANTS_BY_NAME[record["variant"]]
        locks = record.get("locks", [])
        own = {site.name for site in sites}
        for number, site in enumerate(locks):
            if site not in own:
                raise self.fail(
                    f"{where}.locks[{number}]",
                    f"expected a site of $.sites, got {json.dumps(site)}; choose from: "
                    + (", ".join(own) or "(none: the file has no sites)"),
                )
        if locks:
            variant = evolve(
                variant,
                name=f"{variant.name}+{'+'.join(locks)}",
                locked_sites=variant.locked_sites | frozenset(locks),
            )
            variants[variant.name] = variant
        fails = tuple(
            Expected(
                invariant=Invariant(failure["invariant"]),
                environment=self.environment(
                    failure["environment"], f"{where}.fails[{number}].environment"
                ),
                why=failure.get("why", ""),
            )
            for number, failure in enumerate(record.get("fails", []))
        )
        return Fix(
            name=name,
            summary=record["summary"],
            variant=variant.name,
            shape=self.shape(record, name),
            link=record.get("link", ""),
            status=record.get("status", ""),
            release=record.get("release", ""),
            fails=fails,
        )

    def check_expectations(self, case: Case, fix: Fix, where: str) -> None:
        """An expectation no cell of the case checks is refused: it could never fail."""
        for number, failure in enumerate(fix.fails):
            at = f"{where}.fails[{number}]"
            if failure.invariant not in case.invariants:
                raise self.fail(
                    f"{at}.invariant",
                    f"{failure.invariant.value} is not among the case's invariants "
                    f"({', '.join(i.value for i in case.invariants)})",
                )
            if not any(column.covers(failure.environment) for column in case.environments):
                raise self.fail(
                    f"{at}.environment",
                    f"no environment column covers {failure.environment.name} "
                    f"(columns: {', '.join(e.name for e in case.environments)})",
                )
