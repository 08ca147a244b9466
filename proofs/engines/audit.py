"""Static lock-discipline audit of realtime push sites.

The fix ackguard models holds one activity lock across *snapshot, push and
ack* at every place that pushes a requested context to the provider session.
A reviewer needs to know, for a given release of an agent framework, where
those places are and whether each keeps that discipline, without running
(or even importing) the code: the audited code has heavy dependencies and
side effects. So this module reads source with :mod:`ast` only.

What it reports, one :class:`Place` each:

* every push call ``<x>.<session_attr>.<push_method>(request)``, classified by
  where ``request`` comes from (a copy of the mirror, the live local context,
  a parameter of the enclosing function), whether an ``async with`` on the
  activity lock encloses both the snapshot and the push, and whether the
  function changes the local context before or after the push;
* every read of the mirror ``<x>.<session_attr>.<mirror_attr>`` that is not
  the snapshot of some push (such a read pushes nothing, so it cannot delete
  anything, but a reviewer wants to see it).

A class that is itself a provider session (one with an update-like method,
`proofs.engines.audit_session`) pushes as the provider, not as the agent: its
places are not judged by the agent's lock, and :func:`audit_session_paths`
reads its session shape instead (`proofs.engines.audit_session_shape`).

Known limits, by design: the analysis is per function and lexical (source
order stands for program order), except that a method of the same class whose
every ``return`` is a snapshot of the mirror counts as that snapshot where it
is called (``self._snapshot()``; one level, not a helper of a helper); only
``async with`` counts as holding the lock (``acquire()``/``release()`` pairs
are not recognised); names are resolved to their last assignment before the
use in the same function.
"""

from __future__ import annotations

import ast
import io
import json
import os
import re
import tokenize
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from attrs import Attribute, field, frozen
from attrs.validators import in_, instance_of, optional

from proofs.engines.audit_session import find_sessions, session_class_names
from proofs.engines.audit_session_shape import InferredShape, infer_shape
from proofs.errors import AuditInputError

__all__ = [
    "KINDS",
    "LOCAL_UPDATES",
    "UNKNOWN_NOTE",
    "AuditConfig",
    "AuditInputError",
    "Kind",
    "LocalUpdate",
    "Place",
    "audit_paths",
    "audit_session_paths",
    "audit_source",
    "emit_sites",
]

Kind = Literal["mirror-snapshot", "local-context", "caller-copy", "mirror-read", "unknown"]
LocalUpdate = Literal["before", "after", "replace", "none"]

KINDS: tuple[Kind, ...] = (
    "mirror-snapshot",
    "local-context",
    "caller-copy",
    "mirror-read",
    "unknown",
)
LOCAL_UPDATES: tuple[LocalUpdate, ...] = ("before", "after", "replace", "none")

#: The request kinds the model knows (``model.sites.RequestSource`` values).
SITE_REQUESTS: tuple[Kind, ...] = ("mirror-snapshot", "local-context", "caller-copy")

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def _ident(instance: object, attribute: Attribute[Any], value: str | None) -> None:
    """attrs validator: a Python identifier (or None where the field allows it)."""
    if value is not None and re.fullmatch(_IDENT, value) is None:
        raise AuditInputError(f"{attribute.name} must be a Python identifier, not {value!r}")


#: Methods that read a chat context (or its item list) without changing it.
#: Any other method called on the local context counts as a change: a false
#: "changes" is safer for a reviewer than a missed one.
_READ_ONLY_METHODS = frozenset(
    {
        "copy",
        "count",
        "find_insertion_index",
        "get_by_id",
        "index",
        "index_by_id",
        "is_equivalent",
        "readonly",
        "to_dict",
        "to_proto",
        "to_provider_format",
    }
)

#: Methods that add their arguments to a list or chat context; used to follow
#: which items a snapshot-based request carries.
_ADDING_METHODS = frozenset({"add_message", "append", "extend", "insert", "_upsert_item"})

