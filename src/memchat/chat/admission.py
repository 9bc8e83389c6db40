"""How many chat turns may be in setup at once: body, validation, commit point 1, the prompt.

Pure ASGI, in front of the framework, so that a burst of new chats waits here before any of its
parsing runs. Without it, hundreds of requests arriving together each run their setup in the same
event-loop iterations, and the deltas of streams already open wait behind all of it (bench figure
4). The gate opens again as soon as the turn's prompt is built, before the upstream is called:
waiting for a model's first token never holds a place.
"""

import asyncio
from collections.abc import Callable

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

_STATE_KEY = "memchat_turn_admitted"
# the routes that start a turn, in every wire format
TURN_PATHS = frozenset({"/api/chat", "/api/ui/chat", "/v1/chat/completions"})


class TurnAdmission:
    def __init__(self, app: ASGIApp, limit: int, paths: frozenset[str] = TURN_PATHS):
        self.app = app
        self.paths = paths
        self._gate = asyncio.Semaphore(limit)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] not in self.paths or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        await self._gate.acquire()
        held = True

        def admitted() -> None:
            nonlocal held
            if held:
                held = False
                self._gate.release()

        scope.setdefault("state", {})[_STATE_KEY] = admitted
        try:
            await self.app(scope, receive, send)
        finally:
            admitted()  # a request that failed before its turn was set up


def setup_done(request: Request) -> Callable[[], None]:
    """What the chat route calls once the turn is set up (a no-op without the middleware)."""
    callback: Callable[[], None] | None = getattr(request.state, _STATE_KEY, None)
    return callback or (lambda: None)
