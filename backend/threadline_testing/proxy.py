"""nginx (Debian's package) in front of several threadline processes, with the rules deploy/nginx/threadline.conf
ships (round robin over the processes given)."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from threadline_testing.ports import free_port

CONFIG = """
worker_processes 1;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    upstream threadline {{
{servers}
    }}
    server {{
        listen 127.0.0.1:{port};
        add_header X-Upstream $upstream_addr always;  # which process answered, for tests that wait for one
        include {rules};
    }}
}}
"""


RULES = Path(__file__).resolve().parents[2] / "deploy" / "nginx" / "threadline.conf"
FAIL_TIMEOUT = 1  # seconds nginx leaves a process alone after a request to it failed


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next((path for path in ("/usr/sbin/nginx",) if Path(path).exists()), None)


@contextmanager
def nginx(upstreams: list[int], directory: Path) -> Iterator[str]:
    """nginx on a free port in front of threadline processes on `upstreams`; yields its base URL."""
    binary = nginx_binary()
    assert binary is not None, "nginx is missing: run the tests with `python3 tasks.py test`, which installs it"
    port = free_port()
    servers = "\n".join(
        f"        server 127.0.0.1:{upstream} max_fails=1 fail_timeout={FAIL_TIMEOUT}s;" for upstream in upstreams
    )
    config = directory / "nginx.conf"
    config.write_text(CONFIG.format(dir=directory, servers=servers, port=port, rules=RULES))
    process = subprocess.Popen([binary, "-c", str(config), "-p", str(directory), "-e", str(directory / "error.log")])
    base_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 10
    while True:
        try:
            httpx.get(f"{base_url}/health", timeout=1)
            break
        except httpx.TransportError:
            assert process.poll() is None and time.monotonic() < deadline, (directory / "error.log").read_text()
            time.sleep(0.05)
    try:
        yield base_url
    finally:
        process.terminate()
        process.wait(timeout=10)


def wait_until_routed_to(base_url: str, upstream: int, seconds: float = 10.0) -> None:
    """Until nginx sends a request to the process on `upstream` again (after `FAIL_TIMEOUT`, once it saw it fail)."""
    deadline = time.monotonic() + seconds
    while httpx.get(f"{base_url}/health/live", timeout=5).headers.get("x-upstream") != f"127.0.0.1:{upstream}":
        assert time.monotonic() < deadline, f"nginx sent nothing to {upstream} in {seconds} s"
        time.sleep(0.05)
