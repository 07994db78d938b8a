"""Tells the layers below where threadline's routes are mounted (mount_path.py), for each request its router
serves: first of its middleware, so the identity check and the answer's tasks see it."""

from __future__ import annotations

from litestar.types import ASGIApp, Receive, Scope, Send

from threadline.mount_path import MOUNT_PATH


class MountedAt:
    def __init__(self, app: ASGIApp, path: str) -> None:
        self.app = app
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        reset = MOUNT_PATH.set(self.path)
        try:
            await self.app(scope, receive, send)
        finally:
            MOUNT_PATH.reset(reset)
