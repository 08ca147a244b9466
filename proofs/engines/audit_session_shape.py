"""From a session class's facts to its session shape: one rule per field.

The field names and values are the session-shape record's (``model/shapes.py``,
``SessionShape``), written here as strings so the audit does not import the
model. Each rule gives a value and one line of evidence (``file:line what``),
or leaves the field **undecided** with the reason, when the code fits none of
the values (a lock released between the sends and the ack wait, say): an
undecided field is never guessed.
"""

from __future__ import annotations

from attrs import frozen

from proofs.engines.audit_session import SessionFacts, UpdateFacts

__all__ = ["FIELDS", "VALUES", "InferredShape", "infer_shape"]

#: Every field of the record and its values, in the record's order.
VALUES: dict[str, tuple[str, ...]] = {
    "mirror_update": ("on-events", "on-return", "at-send"),
    "sends": ("creates-and-deletes", "creates-only"),
    "session_lock": ("across-acks", "around-check", "none"),
    "acks": ("awaited", "not-awaited"),
    "model_items": ("as-events", "by-session"),
    "while_disconnected": ("kept-back", "none"),
    "on_reconnect": ("rebuild-from-mirror", "none"),
}
FIELDS: tuple[str, ...] = tuple(VALUES)


@frozen
class InferredShape:
    """The shape the audit reads in one session class, with its evidence."""

    name: str
    cls: str
    file: str
    line: int
    #: Field -> value, for every decided field.
    session: dict[str, str]
    #: Field -> ``file:line what``, for every field (decided or not).
    evidence: dict[str, str]
    #: Field -> why no value fits, for the undecided ones.
    undecided: dict[str, str]
    facts: SessionFacts

    @property
    def complete(self) -> bool:
        return not self.undecided


_Rule = tuple[str | None, str]


def _mirror_update(u: UpdateFacts, facts: SessionFacts) -> _Rule:
    mirror = u.view[0]
    after = u.after_diff
    writes = [e for e in after if e in u.mirror_writes]
    if not u.mirror_writes:
        acked = [w for w in facts.writers if w.resolves_acks]
        where = f"; it changes in {acked[0].function} ({acked[0].event.where})" if acked else ""
        others = sorted({e.attr for e in u.view_writes if e.attr is not None})
        kept = (
            "; the push writes only " + ", ".join(f"self.{a}" for a in others) + ", beside it"
            if others
            else ""
        )
        return "on-events", f"{u.file}:{u.line} the push never writes self.{mirror}{where}{kept}"
    if not writes:
        first = u.mirror_writes[0]
        return None, f"{first.where} the push writes self.{first.attr} before its diff only"
    write = writes[0]
    sends = [e for e in after[: after.index(write)] if e.kind == "send"]
    awaits = [e for e in after[: after.index(write)] if e.kind in ("await", "lock")]
    yields = (
        "; awaits between the diff and this write: "
        + ", ".join(f"{e.line} {e.text}" for e in awaits)
        if awaits
        else "; no await between the diff and this write"
    )
    # the model's values are about asyncio steps: a write with no await after the diff
    # is in the step that sends, whatever line the send call is on (`MirrorUpdate`)
    if sends and awaits:
        return "on-return", write.evidence(f"set after the send at {sends[0].where}") + yields
    if sends:
        return "at-send", write.evidence(
            f"set after the send call at {sends[0].where}, in the same step"
        ) + yields
    return "at-send", write.evidence("set before anything is sent") + yields


def _sends(u: UpdateFacts) -> _Rule:
    deletes = u.deletes
    if deletes:
        return "creates-and-deletes", deletes[0].evidence("a delete is built for the diff")
    sends = [e for e in u.after_diff if e.kind == "send"]
    if not sends:
        return None, f"{u.diff.where} nothing is sent after the diff"
    removals = u.of("removals")
    if removals:
        return "creates-only", removals[0].evidence("removals read, no delete built or sent")
    return "creates-only", sends[0].evidence("the only send; no delete built or sent")


