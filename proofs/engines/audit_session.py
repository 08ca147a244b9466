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

The walk is lexical: a method's code is read in source order, with each call of
a method of the same class (or of a base class among the audited files), of a
nested function or of a module-level function read in place, up to
:data:`MAX_DEPTH` calls deep and never recursively. So "before" and "after"
mean source order along that path, and both arms of an ``if`` are on it. Calls
are classified by name: ``send`` in the name (or ``append_items``) is a send,
whatever the receiver (``self``, an attribute, a local variable), ``delete`` in
the name is a delete (unless it is called on the view itself), ``wait_for``
with a timeout is an ack wait, ``set_result``/``set_exception`` resolve a
waiter. `docs/porting.md` lists what this misses.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from typing import Literal

from attrs import field, frozen

__all__ = [
    "MAX_DEPTH",
    "Event",
    "ModelWriter",
    "SessionFacts",
    "UpdateFacts",
    "find_sessions",
    "session_class_names",
]

#: How many calls deep the walk follows methods and functions into their bodies.
MAX_DEPTH = 5

EventKind = Literal[
    "read",
    "write",
    "insert",
    "send",
    "delete",
    "diff",
    "await",
    "ack-wait",
    "resolve",
    "removals",
    "lock",
]

#: Methods that put an item into their receiver: model items arrive this way.
INSERTS = frozenset(
    {"insert", "insert_after", "add_message", "append", "appendleft", "extend", "_upsert_item"}
)
#: Other methods that change their receiver.
MUTATORS = INSERTS | frozenset(
    {"delete", "discard", "remove", "pop", "popitem", "clear", "update", "setdefault", "add"}
)
_DELETE_WORD = re.compile(r"(?<![a-z])delete(?![a-z])", re.IGNORECASE)
_LOGGING = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log"})

_FuncNode = ast.FunctionDef | ast.AsyncFunctionDef


@frozen
class Event:
    """One thing a walked method does, where, and which locks it holds then."""

    kind: EventKind
    file: str
    line: int
    #: Short source text of the node, for evidence.
    text: str
    #: The attribute of ``self`` it is about (read, write, insert, lock), if any.
    attr: str | None = None
    #: Attributes of ``self`` its argument reads (diff: its first argument; send and
    #: resolve: their arguments and receiver), through local names and properties.
    attrs: frozenset[str] = frozenset()
    #: Locks (attributes of ``self``) held by an enclosing ``async with``.
    locks: tuple[str, ...] = ()
    #: The calls (``file:line``) the walk followed to get here, outermost first.
    via: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        """``file:line``, as evidence names it."""
        return f"{self.file}:{self.line}"

    def evidence(self, what: str) -> str:
        """``file:line what``, through the call of the push that leads here."""
        if self.via and self.via[0] != self.where:
            return f"{self.via[0]} (at {self.where}) {what}: {self.text}"
        return f"{self.where} {what}: {self.text}"


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
        """Writes of the view in the push (an ``on-events`` mirror has none)."""
        return [e for e in self.of("write", "insert") if e.attr in self.view]

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
# the index of audited classes


@frozen
class _Module:
    file: str
    tree: ast.Module
    functions: dict[str, _FuncNode]


@frozen
class _Class:
    name: str
    module: _Module
    node: ast.ClassDef

    @property
    def bases(self) -> list[str]:
        names = []
        for base in self.node.bases:
            if isinstance(base, ast.Name):
                names.append(base.id)
            elif isinstance(base, ast.Attribute):
                names.append(base.attr)
        return names

    def methods(self) -> dict[str, _FuncNode]:
        return {
            n.name: n
            for n in self.node.body
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        }


def _is_property(node: _FuncNode) -> bool:
    return any(
        (isinstance(d, ast.Name) and d.id in ("property", "cached_property"))
        or (isinstance(d, ast.Attribute) and d.attr in ("property", "cached_property"))
        for d in node.decorator_list
    )


