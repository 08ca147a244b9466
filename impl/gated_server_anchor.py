"""The gated server's counterpart of the model's `model-anchors-on-deleted` move.

The OpenAI server of livekit/agents #6964 placed the model's new item at the
tail of its conversation, and announced it as following an item it had just
deleted (the tail when the reply began). `add_after_deleted` does that on one
`impl.gated_server.GatedConnection`: the item goes at the conversation's tail,
and the `conversation.item.added` event queued for the client names `anchor`
as its `previous_item_id`. Like every server event, it waits in the
connection's `to_client` until the harness delivers it.
"""

from __future__ import annotations

from typing import Any

from impl.gated_server import GatedConnection
from impl.ws_server import ADDED

JSON = dict[str, Any]


def add_after_deleted(connection: GatedConnection, item: JSON, anchor: str) -> None:
    """The model adds `item` at the tail, announced after `anchor`, an item the
    server deleted and does not hold; ValueError for any other anchor."""
    conversation = connection.conversation
    if anchor not in conversation.removed or anchor in conversation.ids():
        raise ValueError(f"{anchor!r} is not an item the server has deleted")
    item_id = str(item["id"])
    if item_id in conversation.ids():
        raise ValueError(f"the server holds {item_id!r} already")
    conversation.items.append(item)
    conversation.reached.add(item_id)
    connection.created_by[item_id] = None
    connection.emit({"type": ADDED, "previous_item_id": anchor, "item": item})


__all__ = ["add_after_deleted"]
