"""Launching what the browser tests drive: `threadline serve` as a user runs it, and the system's Chromium."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from threadline_testing.processes import threadline_server as serve

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "test-results"
PLAIN_HTTP_HOST = "threadline.test"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    # A name that is not localhost, so the page is also tried where the browser gives no secure context.
    f"--host-resolver-rules=MAP {PLAIN_HTTP_HOST} 127.0.0.1",
]


def chromium_path() -> str | None:
    return os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")


@contextmanager
def threadline_server(database_url: str, data_dir: Path, **env: str) -> Iterator[str]:
    """`threadline serve` as a user runs it, with the chat page, on a free port; yields its base URL."""
    if not (ROOT / "frontend" / "dist" / "index.html").exists():
        pytest.fail("the chat page is not built: run the tests with `python3 tasks.py test`")
    with serve(database_url, data_dir, **({"CHAT_DEMO_TOKEN_DELAY_MS": "30"} | env)) as base_url:
        yield base_url