class _Index:
    """Classes of the audited modules, by name, and each class's method lookup."""

    def __init__(
        self,
        modules: Iterable[_Module],
        diff_names: Iterable[str] = (),
        lock_attrs: Iterable[str] = (),
    ) -> None:
        self.modules = list(modules)
        #: Callables that diff besides those named ``*diff*`` (``--diff-function``).
        self.diff_names = frozenset(diff_names)
        #: Attributes that are the session's lock besides ``*lock*`` (``--session-lock``).
        self.extra_locks = frozenset(lock_attrs)
        self.classes: dict[str, list[_Class]] = {}
        self._mro: dict[int, list[_Class]] = {}
        self._locks: dict[int, frozenset[str]] = {}
        self._methods: dict[int, dict[str, _FuncNode]] = {}
        self.frames: dict[int, _Frame] = {}
        for module in self.modules:
            for node in ast.walk(module.tree):
                if isinstance(node, ast.ClassDef):
                    self.classes.setdefault(node.name, []).append(_Class(node.name, module, node))

    def base(self, cls: _Class, name: str) -> _Class | None:
        """The class a base name means: one of the same module, or of the audited
        module that ``from <module> import <name>`` names (by file name)."""
        found = [c for c in self.classes.get(name, []) if c.node is not cls.node]
        same = [c for c in found if c.module is cls.module]
        if same:
            return same[0]
        for source in _imported_from(cls.module.tree, name):
            for c in found:
                if c.module.file.replace("\\", "/").endswith(source):
                    return c
        return None

    def frame(self, func: _FuncNode, owner: _Class) -> _Frame:
        frame = self.frames.get(id(func))
        if frame is None:
            frame = self.frames[id(func)] = _Frame.of(func, owner, owner.module)
        return frame

    def methods(self, cls: _Class) -> dict[str, _FuncNode]:
        if id(cls.node) not in self._methods:
            self._methods[id(cls.node)] = cls.methods()
        return self._methods[id(cls.node)]

    def mro(self, cls: _Class) -> list[_Class]:
        if id(cls.node) not in self._mro:
            self._mro[id(cls.node)] = self._find_mro(cls)
        return self._mro[id(cls.node)]

    def _find_mro(self, cls: _Class) -> list[_Class]:
        order: list[_Class] = []

        def visit(c: _Class) -> None:
            if any(c.node is o.node for o in order):
                return
            order.append(c)
            for name in c.bases:
                b = self.base(c, name)
                if b is not None:
                    visit(b)

        visit(cls)
        return order

    def unseen_bases(self, cls: _Class) -> list[str]:
        return [
            name
            for c in self.mro(cls)
            for name in c.bases
            if self.base(c, name) is None and name not in ("object", "Generic", "Protocol")
        ]

    def lookup(self, cls: _Class, name: str) -> tuple[_FuncNode, _Class] | None:
        for c in self.mro(cls):
            method = self.methods(c).get(name)
            if method is not None:
                return method, c
        return None

    def is_diff(self, name: str | None) -> bool:
        return name is not None and ("diff" in name.lower() or name in self.diff_names)

    def lock_attrs(self, cls: _Class) -> frozenset[str]:
        """Attributes of ``self`` that hold a lock: named ``*lock*`` or made by ``*Lock()``."""
        if id(cls.node) in self._locks:
            return self._locks[id(cls.node)]
        found: set[str] = set()
        for c in self.mro(cls):
            for node in ast.walk(c.node):
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                    callee = _callee_name(node.value)
                    if callee is not None and callee.endswith("Lock"):
                        found |= {a for t in node.targets if (a := _self_attr(t)) is not None}
        self._locks[id(cls.node)] = frozenset(found) | self.extra_locks
        return self._locks[id(cls.node)]


def _imported_from(tree: ast.Module, name: str) -> list[str]:
    """File-name endings of the modules ``name`` is imported from (``impl/session.py``)."""
    found: list[str] = []
    for node in tree.body:
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and any((a.asname or a.name) == name for a in node.names)
        ):
            found.append(node.module.replace(".", "/") + ".py")
            found.append("/" + node.module.rsplit(".", 1)[-1] + ".py")
    return found


def _self_attr(node: ast.AST) -> str | None:
    """``X`` for ``self.X``."""
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    ):
        return node.attr
    return None


def _callee_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    if isinstance(call.func, ast.Name):
        return call.func.id
    return None


def _text(node: ast.AST) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= 80 else text[:77] + "..."


def _params(func: _FuncNode) -> frozenset[str]:
    a = func.args
    names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    return frozenset(names) - {"self", "cls"}


