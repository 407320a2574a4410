"""The chat's own limits: the chats one process runs at once, and the event stream that gives
its slot back and notices the client going away.

- :class:`Slots`: the chats (and agent-mode chats) one process runs at once; beyond
  ``server.max_concurrent_chats`` / ``max_concurrent_agent`` a chat is refused with 503 and
  ``Retry-After`` at once, without waiting for a slot.
- :class:`ChatStream`: the chat's event stream, which notices the client going away even while
  the answer is busy between events (so agent mode stops before its next model call) and gives
  its slot back however it ends.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterable, Callable, Mapping

import anyio
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

__all__ = ["ChatStream", "Slots"]


class Slots:
    """At most ``chats`` chats at once, of which at most ``agent`` in agent mode; taking a slot
    never waits (the caller answers 503 when it gets none)."""

    #: The ``Retry-After`` of a chat refused for want of a slot (seconds).
    RETRY_AFTER_S = 2

    def __init__(self, chats: int, agent: int) -> None:
        self.chats = chats
        self.agent = agent
        self._lock = threading.Lock()
        self._running = 0
        self._agents = 0

    def take(self, agent: bool) -> Callable[[], None] | None:
        """A slot's release function, or None when every slot (of the kind) is taken."""
        with self._lock:
            if self._running >= self.chats or (agent and self._agents >= self.agent):
                return None
            self._running += 1
            self._agents += agent
        released = False

        def release() -> None:
            nonlocal released
            with self._lock:
                if released:
                    return
                released = True
                self._running -= 1
                self._agents -= agent

        return release


class ChatStream(StreamingResponse):
    """A streaming response that tells the producer when the client goes away: ``gone`` is
    set on ``http.disconnect`` (even while the producer is busy in a worker thread between two
    events, when nothing is being sent), and ``release`` runs however the response ends."""

    def __init__(
        self,
        content: AsyncIterable[bytes],
        *,
        gone: threading.Event,
        release: Callable[[], None],
        headers: Mapping[str, str] | None = None,
        media_type: str | None = None,
    ) -> None:
        super().__init__(content, headers=headers, media_type=media_type)
        self.gone = gone
        self.release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            async with anyio.create_task_group() as group:

                async def produce() -> None:
                    try:
                        await self.stream_response(send)
                    except OSError:  # the client went away mid-send
                        self.gone.set()
                    group.cancel_scope.cancel()

                group.start_soon(produce)
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        self.gone.set()
                        group.cancel_scope.cancel()
                        break
        finally:
            self.release()
