"""What the server bounds about every connection, so slow or silent clients cannot pile up.

uvicorn limits concurrent connections (`limit_concurrency`, 503 beyond) and idle keep-alive, but not
how long a client may take to send its headers or its body: a client sending a byte now and then would
hold its connection forever. `HeaderTimeoutProtocol` closes a connection whose request headers are not
complete in time, and makes the limit one of requests at work: uvicorn counts open connections, idle kept-alive
ones included, and at the limit refuses every request (50 idle connections and 950 new streams: 1000 refusals);
here idle connections are closed to make room and only requests beyond the limit are refused. `RequestLimits`
answers 408 to a body that does not arrive in time, and the 503 of a request over the limit. Paths holding a NUL
character, which no file or route can have, are refused before anything tries to open them.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Any, cast

import uvicorn
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, ReceiveMessage, Scope, Send
from uvicorn.protocols.http.flow_control import service_unavailable
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from threadline.refusals import Refused

OVER_CAPACITY = "threadline.over_capacity"  # scope state: uvicorn's connection limit refused this request


class HeaderTimeoutProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, closing the connection when a request's headers take too long, and
    handing a request over the connection limit to the app, marked, so that its 503 is a JSON error with
    the usual headers like every other (uvicorn's own is plain text)."""

    # Slots, not the instance's dict: uvicorn's protocol sets 28 attributes, and two more would make each
    # connection's dict one of its own keys (1.6 KB instead of 0.3 KB).
    __slots__ = ("header_timeout", "header_timer")

    def __init__(self, *args: Any, header_timeout: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout = header_timeout
        self.header_timer: asyncio.TimerHandle | None = None

    def _arm(self) -> None:
        self._disarm()
        self.header_timer = self.loop.call_later(self.header_timeout, self.transport.close)

    def _disarm(self) -> None:
        if self.header_timer is not None:
            self.header_timer.cancel()
            self.header_timer = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()  # a connection that sends nothing at all

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm()  # each request on a kept-alive connection

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _start_asgi_task(self, cycle: Any, app: Any) -> None:
        if app is service_unavailable:
            limit = self.limit_concurrency or 0  # set: uvicorn refused the request by it
            if len(self.tasks) < limit:  # at the limit of connections, not of requests at work
                self._close_idle(limit)
            else:
                cycle.scope.setdefault("state", {})[OVER_CAPACITY] = True
            app = self.app
        super()._start_asgi_task(cycle, app)

    def _close_idle(self, limit: int) -> None:
        """Close as many kept-alive connections waiting for a next request as the limit is exceeded by (one that
        has sent nothing yet may be sending its first request: it is kept, and bounded by the header timeout)."""
        excess = len(self.connections) - limit + 1
        for connection in list(self.connections):
            if excess <= 0:
                return
            cycle = getattr(connection, "cycle", None)
            if connection is not self and cycle is not None and cycle.response_complete:
                connection.shutdown()
                excess -= 1


class RequestLimits:
    """ASGI middleware: a request body must arrive whole within `seconds` of the handler asking for it, and a
    path may not hold a NUL character."""

    def __init__(self, app: ASGIApp, seconds: float) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        if scope.get("state", {}).get(OVER_CAPACITY):
            raise Refused("OVER_CAPACITY", "The server is busy. Please try again in a moment.", retry_after=1)
        if "\x00" in scope["path"]:
            raise Refused("VALIDATION_ERROR", "Invalid request: the path contains a NUL character.", "path")
        deadline: float | None = None
        complete = False

        async def timed_receive() -> ReceiveMessage:
            nonlocal deadline, complete
            if complete:  # the body is in: what follows is waiting for a disconnect, which may take long
                return await receive()
            deadline = deadline or asyncio.get_running_loop().time() + self.seconds
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                raise Refused(
                    "REQUEST_TIMEOUT", f"The request body did not arrive within {self.seconds:g} s."
                ) from None
            complete = message["type"] != "http.request" or not message.get("more_body", False)
            return message

        await self.app(scope, timed_receive, send)


def server_config(
    app: ASGIApp | str, *, host: str, port: int, max_connections: int, header_timeout: float, **options: Any
) -> uvicorn.Config:
    """uvicorn as threadline runs it: `threadline serve` and the tests' real servers alike."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=cast("type[asyncio.Protocol]", partial(HeaderTimeoutProtocol, header_timeout=header_timeout)),
        limit_concurrency=max_connections,
        timeout_keep_alive=5,
        proxy_headers=False,  # http/client_address.py decides whom to trust
        **options,
    )
