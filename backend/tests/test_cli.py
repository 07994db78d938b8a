"""The `threadline` command as an operator uses it: its version, a check of the configuration that exits non-zero
on a problem, migrations as a step of their own, and where to listen from the command line."""

from __future__ import annotations

import os
import subprocess
import sys

import psycopg
from threadline import __version__


def threadline(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {key: value for key, value in os.environ.items() if not key.startswith(("CHAT_", "THREADLINE_"))}
    return subprocess.run(
        [sys.executable, "-m", "threadline", *args], capture_output=True, text=True, env=clean | env, timeout=120
    )


def test_version():
    assert threadline("--version").stdout == f"threadline {__version__}\n"


def test_check_says_what_would_run_and_fails_on_a_problem(tmp_path):
    checked = threadline("check", "--host", "0.0.0.0", "--port", "9123", THREADLINE_DATA_DIR=str(tmp_path))
    assert checked.returncode == 0, checked.stderr
    said = dict(line.split(":", 1) for line in checked.stdout.splitlines())
    assert said["listens on"].strip() == "0.0.0.0:9123" and said["model"].strip() == "demo:demo"
    assert said["agents"].strip() == "the built-in agent"
    assert "the offline demo model answers" in checked.stderr
    broken = threadline("check", "--graph", str(tmp_path / "missing.py:graph"))
    assert broken.returncode == 2 and "no such file" in broken.stderr
    bad = threadline("check", CHAT_STREAM_MODE="verbose")
    assert bad.returncode == 2 and "CHAT_STREAM_MODE must be one of" in bad.stderr


def test_migrate_brings_a_new_database_up_to_date(database_url):
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("CREATE DATABASE threadline_cli_migrate")
    fresh = database_url.rsplit("/", 1)[0] + "/threadline_cli_migrate"
    try:
        migrated = threadline("migrate", DATABASE_URL=fresh)
        assert migrated.returncode == 0, migrated.stderr
        assert "the database is up to date" in migrated.stdout
        with psycopg.connect(fresh) as conn:
            tables = {row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        assert {"checkpoints", "store", "conversations", "threadline_migrations"} <= tables
    finally:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute("DROP DATABASE threadline_cli_migrate WITH (FORCE)")
