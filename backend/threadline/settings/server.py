"""The server's settings: where it listens, the page it serves, who may call it from a browser, and how it stops."""

from __future__ import annotations

import importlib.resources
from pathlib import Path
from typing import Annotated, ClassVar

import msgspec

from threadline.settings.reading import Section, SettingsError, comma_list, env, seconds

# In an installed wheel (`tasks.py wheel` puts the page there), found as the package's data.
PACKAGED_PAGE = Path(str(importlib.resources.files("threadline") / "page"))
CHECKOUT_PAGE = Path(__file__).resolve().parents[3] / "frontend" / "dist"  # built by `tasks.py serve`
DEFAULT_FRONTEND_DIR = PACKAGED_PAGE if (PACKAGED_PAGE / "index.html").exists() else CHECKOUT_PAGE


def origins(raw: str, name: str) -> tuple[str, ...]:
    values = comma_list(raw, name)
    for origin in values:
        if not origin.startswith(("http://", "https://")) or origin.endswith("/") or origin.count("/") > 2:
            raise SettingsError(
                f"{name} must be a comma-separated list of origins like http://localhost:3000 (got {origin!r})"
            )
    return values


class ServerSettings(Section, frozen=True, kw_only=True):
    TITLE: ClassVar[str] = "Server"

    host: Annotated[str, env("THREADLINE_HOST", help="the address the server listens on")] = "127.0.0.1"
    port: Annotated[int, msgspec.Meta(ge=1, le=65535), env("THREADLINE_PORT", help="the port it listens on")] = 8000
    frontend_dir: Annotated[
        Path,
        env(
            "THREADLINE_FRONTEND_DIR",
            help="where the built chat page is; without one, the API runs alone",
            default="the page inside the installed package, else `frontend/dist` of this checkout",
        ),
    ] = DEFAULT_FRONTEND_DIR
    cors_origins: Annotated[
        tuple[str, ...],
        env(
            "CORS_ORIGINS",
            help="comma-separated origins allowed to call the API with credentials, e.g. `http://localhost:3000`",
            read=origins,
            default="empty: same origin only",
        ),
    ] = ()
    shutdown_grace: Annotated[
        float,
        seconds(minimum=0.0),
        env(
            "THREADLINE_SHUTDOWN_GRACE",
            help="seconds running answers get to finish after SIGTERM, before they are stopped and saved",
        ),
    ] = 30.0
