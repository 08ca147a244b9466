"""Fuzzing the audit with generated Python sources: a verdict, or one line and exit 2.

The sources are made of the audit's own vocabulary (pushes, mirror reads, the
activity lock, copies, helpers that return a snapshot, nested functions and
classes; and the provider side's: a diff against a mirror, sends, deletes, a
session lock, ack waits), nested to random depths and sometimes broken (cut short, a stray
byte, an encoding declaration that lies, a NUL, an expression nested past
the recursion limit). Whatever the audit finds, it
exits 0 or 1 with a table, or 2 with one line; never a traceback or exit 3.
A verdict is also checked against the one thing the generator knows for sure:
a source with no push has no place that breaks the discipline.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proofs.cli import main
from proofs.engines.audit_session_shape import FIELDS as SHAPE_FIELDS
from proofs.engines.audit_session_shape import VALUES as SHAPE_VALUES

FUZZ = settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
#: Past the recursion limit: in the audit's own walk (1000), the parser's (3000), and
#: far past both (the parser then runs out of memory for it).
DEPTHS = [1000, 3000, 10_000, 50_000]
PUSH = "await self._rt_session.update_chat_ctx(ctx)"
DIFF = "d = compute_chat_ctx_diff(self._chat_ctx, msg)"
LINES = st.sampled_from(
    [
        "ctx = self._rt_session.chat_ctx.copy()",
        "ctx = self._rt_session.chat_ctx",
        "ctx = self._agent._chat_ctx.copy()",
        "ctx = self._snapshot()",
        "ctx.items.append(item)",
        "ctx.insert(msg)",
        "self._agent._chat_ctx.insert(msg)",
        "session = self._rt_session",
        "await session.update_chat_ctx(ctx)",
        "x = " + "(" * 30 + "1" + ")" * 30,
        "pass",
        "return ctx",
        "await asyncio.sleep(0)",
        "del ctx",
        "lambda: self._rt_session.chat_ctx",
        PUSH,
        # the provider side's vocabulary: a diff against a mirror, sends, deletes, acks
        DIFF,
        "self._chat_ctx = msg",
        "self._chat_ctx.insert(item)",
        "self._send_event(d)",
        "await self._conn.send(d)",
        "for i in d.to_remove: self._delete_item(i)",
        "await asyncio.wait_for(fut, 5.0)",
        "fut.set_result(None)",
        "self._pending = msg",
    ]
)
OPENERS = st.sampled_from(
    [
        "async with self._rt_chat_ctx_lock:",
        "async with self._other_lock:",
        "if cond:",
        "for item in items:",
        "while False:",
        "try:",
        "async def inner():",
        "def helper(self):",
        "with contextlib.suppress(Exception):",
        "async with self._session_lock:",
        "if not self._active:",
    ]
)


@st.composite
def _block(draw: st.DrawFn, depth: int) -> list[str]:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        if depth > 0 and draw(st.booleans()):
            opener = draw(OPENERS)
            lines.append(opener)
            lines += ["    " + line for line in draw(_block(depth - 1))]
            if opener == "try:":
                lines += ["finally:", "    pass"]
        else:
            lines.append(draw(LINES))
    return lines


@st.composite
def _module(draw: st.DrawFn) -> str:
    methods = []
    for number in range(draw(st.integers(1, 3))):
        body = draw(_block(draw(st.integers(0, 4))))
        methods += [f"    async def m{number}(self, item, msg, items, cond):"]
        methods += ["        " + line for line in body]
    lines = ["import asyncio, contextlib", "class AgentActivity:", *methods]
    return "\n".join(lines) + "\n"


@st.composite
def _damaged(draw: st.DrawFn) -> bytes:
    # the damage first: drawn after a large module, its own draws could overrun
    # Hypothesis's choice budget and never be tried
    how = draw(st.sampled_from(["none", "cut", "byte", "coding", "nul", "indent", "deep"]))
    source = draw(_module()).encode()
    if how == "cut":
        return source[: draw(st.integers(0, len(source)))]
    if how == "byte":
        at = draw(st.integers(0, len(source)))
        return source[:at] + draw(st.binary(min_size=1, max_size=2)) + source[at:]
    if how == "coding":
        return (
            b"# -*- coding: "
            + draw(st.sampled_from([b"latin-1", b"nope", b"utf-16"]))
            + (b" -*-\n" + source)
        )
    if how == "nul":
        return source + b"\x00"
    if how == "deep":  # an expression nested past the recursion limit, in a method
        operator = draw(st.sampled_from(["-", "not ", "~"]))
        deep = "x = self._rt_session.chat_ctx + " + operator * draw(st.sampled_from(DEPTHS))
        return source + f"    def deep(self):\n        {deep}1\n".encode()
    if how == "indent":
        return source.replace(b"    ", b"   ", 1)
    return source


def _audit(data: bytes, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "agent_activity.py"
        path.write_bytes(data)
        code = main(["audit", str(path)])
    out, err = capsys.readouterr()
    return code, out, err


@FUZZ
@given(source=_module())
def test_generated_sources_get_a_verdict(source: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _audit(source.encode(), capsys)
    assert code in (0, 1), err
    assert "breaking the lock discipline" in out
    pushes = PUSH in source or "await session.update_chat_ctx" in source
    if not pushes:
        assert code == 0, source
    # a session is a class whose coroutine diffs against an attribute of self
    if DIFF not in source:
        assert "session class" not in out, source
    for line in out.splitlines():
        if line.startswith("  ") and line.split()[0] in SHAPE_FIELDS:
            value = line.split()[1]
            assert value == "UNDECIDED" or value in SHAPE_VALUES[line.split()[0]], line


@FUZZ
@given(data=_damaged())
def test_damaged_sources_get_a_verdict_or_one_line_and_exit_2(
    data: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _audit(data, capsys)
    assert code in (0, 1, 2), err
    if code == 2:
        assert out == "" and err.count("\n") == 1 and "Traceback" not in err, err
        assert err.startswith("ackguard audit: error: ")