_MAX_DEPTH = 32

_Pos = tuple[int, int]


@frozen
class AuditConfig:
    """The names the audit looks for; the defaults are livekit-agents'.

    Other frameworks name their session, mirror, push, lock and local context
    differently; renaming here must be enough to audit them.
    """

    #: Attribute holding the provider session: ``self._rt_session``.
    session_attr: str = field(default="_rt_session", validator=_ident)
    #: Session property that is the mirror: ``self._rt_session.chat_ctx``.
    mirror_attr: str = field(default="chat_ctx", validator=_ident)
    #: Session method that pushes: ``self._rt_session.update_chat_ctx(...)``.
    push_method: str = field(default="update_chat_ctx", validator=_ident)
    #: Activity attribute holding the lock: ``async with self._rt_chat_ctx_lock``.
    lock_attr: str = field(default="_rt_chat_ctx_lock", validator=_ident)
    #: Attribute holding the local context: ``self._agent._chat_ctx``.
    local_attr: str = field(default="_chat_ctx", validator=_ident)
    #: Owner of the local context attribute (``_agent``); None: any object.
    local_owner_attr: str | None = field(default="_agent", validator=_ident)


@frozen
class Place:
    """One push or mirror read, with the verdict of the discipline on it."""

    file: str = field(validator=instance_of(str))
    line: int = field(validator=instance_of(int))
    #: Enclosing function, dotted through classes and outer functions.
    function: str = field(validator=instance_of(str))
    kind: Kind = field(validator=in_(KINDS))
    #: Lock held across snapshot (if any) and push, or None.
    lock: str | None = field(validator=optional(instance_of(str)))
    local_update: LocalUpdate = field(validator=in_(LOCAL_UPDATES))
    ok: bool = field(validator=instance_of(bool))
    #: One short sentence when not ok.
    reason: str | None = field(default=None, validator=optional(instance_of(str)))

    @property
    def is_push(self) -> bool:
        """A push (as opposed to a bare mirror read)."""
        return self.kind != "mirror-read"

    @property
    def source(self) -> str:
        """``file:line``, as editors and the site records want it."""
        return f"{self.file}:{self.line}"

    def to_dict(self) -> dict[str, object]:
        """The JSON shape of ``ackguard audit --json``."""
        return {
            "file": self.file,
            "line": self.line,
            "function": self.function,
            "kind": self.kind,
            "lock": self.lock,
            "local_update": self.local_update,
            "ok": self.ok,
            "reason": self.reason,
        }


# --------------------------------------------------------------------------
# scopes


_ScopeNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef | ast.Module


@frozen
class _Binding:
    """``name`` is bound once the statement ending at ``end`` has run."""

    end: _Pos
    name: str
    value: ast.expr | None


def _pos(node: ast.AST) -> _Pos:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def _end(node: ast.AST) -> _Pos:
    line = getattr(node, "end_lineno", None)
    col = getattr(node, "end_col_offset", None)
    if line is None or col is None:
        return _pos(node)
    return (int(line), int(col))


