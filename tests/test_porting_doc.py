"""Every command in docs/porting.md runs as the page says, in a fresh directory.

The commands are the lines of the page's fenced `sh` blocks, run in order in a
temporary directory holding a copy of `examples/` (a later step reads what an
earlier one wrote). A trailing `# exit N` is the status the page promises;
otherwise 0. A `text` block right after an `sh` block is what its last command
prints (durations aside).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

from attrs import frozen

from examples.callback_session.adapter import acme_factory
from proofs.engines.audit_session_shape import FIELDS as RECORD_FIELDS
from proofs.engines.conformance import conformance_test_case
from tests.examples.mutants import USER_TURN_UNGATED

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "porting.md"

_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```\n", re.DOTALL | re.MULTILINE)
_EXIT = re.compile(r"\s+#\s*exit (\d+)\s*$")
_DURATION = re.compile(r"\d+(\.\d+)? ?s\b")


@frozen
class Command:
    line: int
    text: str
    status: int
    #: What the command prints, line by line (only for the last one of a block).
    prints: tuple[str, ...] = ()


def commands(page: str) -> list[Command]:
    found: list[Command] = []
    blocks = list(_BLOCK.finditer(page))
    for index, block in enumerate(blocks):
        if block.group(1) != "sh":
            continue
        first = page.count("\n", 0, block.start(2)) + 1
        lines = block.group(2).splitlines()
        for offset, line in enumerate(lines):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            status = _EXIT.search(line)
            text = _EXIT.sub("", line) if status else line
            found.append(Command(first + offset, text, int(status.group(1)) if status else 0))
        after = blocks[index + 1] if index + 1 < len(blocks) else None
        if after and after.group(1) == "text" and not page[block.end() : after.start()].strip():
            last = found[-1]
            found[-1] = Command(
                last.line, last.text, last.status, tuple(after.group(2).splitlines())
            )
    return found


def _normal(text: str) -> str:
    return _DURATION.sub("N s", text).rstrip()


#: Commands that drive a real livekit class, and the module they need.
_NEEDS = {"--session duplex": "livekit.agents.llm.duplex_adapter"}


def _can_run(command: Command) -> bool:
    """False for a command whose adapter's extra is not installed here (CI has it)."""
    return all(
        needle not in command.text or importlib.util.find_spec(module) is not None
        for needle, module in _NEEDS.items()
    )


def test_the_page_has_a_command_for_every_step() -> None:
    texts = [command.text for command in commands(DOC.read_text())]
    for needed in (
        "ackguard audit",
        "--emit-sites",
        "ackguard explore --sites",
        "pytest",
        "ackguard conform --session duplex",
    ):
        assert any(needed in text for text in texts), needed


def test_every_command_on_the_page_is_in_a_block_the_test_runs() -> None:
    # only `sh` blocks are run (`text` blocks are what they print): a command in
    # any other block would go unchecked
    page = DOC.read_text()
    for block in _BLOCK.finditer(page):
        if block.group(1) in ("sh", "text"):
            continue
        for line in block.group(2).splitlines():
            assert not line.lstrip().startswith(("ackguard ", "pytest ", "python ")), (
                f"docs/porting.md: {line!r} is in a {block.group(1) or 'plain'} block; "
                "put it in an sh block"
            )


def test_every_command_runs_as_the_page_says(tmp_path: Path) -> None:
    shutil.copytree(
        ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("__pycache__")
    )
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)

    def start(command: Command) -> subprocess.Popen[str]:
        return subprocess.Popen(
            ["bash", "-c", command.text],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    # pytest reads only examples/, so it runs beside the others (which run in order)
    page = [command for command in commands(DOC.read_text()) if _can_run(command)]
    beside = {command: start(command) for command in page if command.text.startswith("pytest")}
    for command in page:
        process = beside.get(command) or start(command)
        output, _ = process.communicate()
        where = f"docs/porting.md:{command.line}: {command.text}"
        assert process.returncode == command.status, (
            f"{where}\nexited {process.returncode}, the page says {command.status}\n{output}"
        )
        printed = [_normal(line) for line in output.splitlines()]
        for line in command.prints:
            assert any(_normal(line) in have for have in printed), (
                f"{where}\ndoes not print {line!r}\n{output}"
            )


def test_the_failure_the_page_shows_is_the_harness_s_own() -> None:
    page = DOC.read_text()
    shown = page[page.index("lock5 / overlapping-push / base, exhaustive:") :]
    shown = shown[: shown.index("```")].rstrip("\n")
    case = conformance_test_case(
        acme_factory(USER_TURN_UNGATED.agent_class()),
        appends_locally=True,
        variant="lock5",
        scenarios=["overlapping-push"],
        modes=("exhaustive",),
    )
    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(case).run(result)
    (failure,) = result.failures
    message = failure[1][failure[1].index("lock5 / overlapping-push") :]
    position = 0
    for part in shown.split("\n[...]\n"):
        found = message.find(part, position)
        assert found >= 0, f"the page shows\n{part}\nthe harness says\n{message}"
        position = found + len(part)


_RECORD_ROW = re.compile(r"^\| [^|]+ \| `([\w-]+)` \|((?: [\w-]+ \|){7})$", re.MULTILINE)


def test_the_page_s_records_are_the_catalog_s() -> None:
    """ "Which shape is your session?" gives the catalog's records as they are, and its
    account of the drop window names the records that have one."""
    from model import SHAPES_BY_NAME
    from model.shapes import DropWindow

    rows = _RECORD_ROW.findall(DOC.read_text())
    assert {name for name, _ in rows} == {"openai", "duplex", "duplex-await", "gemini", "three-way"}
    for name, cells in rows:
        shape = SHAPES_BY_NAME[name]
        shown = tuple(cell.strip() for cell in cells.strip(" |").split("|"))
        assert shown == tuple(getattr(shape, field).value for field in RECORD_FIELDS), name
    windows = {s.name for s in SHAPES_BY_NAME.values() if s.drop_window is not DropWindow.NONE}
    assert windows == {"gemini", "openai-reconnect"}
    assert "`none` (every other\ncatalog record)" in DOC.read_text()
