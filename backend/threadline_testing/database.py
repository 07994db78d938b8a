"""A fresh PostgreSQL database: on TEST_DATABASE_URL's server, else the local one, else an embedded one."""

from __future__ import annotations

import os
import urllib.parse
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

LOCAL_POSTGRES = "postgresql://postgres@127.0.0.1:5432/postgres"


def local_server(variable: str = "TEST_DATABASE_URL") -> str | None:
    """The server `variable` names, else the PostgreSQL on 127.0.0.1:5432 if it answers, else None."""
    if url := os.environ.get(variable):
        return url
    try:
        psycopg.connect(LOCAL_POSTGRES, connect_timeout=3).close()
        return LOCAL_POSTGRES
    except psycopg.OperationalError:
        return None


@contextmanager
def fresh_database(embedded_dir: Path) -> Iterator[str]:
    """Create a database with a unique name, yield its URL, drop it afterwards. Without a server to use, an
    embedded one (the pgserver wheel) keeps its files in `embedded_dir`."""
    server_url = local_server()
    if server_url is None:
        import pgserver

        server_url = pgserver.get_server(embedded_dir, cleanup_mode="stop").get_uri()
    name = f"threadline_test_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urllib.parse.urlsplit(server_url)._replace(path=f"/{name}").geturl()
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