def _own_nodes(scope: _ScopeNode) -> Iterator[ast.AST]:
    """Nodes that run in ``scope`` itself, not in a nested function or class.

    A nested ``def`` runs later (maybe never), so neither the lock around it
    nor its names belong to the enclosing function; its decorators and
    default values, though, are evaluated where it is defined.
    """
    if isinstance(scope, ast.Lambda):
        stack: list[ast.AST] = [scope.body]
    else:
        stack = list(reversed(scope.body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            outer: list[ast.AST] = [*node.args.defaults]
            outer += [d for d in node.args.kw_defaults if d is not None]
            if not isinstance(node, ast.Lambda):
                outer += node.decorator_list
            stack.extend(reversed(outer))
        elif isinstance(node, ast.ClassDef):
            stack.extend(reversed([*node.decorator_list, *node.bases]))
            stack.extend(reversed([k.value for k in node.keywords]))
        else:
            stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _iter_scopes(tree: ast.Module) -> Iterator[tuple[_ScopeNode, str]]:
    """Every scope with its dotted name (``Class.method.inner``)."""

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[_ScopeNode, str]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}.{child.name}" if prefix else child.name
                yield child, name
                yield from walk(child, name)
            elif isinstance(child, ast.Lambda):
                name = f"{prefix}.<lambda>" if prefix else "<lambda>"
                yield child, name
                yield from walk(child, name)
            else:
                yield from walk(child, prefix)

    yield tree, "<module>"
    yield from walk(tree, "")


def _target_names(target: ast.expr) -> Iterator[ast.Name]:
    if isinstance(target, ast.Name):
        yield target
    elif isinstance(target, ast.Tuple | ast.List):
        for elt in target.elts:
            yield from _target_names(elt)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)


