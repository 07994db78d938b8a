"""The `threadline` command as an operator uses it: its version, a check of the configuration that exits non-zero
on a problem, migrations as a step of their own, where to listen from the command line, several server
processes on one port, and a server that restarts when the agent's code changes."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import langsmith
import psycopg
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from threadline import __version__
from threadline.agent.demo_model import DemoChatModel
from threadline.agent.graph import GraphOptions, build_graph
from threadline.answers.runner import run_graph
from threadline.answers.translator import TurnTranslator
from threadline.conversations.state import config_of
from threadline.serving.langsmith_inline import run_langsmith_bookkeeping_inline
from threadline_testing.ports import free_port
from threadline_testing.turns import turn_request


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
        assert "schema threadline" in migrated.stdout
        assert {"checkpoints", "store", "conversations", "threadline_migrations"} <= tables_in(fresh, "threadline")
        assert tables_in(fresh, "public") == set(), "none in the schema a host app's own tables are in"
    finally:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute("DROP DATABASE threadline_cli_migrate WITH (FORCE)")


def tables_in(url: str, schema: str) -> set[str]:
    with psycopg.connect(url) as conn:
        return {row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,))}


def test_a_host_apps_tables_of_the_same_names_never_meet_threadlines_and_an_older_database_keeps_its_own(
    database_url,
):
    """A host app's `conversations` and `files` (other columns) stay as they are; a database a version before set up
    in `public` goes on there, and says so."""
    host = database_url.rsplit("/", 1)[0] + "/threadline_cli_host"
    older = database_url.rsplit("/", 1)[0] + "/threadline_cli_older"
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("CREATE DATABASE threadline_cli_host")
        conn.execute("CREATE DATABASE threadline_cli_older")
    try:
        with psycopg.connect(host, autocommit=True) as conn:
            conn.execute("CREATE TABLE conversations (order_id int PRIMARY KEY, note text)")
            conn.execute("CREATE TABLE files (path text)")
            conn.execute("INSERT INTO conversations VALUES (1, 'the host app''s')")
        migrated = threadline("migrate", DATABASE_URL=host)
        assert migrated.returncode == 0, migrated.stderr
        with psycopg.connect(host) as conn:
            assert conn.execute("SELECT note FROM public.conversations").fetchall() == [("the host app's",)]
        assert {"conversations", "files"} <= tables_in(host, "threadline")
        first = threadline("migrate", DATABASE_URL=older, THREADLINE_DATABASE_SCHEMA="public")
        assert first.returncode == 0 and "schema public" in first.stdout, first.stderr
        again = threadline("migrate", DATABASE_URL=older)  # the new default, on a database set up before it
        assert again.returncode == 0 and "schema public" in again.stdout, again.stderr
        assert "THREADLINE_DATABASE_SCHEMA=public" in again.stderr, "it says why"
        assert tables_in(older, "threadline") == set()
    finally:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute("DROP DATABASE threadline_cli_host WITH (FORCE)")
            conn.execute("DROP DATABASE threadline_cli_older WITH (FORCE)")


def wait_until_serving(base_url: str, server: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            if httpx.get(f"{base_url}/health/ready", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert server.poll() is None and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.2)


def children_of(pid: int) -> list[int]:
    return [
        int(stat.parent.name)
        for stat in Path("/proc").glob("[0-9]*/stat")
        if stat.exists() and int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid
    ]


def test_workers_serve_on_one_port_and_stop_together(database_url, tmp_path):
    port = free_port()
    env = {"THREADLINE_DATABASE_URL": database_url, "THREADLINE_DATA_DIR": str(tmp_path)}
    clean = {key: value for key, value in os.environ.items() if not key.startswith(("CHAT_", "THREADLINE_"))}
    server = subprocess.Popen(
        [sys.executable, "-m", "threadline", "serve", "--workers", "2", "--port", str(port)], env=clean | env
    )
    try:
        base_url = f"http://127.0.0.1:{port}"
        wait_until_serving(base_url, server)
        workers = [pid for pid in children_of(server.pid) if Path(f"/proc/{pid}/cmdline").read_bytes()]
        assert len(workers) >= 2, workers
        body = {"messages": [{"role": "user", "parts": [{"type": "text", "text": "hello"}]}]}
        answers = [httpx.post(f"{base_url}/api/chat", json=body, timeout=30) for _ in range(4)]
        assert all(answer.status_code == 200 and '"text-delta"' in answer.text for answer in answers)
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=60) == 0


LEFT_OUT = """
import os, sys
from threadline import cli
from threadline.settings import load_settings
unused = cli.unused_extras(load_settings(), reload=sys.argv[1] == "reload")
with cli.unimportable(unused):
    import httpx, langsmith.client, uvicorn.supervisors
    from mcp.server.fastmcp import FastMCP
    from threadline.http.app import create_app
    FastMCP("logs")  # sets up its logging, with rich's handler when it can import rich
    import requests
