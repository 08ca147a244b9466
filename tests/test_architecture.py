"""The arrows between rooms (docs/architecture.md) are a contract that import-linter checks."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    tool = Path(sys.executable).with_name("lint-imports")
    command = [str(tool)] if tool.exists() else [sys.executable, "-m", "importlinter.cli"]
    return subprocess.run(
        [*command, "--no-cache"],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(cwd), "PATH": "/usr/bin:/bin"},
    )


def test_every_import_contract_is_kept() -> None:
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def _copy(tmp_path: Path) -> Path:
    for name in ("model", "impl", "proofs"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_an_engine_importing_an_adapter_breaks_the_contract(tmp_path: Path) -> None:
    tree = _copy(tmp_path)
    explorer = tree / "proofs" / "engines" / "explore.py"
    explorer.write_text(explorer.read_text() + "\nimport proofs.adapters.impl  # noqa\n")
    result = _lint_imports(tree)
    assert result.returncode != 0
    assert "inside proofs: command line -> report -> adapters -> engines -> errors BROKEN" in (
        result.stdout
    )
    assert "proofs.engines.explore -> proofs.adapters.impl" in result.stdout


def test_the_conformance_engine_importing_impl_breaks_the_contract(tmp_path: Path) -> None:
    tree = _copy(tmp_path)
    lockstep = tree / "proofs" / "engines" / "conformance" / "lockstep.py"
    lockstep.write_text(lockstep.read_text() + "\nimport impl.fake_server  # noqa\n")
    result = _lint_imports(tree)
    assert result.returncode != 0
    assert "engines check any implementation through an adapter" in result.stdout
    assert "BROKEN" in result.stdout


def test_every_path_docs_architecture_names_exists() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text()
    named = set(
        re.findall(r"`((?:model|impl|proofs|examples|tests|docs|benchmarks)/[^`\s]*)`", page)
    )
    assert len(named) > 20, "the page names the files its recipes touch"
    missing = sorted(path for path in named if not (ROOT / path.rstrip("/")).exists())
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"
