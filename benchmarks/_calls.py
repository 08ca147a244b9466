"""The call kinds the benchmarks combine into scenarios beyond the catalog.

Shared by `stress_model.py` (every multiset of a given size) and
`bench_conform.py` (every pair); both run as scripts, with this folder on
`sys.path`.
"""

from __future__ import annotations

from model import Call, Scenario

#: The kinds of call a combination draws from; `{}` is the call's position.
CALLS: dict[str, Call] = {
    "tool": Call("tool-outputs", adds=("out{}",)),
    "itool": Call("interrupted-tool-outputs", adds=("iout{}",)),
    "user": Call("user-turn", adds=("hello{}",)),
    "spoken": Call("spoken-message", adds=("spk{}",)),
    "repl": Call("replacement", adds=("note{}",)),
    "repl-drop": Call("replacement", drops=("msg0",)),
    "cleanup": Call("cleanup", drops=("asst1",)),
}


def combination(names: tuple[str, ...], summary: str, server_pool: tuple[str, ...]) -> Scenario:
    """A scenario making the calls `names` (keys of `CALLS`) in that order, each
    call's items numbered by its position, on a server holding `msg0` and the
    never-played `asst1`."""
    calls = tuple(
        Call(CALLS[name].site, tuple(a.format(k) for a in CALLS[name].adds), CALLS[name].drops)
        for k, name in enumerate(names)
    )
    return Scenario(
        name="+".join(names),
        summary=summary,
        calls=calls,
        server=("msg0", "asst1"),
        local=("msg0",),
        server_pool=server_pool,
    )
