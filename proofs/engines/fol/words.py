"""A first-order state in ackguard's trace words: tasks with their site and program
counter, the three views, the ops and events in flight, the locks."""

from __future__ import annotations

from collections.abc import Iterable

from proofs.engines.fol.solve import Transition
from proofs.engines.fol.vocab import Structure

_PC_WORDS = {
    "idle": "idle",
    "copied": "copied",
    "wact": "wait-activity-lock",
    "wprov": "wait-provider-lock",
    "wacks": "wait-acks",
    "done": "done",
    "failed": "failed",
}
_SLOT_WORDS = (
    ("tsc", "to-server: create"),
    ("tsd", "to-server: delete"),
    ("evc", "to-client: added"),
    ("evd", "to-client: deleted"),
    ("erc", "to-client: rejected create"),
    ("erd", "to-client: rejected delete"),
)


_LOCKS = (("aown", "activity lock"), ("pown", "provider lock"))
_WAITS = (("await", "activity lock"), ("pwait", "provider lock"))


def _items(s: Structure, name: str, *prefix: object) -> list[str]:
    n = len(prefix)
    return sorted(str(t[n]) for t in s.relations.get(name, ()) if t[:n] == prefix)


def _task_line(s: Structure, task: object) -> str:
    site = next(
        (n[5:] for n, rows in s.relations.items() if n.startswith("site:") and (task,) in rows),
        "?",
    )
    pc = next((w for n, w in _PC_WORDS.items() if (task,) in s.relations.get(n, ())), "?")
    parts = [f"{task} ({site}) {pc}"]
    for name, word in (
        ("adds", "adds"),
        ("drops", "drops"),
        ("copy", "copy"),
        ("req", "request"),
        ("base", "base"),
        ("pc", "pending create"),
        ("pd", "pending delete"),
        ("dack", "deleted while acknowledged"),
    ):
        items = _items(s, name, task)
        if items:
            parts.append(f"{word} {{{', '.join(items)}}}")
    if (task,) in s.relations.get("bound", ()):
        parts.append("request is the live local context")
    locks = [w for n, w in _LOCKS if (task,) in s.relations.get(n, ())]
    waits = [w for n, w in _WAITS if (task,) in s.relations.get(n, ())]
    if locks:
        parts.append("holds the " + " and the ".join(locks))
    if waits:
        parts.append("waits for the " + " and the ".join(waits))
    return "; ".join(parts)


def state_lines(s: Structure) -> list[str]:
    """One line per view, per FIFO slot kind in use, and per task."""
    lines = []
    for name, word in (("S", "server"), ("M", "mirror"), ("L", "local"), ("acked", "acked")):
        lines.append(f"{word}: {{{', '.join(_items(s, name))}}}")
    for name, word in (("gone", "gone"), ("np", "never played"), ("pool", "model's pool")):
        items = _items(s, name)
        if items:
            lines.append(f"{word}: {{{', '.join(items)}}}")
    for name, word in _SLOT_WORDS:
        slots = sorted(f"{t} {i}" for t, i in s.relations.get(name, ()))
        if slots:
            lines.append(f"{word} {', '.join(slots)}")
    order = sorted(s.relations.get("before", ()), key=str)
    if order:
        ranks = {t: sum(1 for a, b in order if b == t) for t in s.tasks}
        lines.append(
            "batch order: " + " < ".join(str(t) for t in sorted(s.tasks, key=lambda t: ranks[t]))
        )
    lines += [_task_line(s, t) for t in s.tasks]
    return lines


def transition_lines(transition: Transition, conjunct: str) -> list[str]:
    """A counterexample to induction: the state, the action, and the state it leads to."""
    params = ", ".join(f"{k}={v}" for k, v in transition.params.items())
    return [
        f"conjunct broken: {conjunct}",
        f"action: {transition.action} ({params})",
        "before:",
        *_indent(state_lines(transition.pre)),
        "after:",
        *_indent(state_lines(transition.post)),
    ]


def _indent(lines: Iterable[str]) -> list[str]:
    return ["  " + line for line in lines]
