"""The agent half of the example's own code: its history and the five places that sync it.

Every place holds `sync_gate` across *snapshot, sync and acks* (the `lock5`
discipline of ackguard's catalog): a snapshot taken while another sync still
waits for its acks would lack that sync's items, and the diff would delete them.
Each place is written out in full, with no helper around the gate or the sync,
so that `ackguard audit` (which reads one function at a time) sees it.

When each place changes the history, relative to its sync, is what the model
calls the site's local update; the site records follow from it:

| method | model site | request | history changes |
| --- | --- | --- | --- |
| `on_user_text` | user-turn | mirror snapshot + message | after the sync |
| `on_tool_results` | (interrupted-)tool-outputs | mirror snapshot + results | before |
| `replace_history` | replacement | the caller's copy | replaced at once |
| `drop_unplayed` | cleanup | the live history object | before |
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

from examples.callback_session.session import AckTimeout, CallbackSession, Conversation, Gate, Item

log = logging.getLogger("acme.agent")


@contextmanager
def tolerated(what: str) -> Iterator[None]:
    """A sync that timed out is logged and the place goes on, as the session allows."""
    try:
        yield
    except AckTimeout as error:
        log.warning("%s sync failed: %s", what, error)


class VoiceAgent:
    def __init__(self, session: CallbackSession, history: Conversation | None = None) -> None:
        self._session = session
        #: The live history; `replace_history` swaps the object itself.
        self.history = history if history is not None else Conversation()
        self.sync_gate = Gate()

    async def on_user_text(self, message: Item) -> None:
        """A typed user turn: sync the mirror plus the message, then record it."""
        async with self.sync_gate:
            request = self._session.conversation
            request.upsert(message)
            with tolerated("user text"):
                await self._session.sync(request)
        self.history.upsert(message)

    async def on_tool_results(self, results: Sequence[Item]) -> None:
        """Tool results (of a finished or an interrupted generation): record, then sync."""
        for result in results:
            self.history.upsert(result)
        async with self.sync_gate:
            request = self._session.conversation
            for result in results:
                request.upsert(result)
            with tolerated("tool results"):
                await self._session.sync(request)

    async def replace_history(self, history: Conversation) -> None:
        """The application's edited copy becomes the history at once, and is synced."""
        self.history = history
        async with self.sync_gate:
            with tolerated("replacement"):
                await self._session.sync(history)

    async def drop_unplayed(self, keys: Iterable[str]) -> None:
        """After an interruption: remove what the user never heard by syncing the history
        object that is live now (a replacement meanwhile does not change what is synced)."""
        history = self.history
        for key in keys:
            history.discard(key)
        async with self.sync_gate:
            with tolerated("cleanup"):
                await self._session.sync(history)

    def learn(self, item: Item) -> None:
        """The history learns an item the model created server-side."""
        self.history.upsert(item)
