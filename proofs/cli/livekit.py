"""`ackguard livekit`: released livekit-agents, driven for real, against the model."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from proofs.adapters.livekit.releases import (
    RELEASES,
    RELEASES_BY_VERSION,
    installed_version,
    run_release,
)
from proofs.errors import UsageError

_EXAMPLE = """\
examples:
  pip install -e '.[livekit]'   # once: livekit-agents 1.8.9 and its dependencies
  ackguard livekit --release 1.8.9 --scenario overlapping-push
  ackguard livekit --with timeouts --json
  ackguard livekit --provider plugin --json   # the real OpenAI plugin over the gated socket

exit status: 0 when every verdict is the model's and every push place of the audit was
driven, 1 when not, 2 when a release is unavailable."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "livekit",
        help="run released livekit-agents against the model's interleavings",
        description=(
            "Drive the push paths of a released livekit-agents (a real AgentSession over a "
            "stand-in realtime model with the OpenAI session's semantics, or with --provider "
            "plugin over the release's own OpenAI plugin and a gated local websocket) through "
            "every "
            "interleaving the model allows for each catalog scenario and through the model's "
            "counterexamples, and report per scenario whether an item was lost and whether "
            "that is what the model predicts for the release's variant (1.8.8: unlocked, "
            "1.8.9: lock5). The installed release runs in-process; another is installed under "
            ".cache/livekit/ and run in a subprocess; both need "
            "the livekit extra installed (its dependencies are shared)."
        ),
        epilog=_EXAMPLE,
    )
    parser.add_argument(
        "--release",
        action="append",
        metavar="V",
        choices=[release.version for release in RELEASES],
        help="repeatable; default: every release ackguard knows",
    )
    parser.add_argument("--scenario", action="append", metavar="S", help="repeatable")
    parser.add_argument(
        "--no-sweep",
        action="store_true",
        help="replay the model's counterexamples only, not every interleaving",
    )
    parser.add_argument(
        "--with",
        dest="options",
        action="append",
        default=[],
        choices=["timeouts", "rejections"],
        metavar="OPTION",
        help="add an environment option to every scenario (timeouts, rejections); repeatable",
    )
    parser.add_argument(
        "--provider",
        choices=["standin", "plugin"],
        default="standin",
        help=(
            "the realtime model under the session: ackguard's stand-in (default, fast, can "
            "hold two never-played messages at once) or the release's own OpenAI plugin over "
            "the gated websocket (no stand-in for the provider)"
        ),
    )
    parser.add_argument(
        "--pairs",
        choices=["auto", "yes", "no"],
        default="auto",
        help="also every pair of push places the audit finds (auto: with the whole catalog)",
    )
    parser.add_argument(
        "--hypothesis",
        type=int,
        default=0,
        metavar="N",
        help=(
            "with --provider plugin: N Hypothesis examples per scenario too, each failure "
            "shrunk to a replay string (reported beside the verdicts, not in the exit status)"
        ),
    )
    parser.add_argument(
        "--replay",
        metavar="STEPS",
        help=(
            "with --provider plugin, one --release and one --scenario: run one replay string "
            "(as --hypothesis prints it) over the plugin again"
        ),
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(run=run)


def _report(
    version: str,
    scenarios: list[str] | None,
    sweep: bool,
    options: list[str],
    provider: str = "standin",
    pairs: str = "auto",
    hypothesis: int = 0,
) -> dict[str, Any]:
    if installed_version() == version:
        from model.scenarios import SCENARIOS, SCENARIOS_BY_NAME
        from proofs.adapters.livekit.check import check_release

        chosen = [SCENARIOS_BY_NAME[s] for s in scenarios] if scenarios else list(SCENARIOS)
        return check_release(
            chosen,
            sweep=sweep,
            options=tuple(options),
            provider=provider,
            pairs=None if pairs == "auto" else pairs == "yes",
            hypothesis=hypothesis,
        )
    args: list[str] = [] if sweep else ["--no-sweep"]
    args += ["--provider", provider, "--pairs", pairs, "--hypothesis", str(hypothesis)]
    for name in scenarios or ():
        args += ["--scenario", name]
    for option in options:
        args += ["--with", option]
    print(f"livekit-agents {version}: installing under .cache/livekit if needed", file=sys.stderr)
    return run_release(version, args)


def run(args: argparse.Namespace) -> int:
    from model.scenarios import SCENARIOS_BY_NAME

    unknown = [s for s in args.scenario or () if s not in SCENARIOS_BY_NAME]
    if unknown:
        raise UsageError(
            f"unknown scenario(s): {', '.join(unknown)}; "
            f"choose from: {', '.join(SCENARIOS_BY_NAME)}"
        )
    if installed_version() is None:
        # the other release is put beside the installed one and shares its dependencies
        raise UsageError(
            "livekit-agents is not installed; install the extra from your ackguard clone "
            "with: pip install -e '.[livekit]'"
        )
    if args.hypothesis and args.provider != "plugin":
        raise UsageError("--hypothesis runs over the real plugin: add --provider plugin")
    versions = args.release or list(RELEASES_BY_VERSION)
    if args.replay is not None:
        if args.provider != "plugin" or len(versions) != 1 or len(args.scenario or ()) != 1:
            raise UsageError("--replay needs --provider plugin, one --release and one --scenario")
        replayed = run_release(
            versions[0], ["--scenario", args.scenario[0], "--replay", args.replay]
        )
        json.dump(replayed, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    # a release unavailable here (ReleaseUnavailable) is one line and status 2, by main
    reports = [
        _report(
            version,
            args.scenario,
            not args.no_sweep,
            args.options,
            args.provider,
            args.pairs,
            args.hypothesis,
        )
        for version in dict.fromkeys(versions)
    ]
    if args.json:
        json.dump({"releases": reports}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        from proofs.report.livekit import render

        for report in reports:
            print("\n".join(render(report)))
    return 0 if all(report["as_expected"] for report in reports) else 1
