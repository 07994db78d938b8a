"""`threadline serve` without DATABASE_URL runs an embedded PostgreSQL: it stops with the server, unless it
was already running when the server started (then it belongs to whoever started it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pgserver
import psutil
import pytest
from threadline_testing.ports import free_port
from threadline_testing.processes import wait_until_up

ROOT = Path(__file__).resolve().parents[2]


def serve_until_up(data_dir: Path, command: tuple[str, ...] = ("-m", "threadline", "serve")) -> subprocess.Popen[bytes]:
    port = free_port()
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env |= {
        "CHAT_MODEL_PROVIDER": "demo",
        "THREADLINE_DATA_DIR": str(data_dir),
        "THREADLINE_PORT": str(port),
        "LOG_LEVEL": "WARNING",
    }
    server = subprocess.Popen([sys.executable, *command], env=env, cwd=ROOT)
    wait_until_up(f"http://127.0.0.1:{port}", server, seconds=120)
    return server


def postmaster(data_dir: Path) -> int:
    return int((data_dir / "postgres" / "postmaster.pid").read_text().split()[0])


def running(pid: int, wait: float = 0.0) -> bool:
    deadline = time.monotonic() + wait
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        if time.monotonic() >= deadline:
            return True
        time.sleep(0.1)


def stop(server: subprocess.Popen[bytes], how: signal.Signals = signal.SIGINT) -> None:
    server.send_signal(how)  # Ctrl+C, or a service manager's stop
    assert server.wait(timeout=30) in (0, -how, 128 + how)


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM])
def test_the_embedded_postgres_stops_with_the_server(tmp_path, how):
    server = serve_until_up(tmp_path)
    pid = postmaster(tmp_path)
    stop(server, how)
    assert not running(pid, wait=10), "nothing is left running once the server has stopped"


def test_sigterm_to_tasks_serve_stops_the_server_and_its_database(tmp_path):
    command = serve_until_up(tmp_path, ("tasks.py", "serve"))
    server = next(child for child in psutil.Process(command.pid).children(recursive=True) if "serve" in child.cmdline())
    database = postmaster(tmp_path)
    stop(command, signal.SIGTERM)
    assert not running(server.pid, wait=10), "the server stops with the command that runs it"
    assert not running(database, wait=10), "and so does its database"


def test_an_embedded_postgres_that_was_already_running_is_left_running(tmp_path):
    already = pgserver.get_server(tmp_path / "postgres", cleanup_mode="stop")  # started by someone else
    try:
        server = serve_until_up(tmp_path)
        stop(server)
        assert running(postmaster(tmp_path), wait=1), "whoever started it still uses it"
    finally:
        already.cleanup()
