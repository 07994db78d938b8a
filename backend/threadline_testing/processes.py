"""`threadline serve` in a process of its own, as a user runs it."""

from __future__ import annotations

import subprocess
import time

import httpx


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