def _session_lock(u: UpdateFacts) -> _Rule:
    held = set(u.diff.locks)
    after = u.after_diff
    sends = [e for e in after if e.kind == "send"]
    waits = [e for e in after if e.kind == "ack-wait"]
    locks = u.of("lock")
    if held:
        lock = sorted(held)[0]
        loose = [e for e in sends + waits if lock not in e.locks]
        if loose:
            return None, (
                f"{loose[0].where} self.{lock} is held over the diff ({u.diff.where}) "
                f"but not here: {loose[0].text}"
            )
        spans = "the diff, the sends and the ack wait" if waits else "the diff and the sends"
        acquire = next((e for e in locks if e.attr == lock), u.diff)
        return "across-acks", acquire.evidence(f"held across {spans}")
    if not locks:
        return "none", f"{u.file}:{u.line} no `async with` on a lock in the push"
    locked_sends = [e for e in sends if e.locks]
    if locked_sends:
        return None, f"{locked_sends[0].where} a lock is held over a send but not the diff"
    return "around-check", locks[0].evidence("held only before the diff, not over it or a send")


def _acks(u: UpdateFacts) -> _Rule:
    after = u.after_diff
    sends = [i for i, e in enumerate(after) if e.kind == "send"]
    waits = [e for i, e in enumerate(after) if e.kind == "ack-wait" and sends and i > sends[0]]
    if waits:
        return "awaited", waits[0].evidence("the push waits, with a timeout")
    return "not-awaited", f"{u.file}:{u.line} no wait with a timeout after the sends"


def _model_items(facts: SessionFacts) -> _Rule:
    own = [w for w in facts.writers if not w.resolves_acks]
    if own:
        w = own[0]
        more = f" (and {len(own) - 1} more)" if len(own) > 1 else ""
        return "by-session", w.event.evidence(f"{w.function} inserts into the mirror{more}")
    acked = [w for w in facts.writers if w.resolves_acks]
    if acked:
        w = acked[0]
        return "as-events", w.event.evidence(f"only ack handlers insert ({w.function})")
    bases = f"; bases not audited: {', '.join(facts.unseen_bases)}" if facts.unseen_bases else ""
    return (
        None,
        f"{facts.file}:{facts.line} no method outside the push inserts into the mirror{bases}",
    )


def _while_disconnected(u: UpdateFacts) -> _Rule:
    if u.kept_back is None:
        return "none", f"{u.file}:{u.line} no branch of the push keeps the request and returns"
    if u.kept_back_read is None:
        return None, u.kept_back.evidence("the request is kept, and nothing else reads it")
    read = u.kept_back_read
    return "kept-back", u.kept_back.evidence(
        f"kept while no session is active; read at {read.where}"
    )


def _on_reconnect(facts: SessionFacts) -> _Rule:
    if facts.rebuilds:
        function, event = facts.rebuilds[0]
        return "rebuild-from-mirror", event.evidence(f"{function} sends what the mirror holds")
    return "none", f"{facts.file}:{facts.line} no send outside the push carries the mirror"


def infer_shape(facts: SessionFacts) -> InferredShape:
    """The session shape of one session class, field by field, from its primary push."""
    u = facts.primary
    rules: dict[str, _Rule] = {
        "mirror_update": _mirror_update(u, facts),
        "sends": _sends(u),
        "session_lock": _session_lock(u),
        "acks": _acks(u),
        "model_items": _model_items(facts),
        "while_disconnected": _while_disconnected(u),
        "on_reconnect": _on_reconnect(facts),
    }
    stem = facts.file.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".py")
    return InferredShape(
        name=f"{stem}.{facts.cls}",
        cls=facts.cls,
        file=facts.file,
        line=facts.line,
        session={k: v for k, (v, _) in rules.items() if v is not None},
        evidence={k: why for k, (_, why) in rules.items()},
        undecided={k: why for k, (v, why) in rules.items() if v is None},
        facts=facts,
    )
