"""The livekit-agents releases ackguard checks, and how each is put on the path.

The installed release (the `ackguard[livekit]` extra pins one) runs in-process.
Any other runs in a subprocess whose `PYTHONPATH` starts with a folder under
`.cache/livekit/<version>` holding just that release and the `livekit` (rtc)
build it pins, installed with `pip install --no-deps --target`: both releases
share every other dependency (their requirements differ only in that pin), so
the second release costs seconds, not a second virtual environment.

This module never imports livekit, so it can say what is installed first.
"""

from __future__ import annotations

import fcntl
import importlib.metadata
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from attrs import frozen

from model.sites import FIVE_SITES
from proofs.errors import ReleaseUnavailable

ROOT = Path(__file__).resolve().parents[3]
CACHE = ROOT / ".cache" / "livekit"


@frozen
class Release:
    version: str
    #: The model variant whose lock discipline the release has.
    variant: str
    #: The sites of the model that exist in the release.
    sites: frozenset[str]
    #: What `pip install --no-deps` needs for this release beside the shared dependencies.
    requirements: tuple[str, ...]
    summary: str


RELEASES: tuple[Release, ...] = (
    Release(
        "1.8.8",
        "unlocked",
        FIVE_SITES,
        ("livekit-agents==1.8.8", "livekit==1.1.20", "livekit-plugins-openai==1.8.8"),
        "no activity lock; say() pushes nothing",
    ),
    Release(
        "1.8.9",
        "lock5",
        FIVE_SITES | {"spoken-message"},
        ("livekit-agents==1.8.9", "livekit==1.1.21", "livekit-plugins-openai==1.8.9"),
        "the activity lock on the five sites; a new spoken-message push outside it",
    ),
)
RELEASES_BY_VERSION: dict[str, Release] = {release.version: release for release in RELEASES}


def installed_version() -> str | None:
    """The livekit-agents on this interpreter's path, without importing it."""
    try:
        return importlib.metadata.version("livekit-agents")
    except importlib.metadata.PackageNotFoundError:
        return None


def release_dir(version: str, cache: Path = CACHE) -> Path:
    return cache / version


def ensure_release(version: str, cache: Path = CACHE) -> tuple[Path, float]:
    """Install `version` under the cache (once); its folder and the seconds it took."""
    return install_into(release_dir(version, cache), RELEASES_BY_VERSION[version].requirements)


def _once(target: Path, wanted: str, install: Callable[[], None]) -> tuple[Path, float]:
    """Run `install` into `target` once: a marker file holds `wanted` (what was
    installed), and a lock file keeps two test workers from installing into the
    same folder at once (the second waits, then finds the marker)."""
    marker = target / ".ackguard-complete"
    if marker.exists() and marker.read_text() == wanted:
        return target, 0.0
    started = time.perf_counter()
    target.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (marker.exists() and marker.read_text() == wanted):
            install()
            marker.write_text(wanted)
    return target, time.perf_counter() - started


def install_into(target: Path, requirements: Sequence[str]) -> tuple[Path, float]:
    """`pip install --no-deps --target TARGET REQUIREMENTS`, once (`_once`)."""

    def install() -> None:
        command = [sys.executable, "-m", "pip", "install", "--quiet"]
        command += ["--disable-pip-version-check", "--no-deps", "--no-compile", "--upgrade"]
        command += ["--target", str(target), *requirements]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise ReleaseUnavailable(
                f"pip could not install {' '.join(requirements)}: {result.stderr.strip()[-2000:]}"
            )

    return _once(target, "\n".join(requirements), install)


def npm_install_into(target: Path, package: Path) -> tuple[Path, float]:
    """`npm ci` of the `package.json`, `package-lock.json` (and `.npmrc`, if any) in
    `package` into TARGET (TARGET/node_modules), once (`_once`; the marker holds
    those files' text: a new pin reinstalls). Install scripts are not run: the
    releases' native parts ship prebuilt."""
    files = tuple(
        name
        for name in ("package.json", "package-lock.json", ".npmrc")
        if (package / name).exists()
    )

    def install() -> None:
        for name in files:
            (target / name).write_text((package / name).read_text())
        command = ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
        try:
            result = subprocess.run(
                command, capture_output=True, text=True, check=False, cwd=target
            )
        except FileNotFoundError:
            raise ReleaseUnavailable("npm is not on the PATH") from None
        if result.returncode != 0:
            raise ReleaseUnavailable(f"npm ci in {target} failed: {result.stderr.strip()[-2000:]}")

    return _once(target, "\n".join((package / name).read_text() for name in files), install)


def run_module(
    release: Path | None, argv: Sequence[str], stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m ARGV` in a subprocess with the release installed at `release` first
    on its path (None: the installed one), ackguard's tree after it; output captured."""
    env = dict(os.environ)
    paths = [str(ROOT)] if release is None else [str(release), str(ROOT)]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return subprocess.run(
        [sys.executable, "-m", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        cwd=ROOT,
    )


def run_release(version: str, args: list[str], cache: Path = CACHE) -> dict[str, object]:
    """Run `python -m proofs.cli.livekit_release --json ARGS` against release `version`.

    The installed release runs in a subprocess too when asked for here, so that
    both releases are reported the same way.
    """
    target = None if installed_version() == version else ensure_release(version, cache)[0]
    result = run_module(target, ["proofs.cli.livekit_release", "--json", *args])
    if result.returncode not in (0, 1):
        raise ReleaseUnavailable(
            f"the livekit-agents {version} run failed ({result.returncode}): "
            f"{result.stderr.strip()[-3000:]}"
        )
    try:
        data = json.loads(result.stdout)
    except json.JSONDecodeError:
        raise ReleaseUnavailable(
            f"the livekit-agents {version} run printed no JSON report; its stderr ends: "
            f"{result.stderr.strip()[-3000:] or '(empty)'}"
        ) from None
    if not isinstance(data, dict) or data.get("release") != version:
        release = data.get("release") if isinstance(data, dict) else None
        raise ReleaseUnavailable(f"the run reported release {release!r}, not {version}")
    return data