imported = ("rich.console", "watchfiles", "httpx2", "charset_normalizer", "opentelemetry.sdk.trace")
print(*(module in sys.modules for module in imported), uvicorn.supervisors.ChangeReload.__name__)
import rich.console, httpx2, charset_normalizer, opentelemetry.sdk.trace  # a team's agent imports them after
"""


def test_a_server_leaves_out_the_optional_parts_of_libraries_it_never_uses():
    clean = {key: value for key, value in os.environ.items() if not key.startswith(("OTEL_", "LANG"))}
    runs = {  # at once: each imports the whole server
        (mode, *env.items()): subprocess.Popen(
            [sys.executable, "-c", LEFT_OUT, mode],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=clean | env,
        )
        for mode, env in [
            ("serve", {}),
            ("reload", {}),
            ("serve", {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}),
            ("serve", {"LANGSMITH_OTEL_ENABLED": "true"}),
        ]
    }
    said = [process.communicate(timeout=120) for process in runs.values()]
    assert all(process.returncode == 0 for process in runs.values()), said
    assert "Warning" not in said[0][1]  # requests' warning that it has no character detection is not shown
    printed = [out.split() for out, _ in said]
    assert printed[0] == ["False", "False", "False", "False", "False", "StatReload"]
    assert printed[1] == ["False", "True", "False", "False", "False", "WatchFilesReload"]  # --reload uses watchfiles
    assert printed[2] == printed[3] == ["False", "False", "False", "False", "True", "StatReload"]  # traced: the SDK


def test_workers_need_postgresql():
    refused = threadline("serve", "--workers", "2", CHAT_MEMORY_BACKEND="memory")
    assert refused.returncode == 2 and "--workers needs PostgreSQL" in refused.stderr


AGENT = """
from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph

def speak(state: MessagesState):
    return {{"messages": [AIMessage("{said}")]}}

builder = StateGraph(MessagesState)
builder.add_node("speak", speak)
builder.add_edge(START, "speak")
graph = builder.compile()
"""


def test_reload_restarts_the_server_when_the_agent_changes(database_url, tmp_path):
    agent, port = tmp_path / "agent.py", free_port()
    agent.write_text(AGENT.format(said="first version"))
    env = {"THREADLINE_DATABASE_URL": database_url, "THREADLINE_DATA_DIR": str(tmp_path / "data")}
    clean = {key: value for key, value in os.environ.items() if not key.startswith(("CHAT_", "THREADLINE_"))}
    command = [
        sys.executable,
        "-m",
        "threadline",
        "serve",
        "--reload",
        "--port",
        str(port),
        "--graph",
        f"{agent}:graph",
    ]
    server = subprocess.Popen(command, env=clean | env, cwd=tmp_path)
    base_url = f"http://127.0.0.1:{port}"
    body = {"messages": [{"role": "user", "parts": [{"type": "text", "text": "hello"}]}]}
    try:
        wait_until_serving(base_url, server)
        assert "first version" in httpx.post(f"{base_url}/api/chat", json=body, timeout=30).text
        agent.write_text(AGENT.format(said="second version"))
        deadline = time.monotonic() + 60
        while True:
            try:
                if "second version" in httpx.post(f"{base_url}/api/chat", json=body, timeout=30).text:
                    break
            except httpx.TransportError:
                pass  # restarting
            assert time.monotonic() < deadline, "the change was not picked up"
            time.sleep(0.3)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)


@tool
async def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression."""
    return "42"


def test_a_served_agents_middleware_hooks_start_no_thread_while_nothing_is_traced_to_langsmith():
    """create_agent wraps each wrap_model_call and wrap_tool_call hook in LangSmith's `traceable`, which hands its
    bookkeeping to a worker thread; `threadline serve` runs it inline while LangSmith tracing is off."""

    async def calls_handed_to_threads() -> int:
        handed = Counting()
        asyncio.get_running_loop().set_default_executor(handed)  # this loop's own, whatever other tests left running
        graph = build_graph(DemoChatModel(token_delay=0), [calculator], InMemorySaver(), GraphOptions("", 3))
        request = turn_request("calculate 6*7")
        await run_graph(graph, config_of("t"), request, TurnTranslator(events_mode=False), lambda _: None)
        return handed.count

    assert asyncio.run(calls_handed_to_threads()) > 0, "LangSmith's own threads"
    run_langsmith_bookkeeping_inline()
    try:
        assert asyncio.run(calls_handed_to_threads()) == 0
    finally:
        langsmith.set_runtime_overrides()


class Counting(ThreadPoolExecutor):
    """An executor that counts the calls handed to it."""

    count = 0

    def submit(self, *args: Any, **kwargs: Any) -> Any:
        self.count += 1
        return super().submit(*args, **kwargs)
