"""`threadline serve` in a process of its own, as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from threadline_testing.ports import free_port


def wait_until_up(base_url: str, process: subprocess.Popen[bytes], seconds: float = 60.0) -> None:
    """Return once the server answers `/health`; kill it and raise if it exits or takes longer."""
    deadline = time.monotonic() + seconds
    while process.poll() is None and time.monotonic() < deadline:
        try:
            if httpx.get(f"{base_url}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"threadline did not start at {base_url}")


def start_threadline(database_url: str, data_dir: Path, port: int, **env: str) -> subprocess.Popen[bytes]:
    """`threadline serve` (demo model) on `port`, once it answers; stop it with terminate() or kill()."""
    environment = {
        **os.environ,
        "CHAT_MODEL_PROVIDER": "demo",
        "DATABASE_URL": database_url,
        "THREADLINE_PORT": str(port),
        "THREADLINE_DATA_DIR": str(data_dir),
        "LOG_LEVEL": "WARNING",
        **env,
    }
    process = subprocess.Popen([sys.executable, "-m", "threadline", "serve"], env=environment)
    wait_until_up(f"http://127.0.0.1:{port}", process)
    return process


@contextmanager
def threadline_server(database_url: str, data_dir: Path, **env: str) -> Iterator[str]:
    """`threadline serve` as a user runs it, on a free port; yields its base URL."""
    port = free_port()
    process = start_threadline(database_url, data_dir, port, **env)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=30)
