"""Session files: the shape the audit infers for a provider class, as JSON, and back.

``ackguard audit --emit-sites FILE`` writes one for a provider file
(``{"session": {...}, "evidence": {...}}``, `session-file.schema.json`); the
loader checks a file against that schema first, as site files are checked, so
a hand-edited file cannot pass with a misspelt value. The field names and
values are the session-shape record's (``model/shapes.py``), kept as strings:
the engines that read such a file map them onto the model themselves.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

import jsonschema
import jsonschema.protocols
from attrs import frozen

from proofs.engines.audit_session import Event
from proofs.engines.audit_session_shape import FIELDS, InferredShape
from proofs.engines.site_file import error_order, explain, read_json
from proofs.errors import SessionFileError

__all__ = [
    "SCHEMA_NOTE",
    "SessionFile",
    "load_session_file",
    "push_facts",
    "session_file_data",
    "session_file_json",
    "session_file_schema",
]

#: Where the schema is, for the messages.
SCHEMA_NOTE = "schema: proofs/schemas/session-file.schema.json"


@frozen
class SessionFile:
    """A loaded session file: the record's fields as strings, and their evidence."""

    path: str
    session: dict[str, str]
    evidence: dict[str, str]
    undecided: dict[str, str]

    @property
    def name(self) -> str:
        return self.session["name"]


def session_file_data(shape: InferredShape) -> dict[str, Any]:
    """The JSON object of a session file for one inferred shape."""
    data: dict[str, Any] = {
        "session": {
            "name": shape.name,
            **{k: shape.session[k] for k in FIELDS if k in shape.session},
        },
        "evidence": {k: shape.evidence[k] for k in FIELDS},
        "source": f"{shape.file}:{shape.line}",
    }
    if shape.undecided:
        data["undecided"] = dict(shape.undecided)
    data["push"] = push_facts(shape)
    return data


def push_facts(shape: InferredShape) -> dict[str, Any]:
    """What the push does, line by line: the facts each field was read from."""
    u = shape.facts.primary

    def lines(events: list[Event]) -> list[str]:
        return [f"{e.where} {e.text}" for e in events]

    write = u.mirror_writes[0] if u.mirror_writes else None
    after = u.after_diff
    between = after[: after.index(write)] if write is not None and write in after else []
    return {
        "method": f"{u.file}:{u.line} {shape.cls}.{u.method}",
        "mirror": [f"self.{attr}" for attr in u.view],
        "diff": f"{u.diff.where} {u.diff.text}",
        "mirror_reads": lines(u.view_reads),
        "mirror_writes": lines(u.mirror_writes),
        "awaits_between_diff_and_write": lines([e for e in between if e.kind in ("await", "lock")]),
        "locks": lines(u.of("lock")),
        "sends": lines([e for e in after if e.kind == "send"]),
        "deletes": lines(u.deletes),
        "ack_waits": lines([e for e in after if e.kind == "ack-wait"]),
    }


def session_file_json(shape: InferredShape) -> str:
    """The session file's text (indented JSON)."""
    return json.dumps(session_file_data(shape), indent=2)


def session_file_schema() -> dict[str, Any]:
    """The published JSON Schema (draft 2020-12) of a session file."""
    text = resources.files("proofs.schemas").joinpath("session-file.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    schema = session_file_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def load_session_file(path: str) -> SessionFile:
    """The session file at `path`, checked against its schema; one-line errors
    (`SessionFileError`) name the file, the JSON path and what was expected."""
    data = read_json(path)
    errors = sorted(_validator().iter_errors(data), key=error_order)
    if errors:
        raise SessionFileError(
            f"{path}: {explain(errors[0], 'a session file object')} ({SCHEMA_NOTE})"
        )
    return SessionFile(
        path=path,
        session=dict(data["session"]),
        evidence=dict(data["evidence"]),
        undecided=dict(data.get("undecided", {})),
    )
