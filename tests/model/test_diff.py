from model.diff import longest_common_subsequence, mirror_diff, three_way_diff
from model.state import Op, OpKind


def create(item: str, after: str | None, task: int = 0) -> Op:
    return Op(OpKind.CREATE, item, after, task)


def delete(item: str, task: int = 0) -> Op:
    return Op(OpKind.DELETE, item, None, task)


def test_lcs_keeps_common_order() -> None:
    assert longest_common_subsequence(("a", "b", "c"), ("a", "c", "d")) == ("a", "c")
    assert longest_common_subsequence((), ("a",)) == ()


def test_mirror_diff_deletes_what_the_request_lacks() -> None:
    # the seed's bug in one line: a request built before out1 was acked lacks it
    ops = mirror_diff(("msg0", "out1"), ("msg0", "hello"), task=1)
    assert ops == (delete("out1", 1), create("hello", "msg0", 1))


def test_mirror_diff_places_creates_after_their_predecessor() -> None:
    assert mirror_diff(("a",), ("x", "a", "y", "z"), 0) == (
        create("x", None),
        create("y", "a"),
        create("z", "y"),
    )


def test_mirror_diff_reorder_deletes_and_recreates() -> None:
    ops = mirror_diff(("a", "b"), ("b", "a"), 0)
    assert len([op for op in ops if op.kind is OpKind.DELETE]) == 1


def test_three_way_keeps_what_the_caller_never_saw() -> None:
    # out1 is in the expected view but not in the user turn's base: kept
    ops = three_way_diff(("msg0", "out1"), {"msg0"}, ("msg0", "hello"), 1)
    assert ops == (create("hello", "msg0", 1),)


def test_three_way_deletes_only_what_the_caller_saw_and_dropped() -> None:
    ops = three_way_diff(("msg0", "asst1", "out1"), {"msg0", "asst1"}, ("msg0",), 0)
    assert ops == (delete("asst1"),)


def test_three_way_does_not_recreate_what_another_push_deleted() -> None:
    # asst1 is in the caller's base and request, but gone from the expected view
    ops = three_way_diff(("msg0",), {"msg0", "asst1"}, ("msg0", "asst1", "out1"), 1)
    assert ops == (create("out1", "msg0", 1),)
