"""The docs say what the code does now: generated parts are regenerated and compared."""

import re
import shlex
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


def _python_blocks(page: str) -> list[tuple[int, str]]:
    found = []
    for block in re.finditer(r"^```python\n(.*?)^```\n", page, flags=re.DOTALL | re.MULTILINE):
        found.append((page.count("\n", 0, block.start()) + 1, block.group(1)))
    return found


def test_the_python_of_the_conformance_page_runs() -> None:
    # what a team copies from docs/conformance.md: the porting API and the replays
    page = (DOCS / "conformance.md").read_text()
    blocks = _python_blocks(page)
    assert any("conformance_test_case(" in code for _, code in blocks)
    assert any("@1" in code and "Lockstep.replay" in code for _, code in blocks)
    printed: dict[str, list[str]] = {}
    for line, code in blocks:
        result = subprocess.run(
            [sys.executable, "-c", code],
            cwd=DOCS.parent,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, f"docs/conformance.md:{line}\n{result.stderr}"
        printed[code] = result.stdout.splitlines()
    (replayed,) = [lines for code, lines in printed.items() if "@1" in code]
    assert replayed == [
        "{}",
        "LockView(holder=0, waiting=(1,))",
        "no-unintended-delete T1 (user-turn) sent a delete for acknowledged out1",
    ]


def test_every_ackguard_command_shown_in_a_block_parses() -> None:
    # a reader copies these: each must name a real subcommand and real options
    from proofs.cli import build_parser

    parser = build_parser()
    pages = [DOCS.parent / "README.md", *sorted(DOCS.glob("*.md"))]
    checked = 0
    for page in pages:
        text = page.read_text()
        blocks = re.finditer(r"^```(\w*)\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)
        for block in blocks:
            if block.group(1) not in ("", "sh"):
                continue  # output, code or data
            for line in block.group(2).splitlines():
                line = line.strip().removeprefix("$ ").split(" && ")[-1].split(" #")[0]
                line = line.removeprefix(".venv/bin/")
                if not line.startswith("ackguard "):
                    continue
                try:
                    parser.parse_args(shlex.split(line)[1:])
                except SystemExit as error:
                    assert not error.code, f"{page.name}: {line}"
                checked += 1
    assert checked > 20
