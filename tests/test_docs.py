"""The docs say what the code does now: generated parts are regenerated and compared."""

import re
import subprocess
import sys
from pathlib import Path

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


def test_the_index_diagram_is_what_verify_prints() -> None:
    # a fresh process, as a reader runs it: z3 picks among equally short traces
    # by the history of its context, which other tests in this process change
    result = subprocess.run(
        [sys.executable, "-m", "proofs.cli", *INDEX_DIAGRAM],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    printed = _mermaid_blocks(result.stdout)
    committed = _mermaid_blocks((DOCS / "index.md").read_text())
    assert printed and committed
    assert committed[0] == printed[0], "regenerate the diagram in docs/index.md"
