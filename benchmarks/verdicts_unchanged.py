"""Whether `ackguard verify --json` says the same here as at another commit.

Run it with

    .venv/bin/python benchmarks/verdicts_unchanged.py --ref main

A change meant only to make the checker faster must leave every verdict, depth,
trace, scope and state count as it was. This runs each command below in this
tree and in the other commit (exported with `git archive`, run with this
interpreter), drops the fields that are timings (`seconds`, at any depth), and
compares the rest. It prints the first differences and exits 1 when there are
any, 0 when both say the same. `--cache DIR` keeps the other commit's answers
by its full hash, so a second comparison against the same commit runs only this
tree's.

`--moved-to-compact ENV` (repeatable) is for a change that moves cells from the
readable explorer to the compact one: a compact state stands for every readable
state it encodes (and one state per symmetry orbit), so such a cell keeps its
verdict, depth and trace and counts fewer states. With it, a scenario's state
count (`states=N` in its `bound`) in a cell of environment ENV may differ when
this tree's count is at most the other commit's; each such difference is counted
and printed as a summary, and any other difference still fails.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

# the same exported tree and console script as the timing comparison beside it
from bench_verify_against import _SCRIPT, _export

ROOT = Path(__file__).resolve().parents[1]

#: The verify commands compared: the default run, and the three-way session under
#: every environment option (the mixes of calls the default run does not cover).
COMMANDS: tuple[tuple[str, ...], ...] = (
    ("verify", "--json"),
    ("verify", "--session", "three-way", "--environment", "all", "--json"),
)

#: Fields that are timings, dropped wherever they occur.
TIMINGS = frozenset({"seconds"})


def _answer(tree: Path, command: tuple[str, ...]) -> tuple[int, object]:
    """The command's exit status and its JSON, run from `tree` as a console script."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "ackguard"
        script.write_text(_SCRIPT)
        done = subprocess.run(
            [sys.executable, str(script), *command],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    return done.returncode, _untimed(json.loads(done.stdout))


def _untimed(value: object) -> object:
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def differences(before: object, after: object, path: str = "") -> Iterator[str]:
    """Where `after` differs from `before`, as paths into the JSON."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(before.keys() | after.keys()):
            if key not in after or key not in before:
                yield f"{path}.{key}: only on one side"
            else:
                yield from differences(before[key], after[key], f"{path}.{key}")
    elif isinstance(before, list) and isinstance(after, list):
        if len(before) != len(after):
            yield f"{path}: {len(before)} entries against {len(after)}"
        for index, (b, a) in enumerate(zip(before, after, strict=False)):
            yield from differences(b, a, f"{path}[{index}]")
    elif before != after:
        yield f"{path}: {before!r} against {after!r}"


#: A difference in one scenario's state count, as `differences` words it.
_STATES = re.compile(r"^\[(\d+)\]\.scenarios\[\d+\]\.bound: 'states=(\d+)' against 'states=(\d+)'$")


def moved(found: list[str], before: object, environments: frozenset[str]) -> tuple[list[str], int]:
    """`found` without the fewer state counts of cells in `environments` (a cell's
    environment read from the other commit's answer), and how many were dropped."""
    if not environments or not isinstance(before, list):
        return found, 0
    kept, dropped = [], 0
    for line in found:
        match = _STATES.match(line)
        if match is not None:
            cell = before[int(match.group(1))]
            env = cell.get("environment") if isinstance(cell, dict) else None
            if env in environments and int(match.group(3)) <= int(match.group(2)):
                dropped += 1
                continue
        kept.append(line)
    return kept, dropped


def _ref_answers(ref: str, cache: Path | None) -> list[tuple[int, object]]:
    sha = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", ref], capture_output=True, text=True, check=True
    ).stdout.strip()
    kept = None
    if cache is not None:
        digest = hashlib.sha256(repr(COMMANDS).encode()).hexdigest()[:12]
        kept = cache / f"verdicts-{sha}-{digest}.json"
        if kept.exists():
            return [(code, value) for code, value in json.loads(kept.read_text())]
    with tempfile.TemporaryDirectory() as folder:
        tree = _export(sha, Path(folder))
        answers = [_answer(tree, command) for command in COMMANDS]
    if kept is not None:
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_text(json.dumps(answers))
    return answers


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ref", default="main", help="the commit to compare with")
    parser.add_argument("--cache", type=Path, help="a folder keeping the ref's answers")
    parser.add_argument("--show", type=int, default=20, help="differences printed per command")
    parser.add_argument(
        "--moved-to-compact",
        action="append",
        default=[],
        metavar="ENV",
        help="cells of this environment may count fewer states (see above)",
    )
    args = parser.parse_args()
    environments = frozenset(args.moved_to_compact)
    theirs = _ref_answers(args.ref, args.cache)
    same = True
    for command, (their_code, their_json) in zip(COMMANDS, theirs, strict=True):
        code, answer = _answer(ROOT, command)
        found, dropped = moved(list(differences(their_json, answer)), their_json, environments)
        if dropped:
            words = ", ".join(sorted(environments))
            print(f"{' '.join(command)}: {dropped} state counts fewer (cells under {words})")
        if code != their_code:
            found.insert(0, f"exit status {their_code} against {code}")
        words = " ".join(command)
        if found:
            same = False
            print(f"{words}: {len(found)} differences from {args.ref}")
            for line in found[: args.show]:
                print(f"  {line}")
        else:
            print(f"{words}: the same as {args.ref} (timings aside), exit {code}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