def _bindings(nodes: list[ast.AST]) -> list[_Binding]:
    """Every name binding in a scope, each with the position it takes effect."""
    found: list[_Binding] = []
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                value = node.value if isinstance(target, ast.Name) else None
                found += [_Binding(_end(node), n.id, value) for n in _target_names(target)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if node.value is not None:
                found.append(_Binding(_end(node), node.target.id, node.value))
        elif isinstance(node, ast.NamedExpr):
            found.append(_Binding(_end(node), node.target.id, node.value))
        elif isinstance(node, ast.For | ast.AsyncFor):
            found += [_Binding(_end(node.iter), n.id, None) for n in _target_names(node.target)]
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            ends = _end(node.context_expr)
            found += [_Binding(ends, n.id, None) for n in _target_names(node.optional_vars)]
        elif isinstance(
            node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.ExceptHandler
        ):
            if node.name:  # a bare ``except:`` binds nothing
                found.append(_Binding(_pos(node), node.name, None))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                name = alias.asname or alias.name.split(".")[0]
                found.append(_Binding(_end(node), name, None))
    found.sort(key=lambda b: b.end)
    return found


def _params(scope: _ScopeNode) -> frozenset[str]:
    if not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        return frozenset()
    a = scope.args
    names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    return frozenset(names) - {"self", "cls"}


def _call_args(call: ast.Call) -> list[ast.expr]:
    return [*call.args, *(k.value for k in call.keywords)]


# --------------------------------------------------------------------------
# one function


@frozen
class _Origin:
    """Where a pushed value comes from, and the bindings it went through."""

    tag: Literal["mirror", "local", "local-copy", "param", "unknown"]
    node: ast.AST | None
    bindings: tuple[_Binding, ...]


_KIND_OF_ORIGIN: dict[str, Kind] = {
    "mirror": "mirror-snapshot",
    "local": "local-context",
    "param": "caller-copy",
}


@frozen
class _LocalChange:
    pos: _Pos
    replace: bool
    keys: frozenset[str]


class _ScopeAudit:
    """Everything the audit needs to know about one function body."""

    def __init__(
        self,
        scope: _ScopeNode,
        qualname: str,
        filename: str,
        config: AuditConfig,
        parents: dict[ast.AST, ast.AST],
        helpers: frozenset[str] = frozenset(),
    ) -> None:
        self.scope = scope
        #: Methods of the same class that return a snapshot of the mirror.
        self.helpers = helpers
        self.qualname = qualname
        self.filename = filename
        self.config = config
        self.parents = parents
        self.nodes = list(_own_nodes(scope))
        self.bindings = _bindings(self.nodes)
        self.params = _params(scope)
        self._changes: list[_LocalChange] | None = None

    # -- name resolution --------------------------------------------------

    def _binding_before(self, name: str, at: _Pos) -> _Binding | None:
        last: _Binding | None = None
        for binding in self.bindings:
            if binding.end > at:
                break
            if binding.name == name:
                last = binding
        return last

    def _resolve(self, name: ast.Name, depth: int) -> ast.expr | None:
        """The value last assigned to ``name`` before it is used, if simple."""
        if depth > _MAX_DEPTH:
            return None
        binding = self._binding_before(name.id, _pos(name))
        return None if binding is None else binding.value

    # -- recognisers --------------------------------------------------------

    def _refers_to(
        self, expr: ast.expr, attr: str, owner: str | None = None, depth: int = 0
    ) -> bool:
        """``expr`` is ``<x>.attr`` (``<x>.owner.attr`` given an owner) or a name bound to it."""
        if isinstance(expr, ast.Attribute) and expr.attr == attr:
            return owner is None or (
                isinstance(expr.value, ast.Attribute) and expr.value.attr == owner
            )
        if isinstance(expr, ast.Name):
            value = self._resolve(expr, depth)
            return value is not None and self._refers_to(value, attr, owner, depth + 1)
        return False

    def _is_session(self, expr: ast.expr) -> bool:
        return self._refers_to(expr, self.config.session_attr)

    def _is_mirror(self, expr: ast.expr) -> bool:
        return (
            isinstance(expr, ast.Attribute)
            and expr.attr == self.config.mirror_attr
            and self._is_session(expr.value)
        )

    def _is_local(self, expr: ast.expr) -> bool:
        """``expr`` is the live local context object (maybe through an alias)."""
        return self._refers_to(expr, self.config.local_attr, self.config.local_owner_attr)

    def _is_lock(self, expr: ast.expr) -> bool:
        return self._refers_to(expr, self.config.lock_attr)

    def _origin(self, expr: ast.expr, depth: int = 0, chain: tuple[_Binding, ...] = ()) -> _Origin:
        """Follow a pushed value back to the mirror, the local context or a parameter."""
        if depth > _MAX_DEPTH:
            return _Origin("unknown", None, chain)
        if self._is_mirror(expr):
            return _Origin("mirror", expr, chain)
        if self._is_local(expr):
            return _Origin("local", expr, chain)
        if isinstance(expr, ast.Await):
            return self._origin(expr.value, depth + 1, chain)
        if isinstance(expr, ast.Call) and self._is_mirror(expr.func):
            # a session whose mirror is a method: ``self._session.snapshot()``
            return _Origin("mirror", expr.func, chain)
        if (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Attribute)
            and isinstance(expr.func.value, ast.Name)
            and expr.func.value.id == "self"
            and expr.func.attr in self.helpers
        ):
            # a helper of the class that returns the snapshot: taken where it is called
            return _Origin("mirror", expr, chain)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            # a method called on a context (``.copy()``, ``.merge()``) keeps its origin,
            # except that a method of the live local context yields a copy of it
            base = self._origin(expr.func.value, depth + 1, chain)
            if base.tag == "local":
                return _Origin("local-copy", base.node, base.bindings)
            return base
        if isinstance(expr, ast.Name):
            binding = self._binding_before(expr.id, _pos(expr))
            if binding is not None:
                if binding.value is None:
                    return _Origin("unknown", None, chain)
                return self._origin(binding.value, depth + 1, (*chain, binding))
            if expr.id in self.params:
                return _Origin("param", expr, chain)
        return _Origin("unknown", None, chain)

    def _lock_blocks(self, node: ast.AST) -> list[ast.AsyncWith]:
        """``async with <lock>`` blocks of this scope that enclose ``node``."""
        blocks: list[ast.AsyncWith] = []
        current = self.parents.get(node)
        while current is not None and current is not self.scope:
            if isinstance(current, ast.AsyncWith) and any(
                self._is_lock(item.context_expr) for item in current.items
            ):
                blocks.append(current)
            current = self.parents.get(current)
        return blocks

    # -- local context changes ----------------------------------------------

    def _local_changes(self) -> list[_LocalChange]:
        """Every change this scope makes to the live local context (cached)."""
        if self._changes is None:
            self._changes = self._find_local_changes()
        return self._changes

    def _find_local_changes(self) -> list[_LocalChange]:
        changes: list[_LocalChange] = []
        for node in self.nodes:
            if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.Delete):
                targets = (
                    node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
                )
                assigns = isinstance(node, ast.Assign | ast.AnnAssign)
                for target in targets:
                    if assigns and self._is_local(target):
                        changes.append(_LocalChange(_pos(node), True, frozenset()))
                    elif self._inside_local(target):
                        changes.append(_LocalChange(_pos(node), False, frozenset()))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                method = node.func.attr
                if method in _READ_ONLY_METHODS or not self._inside_local(node.func.value, True):
                    continue
                keys = self._added_items(node)
                changes.append(_LocalChange(_pos(node), False, frozenset(keys)))
        return changes

    def _inside_local(self, expr: ast.expr, allow_self: bool = False) -> bool:
        """``expr`` is (part of) the live local context: ``L.items``, ``L.items[i]``."""
        if allow_self and self._is_local(expr):
            return True
        while isinstance(expr, ast.Attribute | ast.Subscript):
            expr = expr.value
            if self._is_local(expr):
                return True
        return False

    def _added_items(self, call: ast.Call) -> set[str]:
        """Source text of what an adding call puts into its receiver.

        ``add_message(role=..., content=...)`` builds its item, so the item is
        the name it is assigned to; other methods add their (non-constant)
        positional arguments.
        """
        keys: set[str] = set()
        assert isinstance(call.func, ast.Attribute)
        if call.func.attr != "add_message":
            keys |= {ast.unparse(a) for a in call.args if not isinstance(a, ast.Constant)}
        parent = self.parents.get(call)
        if isinstance(parent, ast.Assign):
            keys |= {n.id for t in parent.targets for n in _target_names(t)}
        elif isinstance(parent, ast.AnnAssign) and isinstance(parent.target, ast.Name):
            keys.add(parent.target.id)
        return keys

    def _request_items(self, origin: _Origin) -> set[str]:
        """Source text of the items a snapshot-based request adds to the snapshot.

        Followed through lists to a fixpoint: ``ctx.items.extend(outs)`` with
        ``outs.append(call.output)`` yields ``outs`` and ``call.output``. Names
        count only when they are the same binding, so two snapshots that reuse
        one variable name in a function do not mix their items.
        """
        containers: set[_Binding] = set(origin.bindings)
        items: set[str] = set()
        calls = [
            n
            for n in self.nodes
            if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in _ADDING_METHODS
        ]

        def add_container(name: ast.Name) -> None:
            binding = self._binding_before(name.id, _pos(name))
            if binding is not None:
                containers.add(binding)

        for _ in range(_MAX_DEPTH):
            size = len(items) + len(containers)
            for call in calls:
                assert isinstance(call.func, ast.Attribute)
                receiver = call.func.value
                if isinstance(receiver, ast.Attribute) and receiver.attr == "items":
                    receiver = receiver.value
                if not isinstance(receiver, ast.Name):
                    continue
                if self._binding_before(receiver.id, _pos(receiver)) not in containers:
                    continue
                items |= self._added_items(call)
                for arg in call.args:
                    if isinstance(arg, ast.Name):
                        add_container(arg)
            for binding in list(containers):
                value = binding.value
                parts: list[ast.expr] = []
                if isinstance(value, ast.List | ast.Tuple):
                    parts = list(value.elts)
                elif isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
                    parts = [value.left, value.right]
                for part in parts:
                    items.add(ast.unparse(part))
                    if isinstance(part, ast.Name):
                        add_container(part)
            if len(items) + len(containers) == size:
                break
        return items

    def _local_update(self, push: ast.Call, origin: _Origin) -> LocalUpdate:
        changes = self._local_changes()
        if any(c.replace for c in changes):
            return "replace"
        at = _pos(push)
        if origin.tag == "mirror":
            # prefer the change that records the very items this push sends
            items = self._request_items(origin)
            related = [c for c in changes if c.keys & items]
            if related:
                return "before" if any(c.pos < at for c in related) else "after"
        if any(c.pos < at for c in changes):
            return "before"
        if any(c.pos > at for c in changes):
            return "after"
        return "none"

    def returns_a_snapshot(self) -> bool:
        """Every ``return`` of this function returns a copy of the mirror (and one does)."""
        returned = [n.value for n in self.nodes if isinstance(n, ast.Return)]
        return bool(returned) and all(
            value is not None and self._origin(value).tag == "mirror" for value in returned
        )

    # -- places -------------------------------------------------------------

    def _pushes(self) -> list[ast.Call]:
        return [
            n
            for n in self.nodes
            if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr == self.config.push_method
            and self._is_session(n.func.value)
        ]

    def places(self) -> list[Place]:
        lock_text = f"async with self.{self.config.lock_attr}"
        found: list[Place] = []
        snapshots: set[int] = set()
        for push in self._pushes():
            args = _call_args(push)
            origin = self._origin(args[0]) if args else _Origin("unknown", None, ())
            kind = _KIND_OF_ORIGIN.get(origin.tag, "unknown")
            push_blocks = self._lock_blocks(push)
            reason: str | None = None
            if origin.tag == "mirror" and origin.node is not None:
                snapshots.add(id(origin.node))
                snap_blocks = {id(b) for b in self._lock_blocks(origin.node)}
                shared = [b for b in push_blocks if id(b) in snap_blocks]
                locked = bool(shared)
                if not push_blocks:
                    reason = f"the snapshot and the push are not inside `{lock_text}`"
                elif not locked:
                    line = _pos(origin.node)[0]
                    reason = f"the snapshot (line {line}) is taken outside the lock block"
            else:
                locked = bool(push_blocks)
                if not locked:
                    reason = f"the push is not inside `{lock_text}`"
            found.append(
                Place(
                    file=self.filename,
                    line=push.lineno,
                    function=self.qualname,
                    kind=kind,
                    lock=self.config.lock_attr if locked else None,
                    local_update=self._local_update(push, origin),
                    ok=locked,
                    reason=reason,
                )
            )
        for node in self.nodes:
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Load)
                and id(node) not in snapshots
                and self._is_mirror(node)
            ):
                found.append(
                    Place(
                        file=self.filename,
                        line=node.lineno,
                        function=self.qualname,
                        kind="mirror-read",
                        lock=self.config.lock_attr if self._lock_blocks(node) else None,
                        local_update="none",
                        ok=True,
                    )
                )
        return found


