from model.state import Lock, Op, OpKind, expected_view, insert_after


def test_lock_hands_over_to_the_first_waiter() -> None:
    lock = Lock().take(0).take(1).take(2)
    assert lock == Lock(0, (1, 2))
    assert lock.release() == Lock(1, (2,))
    # a task asking after the handoff queues behind the woken waiter
    assert lock.release().take(3) == Lock(1, (2, 3))
    assert Lock(0).release().free()


def test_insert_after_head_known_and_unknown() -> None:
    assert insert_after(("a", "b"), "x", None) == ("x", "a", "b")
    assert insert_after(("a", "b"), "x", "a") == ("a", "x", "b")
    assert insert_after(("a", "b"), "x", "zz") == ("a", "b", "x")


def test_expected_view_applies_outstanding_ops_in_order() -> None:
    ops = (Op(OpKind.CREATE, "x", "a", 0), Op(OpKind.DELETE, "a", None, 1))
    assert expected_view(("a", "b"), ops) == ("x", "b")
