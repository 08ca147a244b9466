"""Every package's face: `__all__` says what it offers, and says it truthfully.

In the style of trio's `test_exports`: for each package of `model`, `impl` and
`proofs`, every name in `__all__` imports and is documented, `__all__` is sorted
(ruff's isort-style order, as RUF022 keeps it) without duplicates, no name in it
is also a submodule's (importing the submodule would rebind it), and no public
name of the package's namespace is left out of it (submodules aside).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOP = ("model", "impl", "proofs")

#: Packages whose face another branch is writing: skipped while they have no
#: `__all__`, checked like every other package once they have one.
FACE_ELSEWHERE: dict[str, str] = {}

#: Names a face exports whose docstrings belong in modules other branches are
#: rewriting; tolerated only while undocumented names stay within this list.
DOCUMENTED_ELSEWHERE: dict[str, frozenset[str]] = {}


#: Names that are also a submodule's, on purpose: the face's from-import runs after
#: the submodule is loaded, so the name wins and stays.
REBOUND_ON_PURPOSE = {
    ("proofs.cli", "main"): "the console script's entry point is `proofs.cli:main`",
}


def _packages() -> Iterator[str]:
    for top in TOP:
        for init in sorted((ROOT / top).rglob("__init__.py")):
            yield ".".join(init.parent.relative_to(ROOT).parts)


PACKAGES = sorted(_packages())


def isort_key(name: str) -> tuple[int, tuple[tuple[int, int, str], ...]]:
    """RUF022's order: SCREAMING_CASE, then CamelCase, then the rest; natural within."""
    if len(name) > 1 and name.isupper():
        category = 0
    elif name[:1].isupper():
        category = 1
    else:
        category = 2
    chunks = tuple(
        (0, int(chunk), "") if chunk.isdigit() else (1, 0, chunk)
        for chunk in re.split(r"(\d+)", name)
        if chunk
    )
    return category, chunks


def _is_submodule(package: types.ModuleType, name: str, value: object) -> bool:
    return isinstance(value, types.ModuleType) and value.__name__ == f"{package.__name__}.{name}"


def _documented(value: object) -> bool:
    # a class's __doc__ is its own (never inherited); None when it has none
    return bool((getattr(value, "__doc__", None) or "").strip())


def problems(package: types.ModuleType, undocumented_ok: frozenset[str] = frozenset()) -> list[str]:
    """What is wrong with a package's face, one line each; empty when nothing is."""
    names = getattr(package, "__all__", None)
    if names is None:
        return ["has no __all__"]
    found = []
    duplicates = sorted({name for name in names if list(names).count(name) > 1})
    if duplicates:
        found.append(f"__all__ lists {duplicates} more than once")
    if list(names) != sorted(names, key=isort_key):
        found.append(f"__all__ is not sorted; expected {sorted(names, key=isort_key)}")
    for name in names:
        try:
            value = getattr(package, name)
        except AttributeError:
            found.append(f"{name} is in __all__ but cannot be imported")
            continue
        if (package.__name__, name) in REBOUND_ON_PURPOSE:
            pass
        elif importlib.util.find_spec(f"{package.__name__}.{name}") is not None:
            found.append(f"{name} is also a submodule's name: importing it rebinds {name}")
        elif isinstance(value, types.ModuleType):
            found.append(f"{name} is a module, not a name of the package's own")
        routine = inspect.isclass(value) or inspect.isroutine(value)
        if routine and not _documented(value) and name not in undocumented_ok:
            found.append(f"{name} has no docstring")
    public = {
        name
        for name, value in vars(package).items()
        if not name.startswith("_") and not _is_submodule(package, name, value)
    }
    for name in sorted(public - set(names)):
        found.append(f"{name} is public but not in __all__")
    return found


@pytest.mark.parametrize("name", PACKAGES)
def test_each_face_exports_what_it_has_and_has_what_it_exports(name: str) -> None:
    package = importlib.import_module(name)
    if not hasattr(package, "__all__") and name in FACE_ELSEWHERE:
        pytest.skip(f"{name} has no face yet: {FACE_ELSEWHERE[name]}")
    assert problems(package, DOCUMENTED_ELSEWHERE.get(name, frozenset())) == []


def test_the_packages_are_all_found() -> None:
    assert {"model", "impl", "proofs", "proofs.engines", "proofs.report"} <= set(PACKAGES)
    assert set(FACE_ELSEWHERE) <= set(PACKAGES) and set(DOCUMENTED_ELSEWHERE) <= set(PACKAGES)


def test_the_sort_order_is_ruffs() -> None:
    names = ["tombstones", "Actor", "MOVES", "OPTIONS_BY_NAME", "OPTION_NAMES", "OPTIONS", "a10"]
    names += ["a9", "Call"]
    assert sorted(names, key=isort_key) == [
        "MOVES",
        "OPTIONS",
        "OPTIONS_BY_NAME",
        "OPTION_NAMES",
        "Actor",
        "Call",
        "a9",
        "a10",
        "tombstones",
    ]


# -- the check catches what it claims to ----------------------------------------


def test_a_stray_public_name_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    import model

    monkeypatch.setattr(model, "stray", 1, raising=False)
    assert problems(model) == ["stray is public but not in __all__"]


def test_a_stray_name_in_a_lazy_face_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    import proofs.engines

    monkeypatch.setattr(proofs.engines, "TYPE_CHECKING", False, raising=False)
    assert problems(proofs.engines) == ["TYPE_CHECKING is public but not in __all__"]


def test_an_unsorted_or_repeated_all_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    import proofs.adapters

    monkeypatch.setattr(proofs.adapters, "__all__", ["adapter_factory", "ADAPTERS", "ADAPTERS"])
    found = problems(proofs.adapters)
    assert any("more than once" in line for line in found)
    assert any("not sorted" in line for line in found)
    assert "AdapterEntry is public but not in __all__" in found


def test_a_name_that_does_not_import_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    import proofs.report

    monkeypatch.setattr(proofs.report, "__all__", [*proofs.report.__all__, "zzz"])
    assert problems(proofs.report) == ["zzz is in __all__ but cannot be imported"]


def test_an_undocumented_export_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    import proofs.adapters

    def zzz() -> None:
        pass

    monkeypatch.setattr(proofs.adapters, "zzz", zzz, raising=False)
    monkeypatch.setattr(proofs.adapters, "__all__", [*proofs.adapters.__all__, "zzz"])
    assert problems(proofs.adapters) == ["zzz has no docstring"]


def test_a_name_that_a_submodule_rebinds_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """impl's face used to export the function `policy` beside the module `impl.policy`."""
    import impl
    import impl.policy

    monkeypatch.setattr(impl, "policy", impl.policy.policy)
    monkeypatch.setattr(impl, "__all__", [*impl.__all__, "policy"])
    assert problems(impl) == ["policy is also a submodule's name: importing it rebinds policy"]


def test_the_lazy_faces_import_nothing_heavy() -> None:
    """What their docstrings promise: no z3, Hypothesis or livekit until a name is used."""
    code = (
        "import sys\n"
        "import proofs, proofs.engines, proofs.report\n"
        "print(sorted(m for m in ('z3', 'hypothesis', 'livekit') if m in sys.modules))\n"
        "import proofs.adapters.livekit\n"
        "print('livekit' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert result.stdout.split() == ["[]", "False"]
