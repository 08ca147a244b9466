"""The default `ackguard verify` here against the same command at another commit.

Run it with

    .venv/bin/python benchmarks/bench_verify_against.py --ref main --runs 3

The other commit is exported with `git archive` into a temporary folder and run
with this interpreter (the same dependencies), each through a console script as
the README's `.venv/bin/ackguard verify` is, the two alternating run by run so
that both see the same load. It prints each run's wall seconds with the load
average (1 min) before it, then the medians and their ratio. Both runs must
match their catalog (exit 0); a run that does not is reported and left out. (Its
CPU seconds are not printed: the workers are the forkserver's children, which
`getrusage(RUSAGE_CHILDREN)` of this process does not count; `bench_explore.py` and
`bench_fol_certificates.py` give the CPU seconds of the parts.)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _export(ref: str, into: Path) -> Path:
    archive = into / "tree.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "-C", str(ROOT), "archive", ref], stdout=out, check=True)
    tree = into / "tree"
    tree.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    return tree


#: What pip writes as the `ackguard` console script: the README runs verify through
#: it, and a main file path (not `-m`) is what each worker process runs again.
_SCRIPT = (
    "import sys\nfrom proofs.cli import main\nif __name__ == '__main__':\n    sys.exit(main())\n"
)


def _run(tree: Path) -> tuple[float, int]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "ackguard"
        script.write_text(_SCRIPT)
        started = time.perf_counter()
        result = subprocess.run(
            [sys.executable, str(script), "verify", "--json"],
            cwd=tree,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        return time.perf_counter() - started, result.returncode


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ref", default="main", help="the commit to compare with")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        trees = {args.ref: _export(args.ref, Path(folder)), "this tree": ROOT}
        times: dict[str, list[float]] = {name: [] for name in trees}
        for run in range(args.runs):
            for name, tree in trees.items():
                load = os.getloadavg()[0]
                seconds, code = _run(tree)
                print(
                    f"run {run + 1} {name}: {seconds:.1f} s (exit {code}, load {load:.2f})",
                    flush=True,
                )
                if code == 0:
                    times[name].append(seconds)
        medians = {name: statistics.median(t) for name, t in times.items() if t}
        for name, median in medians.items():
            print(f"median {name}: {median:.1f} s over {len(times[name])} runs")
        if len(medians) == 2:
            print(f"ratio: {medians['this tree'] / medians[args.ref]:.2f}")
        print(f"load average at the end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
