"""The provider side of the audit: what a session class's push does, read from source.

The agent side (`proofs.engines.audit`) finds the places that push. A session
class decides what a push *does*: which attribute it diffs against (the
**mirror**), whether its own lock spans the diff, the sends and the ack wait,
whether it sends deletes, when the mirror changes, who else writes the mirror.
This module finds those facts with :mod:`ast` only, without importing the
audited code; `proofs.engines.audit_session_shape` turns them into a shape.

An **update-like method** is a coroutine of a class, with a parameter, whose
code (followed into the class's own methods and properties, its nested
functions and the module's functions) calls a diff (a callable whose name holds
``diff``) whose first argument reads an attribute of ``self``: those attributes
are the **view** the push diffs against.

How a method's code is read (in source order, through the calls it makes) is
`proofs.engines.audit_session_walk`'s; `docs/porting.md` lists what it misses.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from attrs import field, frozen

from proofs.engines.audit_session_walk import (
    ClassIndex,
    ClassInfo,
    Event,
    EventKind,
    FuncNode,
    Walker,
    callee_name,
    module_info,
    own_nodes,
    params_of,
    self_attr,
    source_text,
)

__all__ = [
    "Event",
    "ModelWriter",
    "SessionFacts",
    "UpdateFacts",
    "find_sessions",
    "session_class_names",
]


@frozen
class UpdateFacts:
    """What one update-like method does, in the order the walk meets it."""

    method: str
    file: str
    line: int
    #: Every event of the method and of what it calls (read in place).
    events: tuple[Event, ...]
    #: Attributes the diff reads: the mirror (first) and what it merges in.
    view: tuple[str, ...]
    #: The request kept in an attribute when no session is active, and a read of it
    #: elsewhere in the class (the code that sends it on connect).
    kept_back: Event | None = None
    kept_back_read: Event | None = None

    def of(self, *kinds: EventKind) -> list[Event]:
        """The events of these kinds, in order."""
        return [e for e in self.events if e.kind in kinds]

    @property
    def diff(self) -> Event:
        """The first diff that reads the view."""
        return next(e for e in self.of("diff") if e.attrs & set(self.view))

    @property
    def after_diff(self) -> list[Event]:
        """The events after the diff, in order."""
        index = self.events.index(self.diff)
        return list(self.events[index + 1 :])

    @property
    def view_writes(self) -> list[Event]:
        """Writes of any attribute of the view in the push."""
        return [e for e in self.of("write", "insert") if e.attr in self.view]

    @property
    def mirror_writes(self) -> list[Event]:
        """Writes of the mirror itself (the view's first attribute; an ``on-events``
        mirror has none). What the diff merges in beside it (a three-way session's
        record of ops in flight) is the session's bookkeeping, not its mirror."""
        return [e for e in self.of("write", "insert") if e.attr == self.view[0]]

    @property
    def view_reads(self) -> list[Event]:
        return [e for e in self.of("read") if e.attr in self.view]

    @property
    def deletes(self) -> list[Event]:
        """Deletes built or sent, not counting deletes on the view itself."""
        return [e for e in self.of("delete") if not (e.attrs & set(self.view))]


@frozen
class ModelWriter:
    """A method outside the push that puts items into the view."""

    function: str
    event: Event
    #: It also resolves a waiter the push registered: an ack handler, so the items
    #: it inserts are the server's acknowledgements, not items the session makes.
    resolves_acks: bool


@frozen
class SessionFacts:
    """A session class: its update-like methods and the class-wide facts."""

    cls: str
    file: str
    line: int
    updates: tuple[UpdateFacts, ...]
    writers: tuple[ModelWriter, ...] = ()
    #: Sends outside the push whose payload reads the view: the server conversation
    #: rebuilt from the mirror (on connect or reconnect).
    rebuilds: tuple[tuple[str, Event], ...] = ()
    #: Base classes not among the audited files (their code is not seen).
    unseen_bases: tuple[str, ...] = field(default=())

    @property
    def primary(self) -> UpdateFacts:
        """The public push (``update_chat_ctx``-like), else the first update-like method."""
        public = [u for u in self.updates if not u.method.startswith("_")]
        return (public or list(self.updates))[0]


