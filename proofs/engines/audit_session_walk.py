"""The walk under the provider-side audit: a session class's code, read in source order.

`proofs.engines.audit_session` asks it what a method does; this module reads the
code. A method is read in source order, with each call of a method of the same
class (or of a base class among the audited files, found by its import), of a
nested function or of a module-level function read in place, up to
:data:`MAX_DEPTH` calls deep and never recursively: "before" and "after" mean
source order along that path, and both arms of an ``if`` are on it. What it
meets becomes an :class:`Event`. Calls are classified by name: ``send`` in the
name (or ``append_items``) is a send, whatever the receiver (``self``, an
attribute, a local variable); ``delete`` in the name, or a string naming a
delete (``"conversation.item.delete"``, an op tag ``"delete"``), is a delete;
``wait_for`` with a timeout (or ``async with asyncio.timeout``) is an ack wait;
``set_result``/``set_exception`` resolve a waiter; a callable named ``*diff*``
(or given by name) is a diff. Which attributes an expression reads is followed
through local names (every binding, flow-insensitively), list fillers and the
class's properties and methods' return values.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from typing import Literal

from attrs import frozen

__all__ = [
    "INSERTS",
    "LOGGING",
    "MAX_DEPTH",
    "MUTATORS",
    "ClassIndex",
    "ClassInfo",
    "Event",
    "EventKind",
    "Frame",
    "FuncNode",
    "ModuleInfo",
    "Walker",
    "callee_name",
    "module_info",
    "own_nodes",
    "params_of",
    "self_attr",
    "source_text",
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
LOGGING = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log"})

FuncNode = ast.FunctionDef | ast.AsyncFunctionDef


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


# --------------------------------------------------------------------------
# the index of audited classes


@frozen
class ModuleInfo:
    file: str
    tree: ast.Module
    functions: dict[str, FuncNode]


@frozen
class ClassInfo:
    name: str
    module: ModuleInfo
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

    def methods(self) -> dict[str, FuncNode]:
        return {
            n.name: n
            for n in self.node.body
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        }


def _is_property(node: FuncNode) -> bool:
    return any(
        (isinstance(d, ast.Name) and d.id in ("property", "cached_property"))
        or (isinstance(d, ast.Attribute) and d.attr in ("property", "cached_property"))
        for d in node.decorator_list
    )


class ClassIndex:
    """Classes of the audited modules, by name, and each class's method lookup."""

    def __init__(
        self,
        modules: Iterable[ModuleInfo],
        diff_names: Iterable[str] = (),
        lock_attrs: Iterable[str] = (),
    ) -> None:
        self.modules = list(modules)
        #: Callables that diff besides those named ``*diff*`` (``--diff-function``).
        self.diff_names = frozenset(diff_names)
        #: Attributes that are the session's lock besides ``*lock*`` (``--session-lock``).
        self.extra_locks = frozenset(lock_attrs)
        self.classes: dict[str, list[ClassInfo]] = {}
        self._mro: dict[int, list[ClassInfo]] = {}
        self._locks: dict[int, frozenset[str]] = {}
        self._methods: dict[int, dict[str, FuncNode]] = {}
        self.frames: dict[int, Frame] = {}
        for module in self.modules:
            for node in ast.walk(module.tree):
                if isinstance(node, ast.ClassDef):
                    self.classes.setdefault(node.name, []).append(
                        ClassInfo(node.name, module, node)
                    )

    def base(self, cls: ClassInfo, name: str) -> ClassInfo | None:
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

    def frame(self, func: FuncNode, owner: ClassInfo) -> Frame:
        frame = self.frames.get(id(func))
        if frame is None:
            frame = self.frames[id(func)] = Frame.of(func, owner, owner.module)
        return frame

    def methods(self, cls: ClassInfo) -> dict[str, FuncNode]:
        if id(cls.node) not in self._methods:
            self._methods[id(cls.node)] = cls.methods()
        return self._methods[id(cls.node)]

    def mro(self, cls: ClassInfo) -> list[ClassInfo]:
        if id(cls.node) not in self._mro:
            self._mro[id(cls.node)] = self._find_mro(cls)
        return self._mro[id(cls.node)]

    def _find_mro(self, cls: ClassInfo) -> list[ClassInfo]:
        order: list[ClassInfo] = []

        def visit(c: ClassInfo) -> None:
            if any(c.node is o.node for o in order):
                return
            order.append(c)
            for name in c.bases:
                b = self.base(c, name)
                if b is not None:
                    visit(b)

        visit(cls)
        return order

    def unseen_bases(self, cls: ClassInfo) -> list[str]:
        return [
            name
            for c in self.mro(cls)
            for name in c.bases
            if self.base(c, name) is None and name not in ("object", "Generic", "Protocol")
        ]

    def lookup(self, cls: ClassInfo, name: str) -> tuple[FuncNode, ClassInfo] | None:
        for c in self.mro(cls):
            method = self.methods(c).get(name)
            if method is not None:
                return method, c
        return None

    def is_diff(self, name: str | None) -> bool:
        return name is not None and ("diff" in name.lower() or name in self.diff_names)

    def lock_attrs(self, cls: ClassInfo) -> frozenset[str]:
        """Attributes of ``self`` that hold a lock: named ``*lock*`` or made by ``*Lock()``."""
        if id(cls.node) in self._locks:
            return self._locks[id(cls.node)]
        found: set[str] = set()
        for c in self.mro(cls):
            for node in ast.walk(c.node):
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                    callee = callee_name(node.value)
                    if callee is not None and callee.endswith("Lock"):
                        found |= {a for t in node.targets if (a := self_attr(t)) is not None}
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


