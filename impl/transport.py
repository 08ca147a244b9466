"""The wire between a provider session and the server, as the session sees it.

One websocket: ops go out in the order they are sent, events come back in the
order the server emits them. Sending never waits (as in the real sessions, which
queue outgoing events for a writer task), so a session can diff and send every
op of a push with no await in between. The controlled fake (`impl.fake_server`)
and a real socket both implement `Transport`.
"""

from __future__ import annotations

from typing import Protocol

from attrs import frozen

from impl.chat_context import ChatItem

# -- client -> server ----------------------------------------------------------------


@frozen
class CreateOp:
    """`conversation.item.create`: put `item` after `previous_id` (None: the head)."""

    event_id: str
    item: ChatItem
    previous_id: str | None

    @property
    def item_id(self) -> str:
        return self.item.id


@frozen
class DeleteOp:
    """`conversation.item.delete`."""

    event_id: str
    item_id: str


ClientOp = CreateOp | DeleteOp

# -- server -> client ----------------------------------------------------------------


@frozen
class ItemAdded:
    """`conversation.item.added`: the server holds `item` after `previous_id`."""

    item: ChatItem
    previous_id: str | None


@frozen
class ItemDeleted:
    """`conversation.item.deleted`."""

    item_id: str


@frozen
class ErrorEvent:
    """`error`, answering the client event `event_id` (a rejected op)."""

    event_id: str
    message: str


ServerEvent = ItemAdded | ItemDeleted | ErrorEvent

#: What an ack answers: the sessions resolve acks by op kind and item id.
AckKey = tuple[str, str]
CREATE = "create"
DELETE = "delete"


def ack_key(op: ClientOp) -> AckKey:
    if isinstance(op, CreateOp):
        return (CREATE, op.item.id)
    return (DELETE, op.item_id)


class Transport(Protocol):
    """One ordered, bidirectional connection to the provider's server."""

    def send(self, op: ClientOp) -> None:
        """Queue `op` behind every op sent before it; never waits."""
        ...

    async def recv(self) -> ServerEvent:
        """The next event from the server, in the order the server emitted them."""
        ...