# --------------------------------------------------------------------------
# facts of a class


def _update_facts(
    index: ClassIndex, cls: ClassInfo, func: FuncNode, owner: ClassInfo
) -> tuple[UpdateFacts, set[int]] | None:
    if not isinstance(func, ast.AsyncFunctionDef) or not params_of(func):
        return None
    walker = Walker(index, cls)
    events = walker.walk(func, owner)
    diffs = [e for e in events if e.kind == "diff" and e.attrs]
    if not diffs:
        return None
    view = _ordered_view(diffs[0], events)
    kept, kept_read = _kept_back(index, cls, func, view)
    facts = UpdateFacts(
        method=func.name,
        file=owner.module.file,
        line=func.lineno,
        events=tuple(events),
        view=view,
        kept_back=kept,
        kept_back_read=kept_read,
    )
    return facts, walker.reached


def _ordered_view(diff: Event, events: list[Event]) -> tuple[str, ...]:
    """The view's attributes in the order the diff's argument reads them last (the
    mirror first): a read long before, for another purpose, does not count."""
    last: dict[str, int] = {}
    for position, event in enumerate(events[: events.index(diff)]):
        if event.kind == "read" and event.attr in diff.attrs:
            last[event.attr] = position
    order = sorted(last, key=last.__getitem__)
    return tuple(order + sorted(diff.attrs - set(order)))


def _kept_back(
    index: ClassIndex, cls: ClassInfo, func: FuncNode, view: tuple[str, ...]
) -> tuple[Event | None, Event | None]:
    """``if not <active>: self.P = <request>; return``: the request kept back, and a
    read of ``self.P`` in another method (the code that sends it later)."""
    params = params_of(func)
    frame_sources = index.frame(func, cls).sources

    def from_request(expr: ast.expr, seen: frozenset[str] = frozenset()) -> bool:
        for node in ast.walk(expr):
            if isinstance(node, ast.Name) and node.id not in seen:
                if node.id in params:
                    return True
                if any(from_request(s, seen | {node.id}) for s in frame_sources.get(node.id, [])):
                    return True
        return False

    for node in sorted(
        (n for n in own_nodes(func) if isinstance(n, ast.If)), key=lambda n: n.lineno
    ):
        if not isinstance(node, ast.If):
            continue
        if not any(isinstance(s, ast.Return) for s in node.body):
            continue
        for stmt in node.body:
            if not isinstance(stmt, ast.Assign) or not from_request(stmt.value):
                continue
            for target in stmt.targets:
                attr = self_attr(target)
                if attr is None or attr in view:
                    continue
                kept = Event("write", cls.module.file, stmt.lineno, source_text(stmt), attr=attr)
                return kept, _read_elsewhere(index, cls, func, attr)
    return None, None


def _read_elsewhere(index: ClassIndex, cls: ClassInfo, func: FuncNode, attr: str) -> Event | None:
    """A read of ``self.<attr>`` in another method, one that also sends if there is one."""
    reads: list[tuple[bool, Event]] = []
    for c in index.mro(cls):
        for method in index.methods(c).values():
            if method is func:
                continue
            nodes = list(own_nodes(method))
            sends = any(
                isinstance(n, ast.Call) and "send" in (callee_name(n) or "").lower() for n in nodes
            )
            for node in nodes:
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.ctx, ast.Load)
                    and self_attr(node) == attr
                ):
                    event = Event("read", c.module.file, node.lineno, source_text(node), attr=attr)
                    reads.append((not sends, event))
    return min(reads, key=lambda r: (r[0], r[1].line))[1] if reads else None


