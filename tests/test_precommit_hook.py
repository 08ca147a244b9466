"""The pre-commit hook ackguard declares runs, and fails exactly on a broken discipline.

pre-commit runs a hook as its `entry` split into words, plus any `args`, plus
the names of the staged files its `files` pattern matches. So does this test,
through the installed console script.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from tests.examples.mutants import SNAPSHOT_BEFORE_GATE

ROOT = Path(__file__).resolve().parent.parent
HOOKS = ROOT / ".pre-commit-hooks.yaml"

#: The example's names, as `docs/porting.md` passes them in `args:`.
EXAMPLE_ARGS = [
    "--session-attr",
    "_session",
    "--mirror-attr",
    "conversation",
    "--push-method",
    "sync",
    "--lock-attr",
    "sync_gate",
    "--local-attr",
    "history",
    "--local-owner",
    "",
]

#: livekit-agents' shape, for the hook's default names.
LIVEKIT_GOOD = """\
class AgentActivity:
    async def _reply(self, message):
        async with self._rt_chat_ctx_lock:
            chat_ctx = self._rt_session.chat_ctx.copy()
            chat_ctx.items.append(message)
            await self._rt_session.update_chat_ctx(chat_ctx)
        self._agent._chat_ctx._upsert_item(message)
"""


def read_hooks(text: str) -> list[dict[str, str]]:
    """The hooks of a `.pre-commit-hooks.yaml` written as a flat list of mappings.

    Read without PyYAML, which ackguard does not depend on: `- key: value`
    starts a hook, `key: value` continues it, `>-` folds the indented lines
    below into one.
    """
    hooks: list[dict[str, str]] = []
    folding: str | None = None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if folding is not None and line.startswith("    "):
            hooks[-1][folding] = (hooks[-1][folding] + " " + line.strip()).strip()
            continue
        folding = None
        match = re.fullmatch(r"(- |  )(\w+): ?(.*)", line)
        assert match, f"unexpected line in {HOOKS.name}: {line!r}"
        start, key, value = match.groups()
        if start == "- ":
            hooks.append({})
        assert hooks, "a key before the first hook"
        if value == ">-":
            folding, value = key, ""
        hooks[-1][key] = value
    return hooks


def _hook() -> dict[str, str]:
    text = HOOKS.read_text()
    hooks = {hook["id"]: hook for hook in read_hooks(text)}
    try:
        import yaml  # type: ignore[import-untyped]  # optional: when present, it agrees
    except ImportError:
        pass
    else:
        assert {h["id"]: h for h in yaml.safe_load(text)} == hooks
    return hooks["ackguard-audit"]


def _run_hook(files: list[Path], args: Sequence[str] = ()) -> subprocess.CompletedProcess[str]:
    hook = _hook()
    command = shlex.split(hook["entry"])
    script = Path(sys.executable).with_name(command[0])
    found = str(script) if script.exists() else shutil.which(command[0])
    assert found, f"{command[0]} is not installed: pip install -e ."
    matched = [str(path) for path in files if re.search(hook["files"], str(path))]
    return subprocess.run(
        [found, *command[1:], *args, *matched], capture_output=True, text=True, check=False
    )


def test_the_hook_is_declared_as_documented() -> None:
    hook = _hook()
    assert hook["entry"] == "ackguard audit"
    assert hook["language"] == "python"
    assert re.search(hook["files"], "agent/activity.py")
    assert not re.search(hook["files"], "README.md")


def test_the_entry_passes_a_good_file_with_livekit_names(tmp_path: Path) -> None:
    file = tmp_path / "agent_activity.py"
    file.write_text(LIVEKIT_GOOD)
    result = _run_hook([file, tmp_path / "notes.md"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 places (1 pushes, 0 mirror reads), 0 breaking" in result.stdout


def test_the_entry_fails_a_bad_file_with_the_example_names(tmp_path: Path) -> None:
    # the example as shipped passes: docs/porting.md runs that (tests/test_porting_doc.py)
    file = tmp_path / "agent.py"
    file.write_text(SNAPSHOT_BEFORE_GATE.source)
    result = _run_hook([file], EXAMPLE_ARGS)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "4 places (4 pushes, 0 mirror reads), 1 breaking" in result.stdout
    assert "is taken outside the lock block" in result.stdout