def _own_nodes(func: _FuncNode) -> Iterator[ast.AST]:
    """Nodes of ``func`` itself, not of functions or classes nested in it."""
    stack: list[ast.AST] = list(func.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        stack.extend(ast.iter_child_nodes(node))


def _names_in(target: ast.AST) -> Iterator[str]:
    for node in ast.walk(target):
        if isinstance(node, ast.Name):
            yield node.id


@frozen
class _Frame:
    """One function being walked: its file, the nested functions it may call, its names."""

    file: str
    func: _FuncNode
    cls: _Class
    nested: dict[str, _FuncNode]
    module: _Module
    #: Every expression a local name is bound to or filled from (flow-insensitive).
    sources: dict[str, list[ast.expr]]

    @classmethod
    def of(cls, func: _FuncNode, owner: _Class, module: _Module) -> _Frame:
        nested: dict[str, _FuncNode] = {}
        sources: dict[str, list[ast.expr]] = {}

        def bind(target: ast.AST, value: ast.expr) -> None:
            for name in _names_in(target):
                sources.setdefault(name, []).append(value)

        for node in _own_nodes(func):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                nested[node.name] = node
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    bind(target, node.value)
            elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
                if node.value is not None:
                    bind(node.target, node.value)
            elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
                bind(node.target, node.iter)
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                bind(node.optional_vars, node.context_expr)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.attr in INSERTS | {"add", "update"}
            ):
                for arg in node.args:
                    bind(node.func.value, arg)
        return cls(module.file, func, owner, nested, module, sources)


# --------------------------------------------------------------------------
# the walk