def _mentions_diff(index: ClassIndex, cls: ClassInfo) -> bool:
    """The class or a base names something ``*diff*``: else no method of it can diff."""
    for c in index.mro(cls):
        for node in ast.walk(c.node):
            name = (
                node.id
                if isinstance(node, ast.Name)
                else node.attr
                if isinstance(node, ast.Attribute)
                else ""
            )
            if index.is_diff(name):
                return True
    return False


def _class_facts(index: ClassIndex, cls: ClassInfo) -> SessionFacts | None:
    if not _mentions_diff(index, cls):
        return None
    updates: list[UpdateFacts] = []
    reach: set[int] = set()
    seen: set[str] = set()
    for c in index.mro(cls):
        for name, method in index.methods(c).items():
            if name in seen:
                continue
            seen.add(name)
            found = _update_facts(index, cls, method, c)
            if found is not None:
                updates.append(found[0])
                reach |= found[1]
    if not updates:
        return None
    updates.sort(key=lambda u: (u.file, u.line))
    primary = SessionFacts(cls.name, cls.module.file, cls.node.lineno, tuple(updates)).primary
    view = set(primary.view)
    waiters = {e.attr for u in updates for e in u.of("write", "insert") if e.attr is not None}
    writers: list[ModelWriter] = []
    rebuilds: list[tuple[str, Event]] = []
    update_names = {u.method for u in updates}
    done: set[str] = set()
    #: Inserts that some ack handler reaches through a helper (``_on_event`` -> ``_on_ack``).
    acked: set[tuple[str, int]] = set()
    for c in index.mro(cls):
        for name, method in index.methods(c).items():
            if name in done or name in update_names or name == "__init__" or id(method) in reach:
                continue
            done.add(name)
            walker = Walker(index, cls, max_depth=1)
            events = walker.walk(method, c)
            resolves = any(e.kind == "resolve" and e.attrs & waiters for e in events)
            own_file = c.module.file
            for event in events:
                if event.kind == "insert" and event.attr in view and event.file == own_file:
                    if not event.via:  # a writer is named once, by the method it is in
                        writers.append(ModelWriter(f"{c.name}.{name}", event, resolves))
                    elif resolves:
                        acked.add((event.file, event.line))
            deep = Walker(index, cls).walk(method, c)
            for event in deep:
                if event.kind == "send" and event.attrs & view:
                    rebuilds.append((f"{c.name}.{name}", event))
                    break
    writers = [
        ModelWriter(w.function, w.event, True)
        if (w.event.file, w.event.line) in acked and not w.resolves_acks
        else w
        for w in writers
    ]
    return SessionFacts(
        cls.name,
        cls.module.file,
        cls.node.lineno,
        tuple(updates),
        tuple(writers),
        tuple(rebuilds),
        tuple(index.unseen_bases(cls)),
    )


def find_sessions(
    sources: Iterable[tuple[str, ast.Module]],
    diff_names: Iterable[str] = (),
    lock_attrs: Iterable[str] = (),
) -> list[SessionFacts]:
    """Every session class (a class with an update-like method) of the parsed modules.

    ``sources`` pairs a file label with its parsed module; classes are looked up
    across all of them, so a base class in another audited file is read too.
    ``diff_names`` and ``lock_attrs`` name a session's diff and lock where their
    names say neither (``plan``, ``self.gate``).
    """
    index = ClassIndex(
        (module_info("", file, tree) for file, tree in sources), diff_names, lock_attrs
    )
    found: list[SessionFacts] = []
    for module in index.modules:
        tops = {id(n) for n in module.tree.body if isinstance(n, ast.ClassDef)}
        for classes in index.classes.values():
            for cls in classes:
                if cls.module is module and id(cls.node) in tops:
                    facts = _class_facts(index, cls)
                    if facts is not None:
                        found.append(facts)
    found.sort(key=lambda f: (f.file, f.line))
    return found


def session_class_names(tree: ast.Module, filename: str) -> frozenset[str]:
    """Names of the classes of one module that are sessions (for the agent side)."""
    return frozenset(f.cls for f in find_sessions([(filename, tree)]))
