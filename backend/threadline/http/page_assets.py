"""The chat page's built assets (`/assets/…`, named by Vite after a hash of their content): sent compressed
and cached for good, without the visitor cookie. A name changes with its content, so a browser never needs
to ask again; the page's 870 KB of JavaScript travels as some 260 KB. Each file is compressed once, when
first asked for, and kept (the assets of one build are few)."""

from __future__ import annotations

import gzip
from pathlib import Path

from litestar import Request, Response, get
from litestar.types import ControllerRouterHandler

from threadline.refusals import not_found

ASSETS_PATH = "/assets/"
IMMUTABLE = "public, max-age=31536000, immutable"
TYPES = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml", ".woff2": "font/woff2"}
COMPRESSED = (".js", ".css", ".svg")  # text: the rest is compressed already


def asset_route(assets: Path) -> ControllerRouterHandler:
    """GET /assets/{name}: one of the build's files, gzip-compressed when the browser takes it."""
    kept: dict[str, tuple[bytes, bytes]] = {}  # name → (the file, gzip-compressed)

    @get(f"{ASSETS_PATH}{{name:str}}", include_in_schema=False, sync_to_thread=False)
    def asset(request: Request, name: str) -> Response[bytes]:  # type: ignore[type-arg]
        if name not in kept:
            path = assets / name
            if "/" in name or name.startswith(".") or not path.is_file():
                raise not_found("Asset")
            data = path.read_bytes()
            kept[name] = (data, gzip.compress(data, 9, mtime=0) if path.suffix in COMPRESSED else data)
        data, compressed = kept[name]
        headers = {"cache-control": IMMUTABLE, "vary": "accept-encoding"}
        if compressed is not data and "gzip" in request.headers.get("accept-encoding", ""):
            data, headers["content-encoding"] = compressed, "gzip"
        media_type = TYPES.get(Path(name).suffix, "application/octet-stream")
        return Response(data, media_type=media_type, headers=headers)

    return asset