class _Walker:
    """Reads one method in source order, reading the code it calls in place."""

    def __init__(self, index: _Index, cls: _Class, max_depth: int = MAX_DEPTH) -> None:
        self.index = index
        self.cls = cls
        self.max_depth = max_depth
        self.locks_of_class = index.lock_attrs(cls)
        self.events: list[Event] = []
        #: Every function read, by node id: the push's reach.
        self.reached: set[int] = set()
        self._stack: list[int] = []
        self._locks: tuple[str, ...] = ()
        self._via: tuple[str, ...] = ()
        self._in_log = False
        self._frames: list[_Frame] = []
        self._returns: dict[int, frozenset[str]] = {}

    # -- entry --------------------------------------------------------------

    def walk(self, func: _FuncNode, owner: _Class) -> list[Event]:
        self._enter(func, owner, owner.module)
        return self.events

    def _enter(self, func: _FuncNode, owner: _Class, module: _Module) -> bool:
        if id(func) in self._stack or len(self._stack) > self.max_depth:
            return False
        self._stack.append(id(func))
        self.reached.add(id(func))
        self._frames.append(self.index.frame(func, owner))
        try:
            self._stmts(func.body)
        finally:
            self._frames.pop()
            self._stack.pop()
        return True

    @property
    def _frame(self) -> _Frame:
        return self._frames[-1]

    def _emit(self, kind: EventKind, node: ast.AST, **extra: object) -> None:
        self.events.append(
            Event(
                kind,
                self._frame.file,
                getattr(node, "lineno", 0),
                _text(node),
                locks=self._locks,
                via=self._via,
                **extra,  # type: ignore[arg-type]
            )
        )

    # -- what ``self.X`` is -------------------------------------------------

    def _member(self, name: str) -> tuple[_FuncNode, _Class] | None:
        return self.index.lookup(self.cls, name)

    def _attrs(
        self, expr: ast.AST | None, depth: int = 0, seen: frozenset[str] = frozenset()
    ) -> frozenset[str]:
        """Attributes of ``self`` that ``expr`` reads, through local names and members."""
        if expr is None or depth > self.max_depth:
            return frozenset()
        found: set[str] = set()
        frame = self._frame
        for node in ast.walk(expr):
            attr = _self_attr(node)
            if attr is not None:
                member = self._member(attr)
                found |= {attr} if member is None else self._returned(*member, depth + 1)
            elif isinstance(node, ast.Name) and node.id not in seen and node.id != "self":
                for source in frame.sources.get(node.id, []):
                    found |= self._attrs(source, depth + 1, seen | {node.id})
        return frozenset(found)

    def _returned(self, func: _FuncNode, owner: _Class, depth: int) -> frozenset[str]:
        """Attributes of ``self`` that a method's return values read (cached)."""
        if id(func) in self._returns:
            return self._returns[id(func)]
        self._returns[id(func)] = frozenset()  # a recursive method reads what it reads
        self._frames.append(self.index.frame(func, owner))
        try:
            found: frozenset[str] = frozenset()
            for node in _own_nodes(func):
                if isinstance(node, ast.Return):
                    found |= self._attrs(node.value, depth)
        finally:
            self._frames.pop()
        self._returns[id(func)] = found
        return found

    # -- statements ---------------------------------------------------------

    def _stmts(self, body: Iterable[ast.stmt]) -> None:
        for stmt in body:
            self._stmt(stmt)

    def _stmt(self, node: ast.stmt) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return
        if isinstance(node, ast.Assign):
            self._expr(node.value)
            for target in node.targets:
                self._target(target)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            if node.value is not None:
                self._expr(node.value)
            self._target(node.target)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                self._target(target)
        elif isinstance(node, ast.For | ast.AsyncFor):
            self._expr(node.iter)
            if isinstance(node, ast.AsyncFor):
                self._emit("await", node.iter)
            self._stmts(node.body)
            self._stmts(node.orelse)
        elif isinstance(node, ast.With | ast.AsyncWith):
            self._with(node)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    self._stmt(child)
                elif isinstance(child, ast.expr):
                    self._expr(child)
                elif isinstance(child, ast.ExceptHandler | ast.match_case):
                    self._stmts(child.body)

    def _with(self, node: ast.With | ast.AsyncWith) -> None:
        saved = self._locks
        for item in node.items:
            self._expr(item.context_expr)
            attr = _self_attr(item.context_expr)
            if not isinstance(node, ast.AsyncWith):
                continue
            is_lock = attr is not None and ("lock" in attr.lower() or attr in self.locks_of_class)
            if is_lock:
                self._emit("lock", item.context_expr, attr=attr)
                assert attr is not None
                self._locks = (*self._locks, attr)
            else:
                callee = (
                    _callee_name(item.context_expr)
                    if isinstance(item.context_expr, ast.Call)
                    else None
                )
                if callee == "timeout":  # ``async with asyncio.timeout(t)``
                    self._emit("ack-wait", item.context_expr)
                self._emit("await", item.context_expr)
        try:
            self._stmts(node.body)
        finally:
            self._locks = saved

    def _target(self, target: ast.expr) -> None:
        attr = _self_attr(target)
        if attr is not None:
            self._emit("write", target, attr=attr)
        elif isinstance(target, ast.Subscript):
            inner = _self_attr(target.value)
            self._expr(target.slice)
            if inner is not None:
                self._emit("write", target, attr=inner)
            else:
                self._expr(target.value)
        elif isinstance(target, ast.Tuple | ast.List):
            for elt in target.elts:
                self._target(elt)
        elif isinstance(target, ast.Starred):
            self._target(target.value)
        elif isinstance(target, ast.Attribute):
            self._expr(target.value)

    # -- expressions --------------------------------------------------------

    def _expr(self, node: ast.expr) -> None:
        if isinstance(node, ast.Lambda):
            return
        if isinstance(node, ast.Await):
            inlined = isinstance(node.value, ast.Call) and self._call(node.value)
            if not isinstance(node.value, ast.Call):
                self._expr(node.value)
            if not inlined:
                self._emit("await", node)
            return
        if isinstance(node, ast.Call):
            self._call(node)
            return
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and _DELETE_WORD.search(node.value)
            and not self._in_log
        ):
            # a message type (``"conversation.item.delete"``) or an op tag (``("delete", k)``)
            self._emit("delete", node)
            return
        if isinstance(node, ast.Attribute):
            attr = _self_attr(node)
            if node.attr == "to_remove":
                self._emit("removals", node)
            if attr is None:
                self._expr(node.value)
                return
            member = self._member(attr)
            if member is None:
                self._emit("read", node, attr=attr)
            elif _is_property(member[0]):
                self._enter(member[0], member[1], member[1].module)
            return
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self._expr(child)
            elif isinstance(child, ast.comprehension):
                self._expr(child.iter)
                for test in child.ifs:
                    self._expr(test)
            elif isinstance(child, ast.keyword):
                self._expr(child.value)

    def _args(self, call: ast.Call) -> None:
        for arg in call.args:
            self._expr(arg)
        for keyword in call.keywords:
            self._expr(keyword.value)

    def _call(self, call: ast.Call) -> bool:
        """Walk a call; True when its body was read in place."""
        func = call.func
        name = _callee_name(call)
        target: tuple[_FuncNode, _Class, _Module] | None = None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id == "self" and (member := self._member(func.attr)) is not None:
                target = (member[0], member[1], member[1].module)
        elif isinstance(func, ast.Name):
            frame = self._frame
            local = frame.nested.get(func.id) or frame.module.functions.get(func.id)
            if local is not None:
                target = (local, frame.cls, frame.module)
        if target is not None:
            self._args(call)
            if self.index.is_diff(name):
                self._emit("diff", call, attrs=self._attrs(call.args[0] if call.args else None))
            saved = self._via
            self._via = (*saved, f"{self._frame.file}:{call.lineno}")
            try:
                return self._enter(*target)
            finally:
                self._via = saved
        if isinstance(func, ast.Attribute):
            self._expr(func.value)
        saved_log, self._in_log = self._in_log, self._in_log or name in _LOGGING
        try:
            self._args(call)
        finally:
            self._in_log = saved_log
        if name is None:
            return False
        self._classify(call, name)
        return False

    def _classify(self, call: ast.Call, name: str) -> None:
        low = name.lower()
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        recv_attr = _self_attr(receiver) if receiver is not None else None
        if recv_attr is not None and name in INSERTS:
            self._emit("insert", call, attr=recv_attr)
        elif recv_attr is not None and name in MUTATORS:
            self._emit("write", call, attr=recv_attr)
        if self.index.is_diff(name):
            self._emit("diff", call, attrs=self._attrs(call.args[0] if call.args else None))
        if name == "wait_for" and (
            len(call.args) >= 2 or any(k.arg == "timeout" for k in call.keywords)
        ):
            self._emit("ack-wait", call)
        if name in ("set_result", "set_exception"):
            self._emit("resolve", call, attrs=self._attrs(receiver))
        if name in _LOGGING:
            return
        if "delete" in low:
            self._emit("delete", call, attrs=frozenset({recv_attr} if recv_attr else ()))
        if "send" in low or low.endswith("append_items"):
            self._emit("send", call, attrs=self._attrs(call))


