from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from impl.chat_context import (
    ChatContext,
    ChatMessage,
    CreateItem,
    DeleteItem,
    common_ids,
    diff,
    stamped,
)
from model.diff import longest_common_subsequence, mirror_diff
from model.state import OpKind


def m(item_id: str, text: str | None = None) -> ChatMessage:
    return ChatMessage(item_id, "user", text if text is not None else item_id)


def ctx(*ids: str) -> ChatContext:
    return ChatContext(m(i) for i in ids)


def test_copy_remembers_its_origin_and_drops() -> None:
    live = ctx("a", "b")
    copy = live.copy()
    assert copy.copied_from == ("a", "b") and live.copied_from is None
    copy.remove("b")
    copy.remove("zz")  # a drop of something absent still counts as meant
    copy.upsert(m("c"))
    assert copy.ids() == ("a", "c") and live.ids() == ("a", "b")
    assert copy.base == frozenset({"a", "b", "zz"})


def test_insert_after_as_a_server_places_items() -> None:
    c = ctx("a", "b")
    c.insert_after(m("h"), None)
    c.insert_after(m("x"), "a")
    c.insert_after(m("t"), "unknown")
    assert c.ids() == ("h", "a", "x", "b", "t")


def test_upsert_replaces_in_place() -> None:
    c = ctx("a", "b")
    c.upsert(m("a", "edited"))
    assert c.ids() == ("a", "b") and c.get("a") == m("a", "edited")


def test_diff_deletes_then_creates_after_predecessor() -> None:
    ops = diff(ctx("a", "b", "c"), ctx("a", "c", "d"))
    assert ops == [DeleteItem("b"), CreateItem(m("d"), "c")]


def test_changed_text_is_a_delete_and_a_create() -> None:
    old = ctx("a", "b")
    new = ChatContext([m("a"), m("b", "edited")])
    assert diff(old, new) == [DeleteItem("b"), CreateItem(m("b", "edited"), "a")]


ids = st.lists(st.sampled_from("abcdefg"), unique=True, max_size=7)


@given(ids, ids)
def test_common_ids_break_ties_like_the_model(old: list[str], new: list[str]) -> None:
    assert common_ids(old, new) == longest_common_subsequence(old, new)


@given(ids, ids)
def test_diff_sends_the_models_ops(old: list[str], new: list[str]) -> None:
    ours = [
        (OpKind.DELETE, op.item_id, None)
        if isinstance(op, DeleteItem)
        else (OpKind.CREATE, op.item.id, op.previous_id)
        for op in diff(ctx(*old), ctx(*new))
    ]
    theirs = [(op.kind, op.item, op.after) for op in mirror_diff(old, new, 0)]
    assert ours == theirs


def at(item_id: str, created_at: int) -> ChatMessage:
    return stamped(m(item_id), created_at)


def test_upsert_inserts_after_the_last_item_created_no_later() -> None:
    c = ChatContext([m("old"), at("b", 5), at("c", 9)])
    c.upsert(at("x", 7))
    c.upsert(at("tie", 5))  # created with b: after it, as livekit's <= does
    c.upsert(at("first", 1))  # older than every stamp, not than an unstamped item
    assert c.ids() == ("old", "first", "b", "tie", "x", "c")
    c.upsert(m("now"))  # unstamped: made now, at the tail
    assert c.ids()[-1] == "now"


def test_append_ignores_the_creation_time_and_copy_keeps_the_order() -> None:
    c = ChatContext([at("b", 5)])
    c.append(at("a", 1))
    copy = c.copy()
    assert copy.ids() == ("b", "a") and [i.created_at for i in copy] == [5, 1]


def test_the_creation_time_is_not_content() -> None:
    """A restamped copy of an item is the same item: no update is sent for it."""
    assert at("a", 3) == m("a") and diff(ctx("a"), ChatContext([at("a", 3)])) == []
    assert stamped(m("a")).created_at != stamped(m("a")).created_at
