"""One errors module: exception classes under `proofs/` live in `proofs/errors.py`.

Read from the source (no import), so a new class anywhere under `proofs/` is seen
even in a module the suite does not import.
"""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import pytest

import proofs.errors
from proofs.engines.audit import AuditConfig
from proofs.errors import AuditInputError, CannotRun

ROOT = Path(__file__).resolve().parents[1]
BUILTIN_BASES = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)
OURS = frozenset(proofs.errors.__all__)

#: Classes that stay where they are, and why.
ELSEWHERE_ON_PURPOSE = {
    # a finding, not an error: it carries the mismatch report out of a run
    ("proofs/engines/conformance/lockstep.py", "Mismatch"),
    # a test assertion of the unittest case a team runs
    ("proofs/engines/conformance/testing.py", "_Unexpected"),
}


def _base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def exception_classes(text: str) -> list[str]:
    """The classes in `text` that derive, by name, from an exception class."""
    return [
        node.name
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.ClassDef)
        and any(_base_name(base) in BUILTIN_BASES | OURS for base in node.bases)
    ]


def test_no_exception_class_lives_outside_the_errors_module() -> None:
    found = {
        (path.relative_to(ROOT).as_posix(), name)
        for path in sorted((ROOT / "proofs").rglob("*.py"))
        if path.name != "errors.py"
        for name in exception_classes(path.read_text())
    }
    assert found == ELSEWHERE_ON_PURPOSE


def test_the_scan_sees_a_new_class() -> None:
    text = "from proofs.errors import CannotRun\nclass Odd(CannotRun):\n    pass\n"
    assert exception_classes(text) == ["Odd"]
    assert exception_classes("class Fine:\n    pass\nclass Bad(ValueError):\n    pass\n") == ["Bad"]


def test_a_bad_audit_attribute_is_an_input_error_and_still_a_value_error() -> None:
    with pytest.raises(AuditInputError, match="must be a Python identifier") as caught:
        AuditConfig(session_attr="self._session")
    assert isinstance(caught.value, CannotRun) and isinstance(caught.value, ValueError)
