"""Tables for a release report (the JSON of `proofs.adapters.livekit.check`), for people."""

from __future__ import annotations

from typing import Any


def _yes(value: bool | None) -> str:
    return "n/a" if value is None else ("yes" if value else "NO")


def _broken(scenario: dict[str, Any]) -> str:
    parts = []
    if scenario["lost"]:
        parts.append("lost " + ", ".join(scenario["lost"]))
    if scenario["recreated"]:
        parts.append("re-created " + ", ".join(scenario["recreated"]))
    broken = scenario["real_broken"]
    if not parts and "no-unintended-delete" in broken:
        parts.append("deleted an acked item (the copy dropped it too)")
    elif not parts and "removed-at-rest" in broken:
        parts.append("kept an item a push meant to remove")
    elif not parts and broken:
        parts.append("broke " + ", ".join(broken))
    if scenario.get("unsupported"):
        return "not driven over this provider"
    if not scenario["applicable"]:
        parts.append("site absent: nothing pushed")
    return "; ".join(parts) if parts else "kept"


def _calls_not_as_model(scenario: dict[str, Any]) -> list[str]:
    """The first run of a row whose calls did not push as the model's run says (a
    row can break what the model breaks with a call that never ran)."""
    if scenario.get("calls_ran_as_model") is not False:
        return []
    runs = [*scenario["replays"], *scenario["sweep"]]
    off = [run for run in runs if not run.get("ran_as_model", True)]
    first = off[0]
    model = " or ".join("[" + ", ".join(option) + "]" for option in first["model_calls_ran"])
    return [
        f"  {scenario['scenario']}: in {len(off)} run(s) the calls did not push as the "
        f"model's, first {'; '.join(first['stimuli'])} - real [{', '.join(first['calls_ran'])}], "
        f"model {model or 'cannot take these stimuli'}"
    ]


def render(report: dict[str, Any]) -> list[str]:
    """The verdict table, the shortest interleavings, divergences and audit coverage."""
    options = " with " + ", ".join(report["options"]) if report.get("options") else ""
    provider = report.get("provider", "standin")
    under = "the real OpenAI plugin" if provider == "plugin" else "the stand-in realtime model"
    lines = [
        f"livekit-agents {report['release']} (model variant {report['variant']}: "
        f"{report['summary']}) over {under}{options} - {report['seconds']}s"
    ]
    rows = [("scenario", "env", "real code", "model expects", "matches", "stepped")]
    for s in [*report["scenarios"], *report.get("pairs", [])]:
        expected = ", ".join(s["model_broken"]) or "holds"
        if s.get("unsupported"):
            expected = "-"
        elif not s["applicable"]:
            expected = "n/a (site absent)"
        rows.append(
            (
                s["scenario"],
                s["environment"],
                _broken(s),
                expected,
                _yes(s["matches"]),
                f"{s['stepped_with_model']}/{s['sequences']}" if s["sequences"] else "-",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        lines.append(
            "  "
            + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
    for s in report["scenarios"]:
        if s.get("unsupported"):
            lines.append(f"  {s['scenario']}: not driven: {s['unsupported']}")
    for s in report["scenarios"]:
        if s["shortest"]:
            lines.append(f"  shortest, {s['scenario']}: " + "; ".join(s["shortest"]))
    for s in [*report["scenarios"], *report.get("pairs", [])]:
        diverged = [w for w in s["sweep"] if w["divergence"] is not None]
        if diverged and s["applicable"]:
            first = diverged[0]
            detail = first["divergence"].splitlines()
            lines.append(
                f"  {s['scenario']}: {len(diverged)} sequence(s) leave the model, first "
                f"{'; '.join(first['stimuli'])} - {detail[0]}"
            )
            lines.extend("      " + line.strip() for line in detail[1:4])
        for line in _calls_not_as_model(s):
            lines.append(line)
        for why, count in s.get("not_driven_why", {}).items():
            lines.append(f"  {s['scenario']}: {count} run(s) not driven: {why}")
        for error in s["errors"]:
            lines.append(f"  {s['scenario']}: error: {error}")
        for item in s["background_losses"]:
            lines.append(f"  {s['scenario']}: a push deleted the acknowledged {item} (set-up item)")
    for h in report.get("hypothesis", []):
        if h.get("unsupported"):
            lines.append(f"  hypothesis, {h['scenario']}: not driven: {h['unsupported']}")
        elif h["agrees"]:
            lines.append(f"  hypothesis, {h['scenario']}: {h['runs']} runs, all with the model")
        else:
            first = (h["divergence"] or "").splitlines()[:1]
            lines.append(
                f"  hypothesis, {h['scenario']}: disagrees; replay: {h['replay']}"
                + (
                    f" ({first[0]})"
                    if first
                    else f" (real {h['real_broken']}, model {h['model_broken']})"
                )
            )
    if report["paths"]:
        lines.append("  each site alone:")
    for p in report["paths"]:
        where = ", ".join(f"agent_activity.py:{line}" for line in p["push_lines"])
        state = "steps with the model" if p["stepped_with_model"] else "LEAVES THE MODEL"
        if not p["reached"]:
            where, state = "no push (the release has no such site)", ""
        lines.append(f"    {p['site']}: {p['how']} ({p['drive']}) -> {where} {state}".rstrip())
    lines.append("  push places of the audit, and the scenarios that drove them:")
    for p in report["coverage"]:
        lock = p["lock"] or "no lock"
        missing = "NOT DRIVEN" if report["complete"] else "not in this run"
        driven = ", ".join(p["scenarios"]) or missing
        lines.append(
            f"    agent_activity.py:{p['line']} {p['function']} ({p['kind']}, {lock}): {driven}"
        )
    return lines
