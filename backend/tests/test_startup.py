"""Start-up on a shared database: processes starting together on a new database never wait for each other for
good, and a signal during start-up ends the process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psycopg
from threadline.storage.migrations import MIGRATION_LOCK
from threadline_testing.database import fresh_database
from threadline_testing.ports import free_port
from threadline_testing.processes import wait_until_up

OTHER_SESSIONS = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"


def serve(database_url: str, data_dir, port: int) -> subprocess.Popen[bytes]:
    env = os.environ | {
        "CHAT_MODEL_PROVIDER": "demo",
        "DATABASE_URL": database_url,
        "THREADLINE_PORT": str(port),
        "THREADLINE_DATA_DIR": str(data_dir),
        "LOG_LEVEL": "WARNING",
    }
    return subprocess.Popen([sys.executable, "-m", "threadline", "serve"], env=env)


ASKED_FOR_THE_LOCK = OTHER_SESSIONS + " AND query LIKE '%pg_try_advisory_lock%'"


def wait_for_another_session(
    conn: psycopg.Connection, server: subprocess.Popen[bytes], which: str = OTHER_SESSIONS
) -> None:
    """Until the server starting up has opened its connection pool (and so waits for the lock); with
    ASKED_FOR_THE_LOCK, until it has asked for the lock too."""
    while not conn.execute(which).fetchone()[0]:  # type: ignore[index]
        assert server.poll() is None, "still starting"
        time.sleep(0.1)


def test_a_process_waiting_for_the_migration_lock_does_not_hold_up_the_process_that_has_it(tmp_path):
    """The first process runs LangGraph's `CREATE INDEX CONCURRENTLY` while holding the lock; the second,
    waiting for the lock, must hold no snapshot that index waits for (that was a deadlock for good)."""
    with fresh_database(tmp_path / "pg") as url, psycopg.connect(url, autocommit=True) as first:
        first.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))  # the first process, mid-migration
        port = free_port()
        second = serve(url, tmp_path / "data", port)
        try:
            wait_for_another_session(first, second, ASKED_FOR_THE_LOCK)
            first.execute("CREATE TABLE probe (id int)")  # the migration goes on after the second started waiting
            first.execute("SET statement_timeout = '10s'")
            first.execute("CREATE INDEX CONCURRENTLY probe_id ON probe (id)")  # timed out before the fix
            first.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
            wait_until_up(f"http://127.0.0.1:{port}", second)
        finally:
            second.terminate()
            second.wait(timeout=30)


def test_two_processes_starting_together_on_a_new_database_both_come_up(tmp_path):
    for _ in range(3):
        with fresh_database(tmp_path / "pg") as url:
            ports = [free_port(), free_port()]
            processes = [serve(url, tmp_path / "data", port) for port in ports]
            try:
                for port, process in zip(ports, processes):
                    wait_until_up(f"http://127.0.0.1:{port}", process, seconds=60)
            finally:
                for process in processes:
                    process.terminate()
                    process.wait(timeout=30)


def test_sigterm_during_start_up_ends_the_process(tmp_path):
    with fresh_database(tmp_path / "pg") as url, psycopg.connect(url, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))  # start-up cannot finish
        server = serve(url, tmp_path / "data", free_port())
        try:
            wait_for_another_session(holder, server)
            server.send_signal(signal.SIGTERM)
            code = server.wait(timeout=10)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
    assert code == 128 + signal.SIGTERM, "it ended on the signal, not by its own failure"
