"""Where threadline's routes sit in the app that serves them: at the root (the standalone server), or under a host
app's prefix (`Threadline(path="/chat")`). The URLs threadline writes into answers and history (a file's
`/api/files/{id}`, a link's `/share/{id}`) start with it, so a browser can follow them; paths threadline reads
(the request's own, a file part's URL) are compared without it.

A context variable, set by threadline's router for each request it serves (http/app.py), not a process-wide
value: two apps in one process each keep their own, and an answer's tasks inherit their request's."""

from __future__ import annotations

import re
from contextvars import ContextVar

MOUNT_PATH: ContextVar[str] = ContextVar("threadline_mount_path", default="")
ALLOWED = re.compile(r"^(/[A-Za-z0-9._~-]+)+$")  # segments of unreserved characters: nothing to escape or resolve


def route_prefix(path: str) -> str:
    """The prefix as a route table wants it: `""` for the root, else `/a/b` (one trailing slash is forgiven).
    Raises ValueError naming what is wrong."""
    trimmed = path.rstrip("/") if path != "/" else ""
    if trimmed and (not ALLOWED.match(trimmed) or {".", ".."} & set(trimmed.split("/"))):
        raise ValueError(f"path {path!r}: expected '/' or segments like '/chat' (letters, digits, '.', '_', '~', '-')")
    return trimmed


def url(path: str) -> str:
    """A threadline path (`/api/files/…`) as the browser reaches it."""
    return MOUNT_PATH.get() + path


def local(url: str) -> str:
    """A URL of threadline's own, as written by `url`, back to its threadline path; anything else unchanged."""
    prefix = MOUNT_PATH.get()
    return url[len(prefix) :] if prefix and url.startswith(prefix + "/") else url