# --------------------------------------------------------------------------
# public API


def audit_source(text: str, filename: str, config: AuditConfig | None = None) -> list[Place]:
    """Audit one module's source text; ``filename`` only labels the places.

    Source nested past Python's recursion limit cannot be audited (the parser or
    the walk below runs out of stack): that is bad input, never a finding.
    """
    try:
        return _audit_source(text, filename, config)
    except RecursionError:
        raise AuditInputError(f"{filename}: {_TOO_DEEP}") from None


#: Why a source nested too deeply is refused, for both places that find it.
_TOO_DEEP = "nested too deeply to audit (past Python's recursion limit)"


def _audit_source(text: str, filename: str, config: AuditConfig | None) -> list[Place]:
    config = config if config is not None else AuditConfig()
    try:
        tree = ast.parse(text, filename=filename)
    except MemoryError:  # CPython's parser reports a too-deep expression this way
        raise AuditInputError(f"{filename}: {_TOO_DEEP}") from None
    except SyntaxError as exc:
        raise AuditInputError(f"{filename}:{exc.lineno or 0}: syntax error: {exc.msg}") from None
    except ValueError as exc:  # e.g. null bytes in the source
        raise AuditInputError(f"{filename}:1: cannot parse: {exc}") from None
    if config.session_attr not in text:
        # no place can exist without the session attribute (aliases need it too);
        # parsing above still reports syntax errors of every audited file
        return []
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    lines = text.splitlines()
    # the agent's lock discipline is the agent's: a provider session class pushes as the
    # provider, and its own push is audited by proofs.engines.audit_session instead
    sessions = session_class_names(tree, filename)
    helpers = _snapshot_helpers(tree, filename, config, parents)
    places: list[Place] = []
    for scope, qualname in _iter_scopes(tree):
        if not isinstance(scope, ast.Module):
            start, stop = scope.lineno - 1, scope.end_lineno or len(lines)
            if not any(config.session_attr in line for line in lines[start:stop]):
                continue
        if sessions and _in_class(scope, sessions, parents):
            continue
        mine = helpers.get(parents.get(scope), frozenset())
        places += _ScopeAudit(scope, qualname, filename, config, parents, mine).places()
    places.sort(key=lambda p: (p.line, p.function))
    return places


