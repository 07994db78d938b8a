"""A fresh PostgreSQL database for a test session, shared by the API tests and the browser tests."""

from __future__ import annotations

import os
import urllib.parse
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest

LOCAL_POSTGRES = "postgresql://postgres@127.0.0.1:5432/postgres"


def _server_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """TEST_DATABASE_URL, else the PostgreSQL on 127.0.0.1:5432, else an embedded one from pgserver."""
    if url := os.environ.get("TEST_DATABASE_URL"):
        return url
    try:
        psycopg.connect(LOCAL_POSTGRES, connect_timeout=3).close()
        return LOCAL_POSTGRES
    except psycopg.OperationalError:
        import pgserver

        return pgserver.get_server(tmp_path_factory.mktemp("pg"), cleanup_mode="stop").get_uri()


@contextmanager
def fresh_database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Create a database with a unique name, yield its URL, drop it afterwards."""
    server_url = _server_url(tmp_path_factory)
    name = f"threadline_test_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urllib.parse.urlsplit(server_url)._replace(path=f"/{name}").geturl()
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