# --------------------------------------------------------------------------
# facts of a class


def _update_facts(
    index: _Index, cls: _Class, func: _FuncNode, owner: _Class
) -> tuple[UpdateFacts, set[int]] | None:
    if not isinstance(func, ast.AsyncFunctionDef) or not _params(func):
        return None
    walker = _Walker(index, cls)
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
    index: _Index, cls: _Class, func: _FuncNode, view: tuple[str, ...]
) -> tuple[Event | None, Event | None]:
    """``if not <active>: self.P = <request>; return``: the request kept back, and a
    read of ``self.P`` in another method (the code that sends it later)."""
    params = _params(func)
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
        (n for n in _own_nodes(func) if isinstance(n, ast.If)), key=lambda n: n.lineno
    ):
        if not isinstance(node, ast.If):
            continue
        if not any(isinstance(s, ast.Return) for s in node.body):
            continue
        for stmt in node.body:
            if not isinstance(stmt, ast.Assign) or not from_request(stmt.value):
                continue
            for target in stmt.targets:
                attr = _self_attr(target)
                if attr is None or attr in view:
                    continue
                kept = Event("write", cls.module.file, stmt.lineno, _text(stmt), attr=attr)
                return kept, _read_elsewhere(index, cls, func, attr)
    return None, None


def _read_elsewhere(index: _Index, cls: _Class, func: _FuncNode, attr: str) -> Event | None:
    """A read of ``self.<attr>`` in another method, one that also sends if there is one."""
    reads: list[tuple[bool, Event]] = []
    for c in index.mro(cls):
        for method in index.methods(c).values():
            if method is func:
                continue
            nodes = list(_own_nodes(method))
            sends = any(
                isinstance(n, ast.Call) and "send" in (_callee_name(n) or "").lower() for n in nodes
            )
            for node in nodes:
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.ctx, ast.Load)
                    and _self_attr(node) == attr
                ):
                    event = Event("read", c.module.file, node.lineno, _text(node), attr=attr)
                    reads.append((not sends, event))
    return min(reads, key=lambda r: (r[0], r[1].line))[1] if reads else None


def _mentions_diff(index: _Index, cls: _Class) -> bool:
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


def _class_facts(index: _Index, cls: _Class) -> SessionFacts | None:
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
            walker = _Walker(index, cls, max_depth=1)
            events = walker.walk(method, c)
            resolves = any(e.kind == "resolve" and e.attrs & waiters for e in events)
            own_file = c.module.file
            for event in events:
                if event.kind == "insert" and event.attr in view and event.file == own_file:
                    if not event.via:  # a writer is named once, by the method it is in
                        writers.append(ModelWriter(f"{c.name}.{name}", event, resolves))
                    elif resolves:
                        acked.add((event.file, event.line))
            deep = _Walker(index, cls).walk(method, c)
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


def _module(text: str, filename: str, tree: ast.Module | None = None) -> _Module:
    tree = tree if tree is not None else ast.parse(text, filename=filename)
    functions = {
        n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    return _Module(filename, tree, functions)


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
    index = _Index((_module("", file, tree) for file, tree in sources), diff_names, lock_attrs)
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