def _in_class(node: ast.AST, names: frozenset[str], parents: dict[ast.AST, ast.AST]) -> bool:
    """``node`` is inside a class of one of ``names`` (at any depth)."""
    current = parents.get(node)
    while current is not None:
        if isinstance(current, ast.ClassDef) and current.name in names:
            return True
        current = parents.get(current)
    return isinstance(node, ast.ClassDef) and node.name in names


def _snapshot_helpers(
    tree: ast.Module, filename: str, config: AuditConfig, parents: dict[ast.AST, ast.AST]
) -> dict[ast.AST | None, frozenset[str]]:
    """Per class, its methods that return a snapshot of the mirror (one level deep).

    A push of ``self._snapshot()`` then counts as a mirror snapshot taken at
    the call, so the lock around the call is what matters, as it is at run time.
    """
    found: dict[ast.AST | None, frozenset[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            names = {
                method.name
                for method in node.body
                if isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef)
                and _ScopeAudit(method, method.name, filename, config, parents).returns_a_snapshot()
            }
            if names:
                found[node] = frozenset(names)
    return found


def _decode(data: bytes, filename: str) -> str:
    """Bytes to text with the file's own encoding declaration (PEP 263)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        raise AuditInputError(f"{filename}:1: cannot decode: {exc}") from None


def _python_files(directory: Path) -> Iterator[Path]:
    """``*.py`` below ``directory``, skipping hidden and cache directories."""
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                yield Path(root) / name


def _audit_archive(path: Path, config: AuditConfig) -> list[Place]:
    places: list[Place] = []
    try:
        with zipfile.ZipFile(path) as archive:
            for member in sorted(archive.namelist()):
                if member.endswith(".py"):
                    label = f"{path}!{member}"
                    text = _decode(archive.read(member), label)
                    places += audit_source(text, label, config)
    except (zipfile.BadZipFile, OSError) as exc:
        raise AuditInputError(f"{path}: cannot read archive: {exc}") from None
    return places


def audit_paths(
    paths: Iterable[str | os.PathLike[str]], config: AuditConfig | None = None
) -> list[Place]:
    """Audit ``.py`` files, directories (recursively) and ``.whl``/``.zip`` archives.

    Archive members are read in memory, so a released wheel can be audited
    without installing it; their places are labelled ``archive!member``.
    """
    config = config if config is not None else AuditConfig()
    places: list[Place] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = list(_python_files(path))
        elif path.suffix in (".whl", ".zip") and path.is_file():
            places += _audit_archive(path, config)
            continue
        elif path.exists():  # a file, or one that reads like it (/dev/null, a pipe)
            files = [path]
        else:
            raise AuditInputError(f"{path}: no such file or directory")
        for file in files:
            try:
                data = file.read_bytes()
            except OSError as exc:
                raise AuditInputError(f"{file}: cannot read: {exc.strerror}") from None
            places += audit_source(_decode(data, str(file)), str(file), config)
    return places


def _sources(paths: Iterable[str | os.PathLike[str]]) -> Iterator[tuple[str, str]]:
    """``(label, text)`` of every ``.py`` file, directory member and archive member."""
    for raw in paths:
        path = Path(raw)
        if path.suffix in (".whl", ".zip") and path.is_file():
            try:
                with zipfile.ZipFile(path) as archive:
                    for member in sorted(archive.namelist()):
                        if member.endswith(".py"):
                            label = f"{path}!{member}"
                            yield label, _decode(archive.read(member), label)
            except (zipfile.BadZipFile, OSError) as exc:
                raise AuditInputError(f"{path}: cannot read archive: {exc}") from None
            continue
        if not path.exists():
            raise AuditInputError(f"{path}: no such file or directory")
        for file in list(_python_files(path)) if path.is_dir() else [path]:
            try:
                data = file.read_bytes()
            except OSError as exc:
                raise AuditInputError(f"{file}: cannot read: {exc.strerror}") from None
            yield str(file), _decode(data, str(file))


def audit_session_paths(
    paths: Iterable[str | os.PathLike[str]],
    diff_names: Iterable[str] = (),
    lock_attrs: Iterable[str] = (),
) -> list[InferredShape]:
    """The session shape of every provider session class in the paths.

    Classes are looked up across all the files given, so a session whose base
    class is in another file is read whole when both are given. Only files that
    mention a diff are parsed (a session class diffs, by definition); ``diff_names``
    and ``lock_attrs`` name a diff and a session lock whose names say neither.
    """
    diff_names = tuple(diff_names)
    parsed: list[tuple[str, ast.Module]] = []
    for label, text in _sources(paths):
        if "diff" not in text and not any(name in text for name in diff_names):
            continue
        try:
            parsed.append((label, ast.parse(text, filename=label)))
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue  # the agent-side audit of the same paths reports it, with its line
    try:
        return [infer_shape(facts) for facts in find_sessions(parsed, diff_names, lock_attrs)]
    except RecursionError:
        raise AuditInputError(f"{parsed[-1][0] if parsed else '?'}: {_TOO_DEEP}") from None


def _site_name(place: Place) -> str:
    return f"{place.function}:{place.line}"


def emit_sites(places: Iterable[Place]) -> str:
    """The push places as site records for the model, as a JSON list.

    Field names and values follow ``model.sites.Site`` (``name``, ``summary``,
    ``request``, ``local_update``, ``speech``, ``after_hidden_call``, ``source``),
    plus ``locked``, which the model keeps in its variants rather than in the site.
    Mirror reads push
    nothing and are left out. A push of ``unknown`` request kind has no model
    counterpart, so it is written with ``request: "unknown"`` and a ``note``
    saying why: the loader reports it as skipped, never drops it unseen and never
    checks it as a site.
    """
    records: list[dict[str, object]] = []
    for place in places:
        if not place.is_push:
            continue
        record: dict[str, object] = {
            "name": _site_name(place),
            "summary": f"{place.kind} push in {place.function}",
            "request": place.kind,
            "local_update": place.local_update,
            # the audit reads no speech scheduler: `none` lets every interleaving happen
            "speech": "none",
            # nor what precedes a pushed item in the real local context
            "after_hidden_call": False,
            "locked": place.lock is not None,
            "source": place.source,
        }
        if place.kind == "unknown":
            record["note"] = UNKNOWN_NOTE
        records.append(record)
    return json.dumps(records, indent=2)


#: The note of a place whose request the audit could not follow.
UNKNOWN_NOTE = (
    "the audit could not follow where this push's request comes from (a mirror snapshot, "
    "the live local context or a caller's copy); set `request` to the one it is, or leave "
    "the record to be skipped"
)
