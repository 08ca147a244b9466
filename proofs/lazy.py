"""Package faces whose names are imported on first use (PEP 562).

A face that re-exports an engine, the report or an adapter would otherwise
import z3, Hypothesis or livekit the moment anything under it is imported.
`face` gives such a package its `__getattr__` and `__dir__` from one table of
where each public name lives.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from importlib import import_module

__all__ = ["face"]


def face(
    package: str, where: Mapping[str, str], public: Sequence[str], namespace: Mapping[str, object]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`: each name of `where` is imported from
    its module when first asked for; `__dir__` lists what is loaded and `public`."""

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(module), name)

    def __dir__() -> list[str]:
        return sorted({*namespace, *public})

    __getattr__.__doc__ = "Import the module of a public name when the name is first asked for."
    __dir__.__doc__ = "The loaded names and the lazy ones, so completion sees the whole face."
    return __getattr__, __dir__
