"""Launching what the browser tests drive: `threadline serve` as a user runs it, and the system's Chromium."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from threadline_testing.ports import free_port
from threadline_testing.processes import wait_until_up

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "test-results"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str | None:
    return os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")


@contextmanager
def threadline_server(database_url: str, data_dir: Path, **env: str) -> Iterator[str]:
    """`threadline serve` as a user runs it, on a free port; yields its base URL."""
    if not (ROOT / "frontend" / "dist" / "index.html").exists():
        pytest.fail("the chat page is not built: run the tests with `python3 tasks.py test`")
    port = free_port()
    environment = {
        **os.environ,
        "CHAT_MODEL_PROVIDER": "demo",
        "DATABASE_URL": database_url,
        "THREADLINE_PORT": str(port),
        "THREADLINE_DATA_DIR": str(data_dir),
        "LOG_LEVEL": "WARNING",
        "CHAT_DEMO_TOKEN_DELAY_MS": "30",
        **env,
    }
    process = subprocess.Popen([sys.executable, "-m", "threadline", "serve"], env=environment, cwd=ROOT)
    base_url = f"http://127.0.0.1:{port}"
    wait_until_up(base_url, process)
    try:
        yield base_url
    finally:
        process.terminate()
        process.wait(timeout=30)
