"""The docs say what the code does now: generated parts are regenerated and compared."""

import re
from pathlib import Path

import pytest

from proofs.cli import main

DOCS = Path(__file__).resolve().parent.parent / "docs"

INDEX_DIAGRAM = [
    "verify",
    "--variant",
    "unlocked",
    "--scenario",
    "overlapping-push",
    "--invariant",
    "no-unintended-delete",
    "--environment",
    "base",
    "--mermaid",
]


def _mermaid_blocks(text: str) -> list[str]:
    return re.findall(r"(sequenceDiagram\n.*?)(?:\n```|\n\n)", text, flags=re.DOTALL)


def test_the_index_diagram_is_what_verify_prints(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(INDEX_DIAGRAM) == 0
    printed = _mermaid_blocks(capsys.readouterr().out)
    committed = _mermaid_blocks((DOCS / "index.md").read_text())
    assert printed and committed
    assert committed[0] == printed[0], "regenerate the diagram in docs/index.md"
