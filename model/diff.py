"""The two diffs a provider session can use, as pure functions of id sequences.

Both return ops in the order they are sent: deletes first, then creates, each
create naming the item it goes after (None: at the head of the conversation).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from model.state import Op, OpKind


def longest_common_subsequence(old: Sequence[str], new: Sequence[str]) -> tuple[str, ...]:
    """A longest common subsequence; ties keep the earliest items of `old`."""
    rows = len(old) + 1
    cols = len(new) + 1
    table = [[0] * cols for _ in range(rows)]
    for i in range(len(old) - 1, -1, -1):
        for j in range(len(new) - 1, -1, -1):
            if old[i] == new[j]:
                table[i][j] = table[i + 1][j + 1] + 1
            else:
                table[i][j] = max(table[i + 1][j], table[i][j + 1])
    common: list[str] = []
    i = j = 0
    while i < len(old) and j < len(new):
        if old[i] == new[j]:
            common.append(old[i])
            i += 1
            j += 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return tuple(common)


def mirror_diff(mirror: Sequence[str], request: Sequence[str], task: int) -> tuple[Op, ...]:
    """Order-aware diff of a request against the mirror (the real sessions' diff).

    Items of the mirror outside the longest common subsequence are deleted;
    items of the request outside it are created after their predecessor in the
    request.
    """
    common = set(longest_common_subsequence(mirror, request))
    ops = [Op(OpKind.DELETE, item, None, task) for item in mirror if item not in common]
    for index, item in enumerate(request):
        if item not in common:
            after = request[index - 1] if index else None
            ops.append(Op(OpKind.CREATE, item, after, task))
    return tuple(ops)


def three_way_diff(
    expected: Sequence[str],
    base: Collection[str],
    request: Sequence[str],
    task: int,
) -> tuple[Op, ...]:
    """Merge-style diff: delete only what the caller saw and dropped.

    Deletes `(base & expected) - request`; creates what the request adds to its
    base and the expected view lacks, after the nearest earlier request item
    that will exist by then; keeps what the caller never saw.
    """
    wanted = set(request)
    ops = [
        Op(OpKind.DELETE, item, None, task)
        for item in expected
        if item in base and item not in wanted
    ]
    present = {item for item in expected if item in wanted or item not in base}
    after: str | None = None
    for item in request:
        if item in present:
            after = item
        elif item not in base:
            ops.append(Op(OpKind.CREATE, item, after, task))
            present.add(item)
            after = item
    return tuple(ops)