def self_attr(node: ast.AST) -> str | None:
    """``X`` for ``self.X``."""
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    ):
        return node.attr
    return None


def callee_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    if isinstance(call.func, ast.Name):
        return call.func.id
    return None


def source_text(node: ast.AST) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= 80 else text[:77] + "..."


def params_of(func: FuncNode) -> frozenset[str]:
    a = func.args
    names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    return frozenset(names) - {"self", "cls"}


def own_nodes(func: FuncNode) -> Iterator[ast.AST]:
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
class Frame:
    """One function being walked: its file, the nested functions it may call, its names."""

    file: str
    func: FuncNode
    cls: ClassInfo
    nested: dict[str, FuncNode]
    module: ModuleInfo
    #: Every expression a local name is bound to or filled from (flow-insensitive).
    sources: dict[str, list[ast.expr]]

    @classmethod
    def of(cls, func: FuncNode, owner: ClassInfo, module: ModuleInfo) -> Frame:
        nested: dict[str, FuncNode] = {}
        sources: dict[str, list[ast.expr]] = {}

        def bind(target: ast.AST, value: ast.expr) -> None:
            for name in _names_in(target):
                sources.setdefault(name, []).append(value)

        for node in own_nodes(func):
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


class Walker:
    """Reads one method in source order, reading the code it calls in place."""

    def __init__(self, index: ClassIndex, cls: ClassInfo, max_depth: int = MAX_DEPTH) -> None:
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
        self._frames: list[Frame] = []
        self._returns: dict[int, frozenset[str]] = {}

    # -- entry --------------------------------------------------------------

    def walk(self, func: FuncNode, owner: ClassInfo) -> list[Event]:
        self._enter(func, owner, owner.module)
        return self.events

    def _enter(self, func: FuncNode, owner: ClassInfo, module: ModuleInfo) -> bool:
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
    def _frame(self) -> Frame:
        return self._frames[-1]

    def _emit(self, kind: EventKind, node: ast.AST, **extra: object) -> None:
        self.events.append(
            Event(
                kind,
                self._frame.file,
                getattr(node, "lineno", 0),
                source_text(node),
                locks=self._locks,
                via=self._via,
                **extra,  # type: ignore[arg-type]
            )
        )

    # -- what ``self.X`` is -------------------------------------------------

    def _member(self, name: str) -> tuple[FuncNode, ClassInfo] | None:
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
            attr = self_attr(node)
            if attr is not None:
                member = self._member(attr)
                found |= {attr} if member is None else self._returned(*member, depth + 1)
            elif isinstance(node, ast.Name) and node.id not in seen and node.id != "self":
                for source in frame.sources.get(node.id, []):
                    found |= self._attrs(source, depth + 1, seen | {node.id})
        return frozenset(found)

    def _returned(self, func: FuncNode, owner: ClassInfo, depth: int) -> frozenset[str]:
        """Attributes of ``self`` that a method's return values read (cached)."""
        if id(func) in self._returns:
            return self._returns[id(func)]
        self._returns[id(func)] = frozenset()  # a recursive method reads what it reads
        self._frames.append(self.index.frame(func, owner))
        try:
            found: frozenset[str] = frozenset()
            for node in own_nodes(func):
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
            attr = self_attr(item.context_expr)
            if not isinstance(node, ast.AsyncWith):
                continue
            is_lock = attr is not None and ("lock" in attr.lower() or attr in self.locks_of_class)
            if is_lock:
                self._emit("lock", item.context_expr, attr=attr)
                assert attr is not None
                self._locks = (*self._locks, attr)
            else:
                callee = (
                    callee_name(item.context_expr)
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
        attr = self_attr(target)
        if attr is not None:
            self._emit("write", target, attr=attr)
        elif isinstance(target, ast.Subscript):
            inner = self_attr(target.value)
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
            attr = self_attr(node)
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
        name = callee_name(call)
        target: tuple[FuncNode, ClassInfo, ModuleInfo] | None = None
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
        saved_log, self._in_log = self._in_log, self._in_log or name in LOGGING
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
        recv_attr = self_attr(receiver) if receiver is not None else None
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
        if name in LOGGING:
            return
        if "delete" in low:
            self._emit("delete", call, attrs=frozenset({recv_attr} if recv_attr else ()))
        if "send" in low or low.endswith("append_items"):
            self._emit("send", call, attrs=self._attrs(call))


def module_info(text: str, filename: str, tree: ast.Module | None = None) -> ModuleInfo:
    tree = tree if tree is not None else ast.parse(text, filename=filename)
    functions = {
        n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    return ModuleInfo(filename, tree, functions)
