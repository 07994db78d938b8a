"""threadline as a team installs it: the built wheel in a fresh virtual environment, `threadline serve` in an
empty folder with nothing configured serves the chat page and answers with the demo model."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import httpx
import pytest
from helpers import serving
from threadline.client import Client
from threadline_testing.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
import tasks  # noqa: E402 - the repository's own entry point builds the wheel as a user would


@pytest.fixture(scope="module")
def built_wheel() -> Path:
    assert tasks.wheel([]) == 0, "python3 tasks.py wheel failed"
    (wheel,) = (ROOT / "dist").glob("threadline-*.whl")
    return wheel


def test_the_wheel_carries_the_page_its_licence_and_types_but_not_the_test_helpers(built_wheel):
    names = zipfile.ZipFile(built_wheel).namelist()
    assert "threadline/page/index.html" in names and any(name.startswith("threadline/page/assets/") for name in names)
    assert "threadline/py.typed" in names
    assert any(name.endswith("licenses/LICENSE") for name in names)
    assert not any(name.startswith("threadline_testing/") for name in names)


def test_a_fresh_environment_with_only_the_wheel_serves_the_page_and_answers(built_wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([tasks.uv(), "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    python, threadline = venv / "bin" / "python", venv / "bin" / "threadline"
    install = [tasks.uv(), "pip", "install", "--quiet", "--python", str(python)]
    constraints = ROOT / "dist" / "threadline-constraints.txt"  # shipped beside the wheel: the versions tested
    subprocess.run([*install, f"{built_wheel}[embedded]", "-c", str(constraints)], check=True)
    version = subprocess.run([str(threadline), "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip().startswith("threadline ")
    empty, port = tmp_path / "empty", free_port()
    empty.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "THREADLINE_PORT": str(port)}
    server = subprocess.Popen([str(threadline), "serve"], cwd=empty, env=env, stderr=subprocess.PIPE, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120  # the embedded PostgreSQL starts for the first time
        while True:
            try:
                httpx.get(f"{base}/health", timeout=2)
                break
            except httpx.TransportError:
                assert server.poll() is None and time.monotonic() < deadline, server.stderr and server.stderr.read()
                time.sleep(0.2)
        page = httpx.get(f"{base}/")
        assert page.status_code == 200 and '<div id="root">' in page.text
        body = {"messages": [{"role": "user", "parts": [{"type": "text", "text": "hello"}]}]}
        answer = httpx.post(f"{base}/api/chat", json=body, timeout=60)
        assert answer.status_code == 200 and '"type":"text-delta"' in answer.text
    finally:
        server.terminate()
        _, said = server.communicate(timeout=60)
    assert "no model provider is configured: the offline demo model answers" in said


def test_the_client_wheel_alone_talks_to_a_server_with_three_dependencies(built_wheel, make_settings, tmp_path):
    """threadline-client, built beside the server's wheel: `threadline.client` and the chunk types it reads, with
    httpx, httpx-sse and msgspec (and theirs) instead of the server's whole install."""
    (client_wheel,) = (ROOT / "dist").glob("threadline_client-*.whl")
    names = zipfile.ZipFile(client_wheel).namelist()
    assert {"threadline/client/__init__.py", "threadline/wires/ui_chunks.py", "threadline/py.typed"} <= set(names)
    assert not [name for name in names if name.startswith(("threadline/http/", "threadline/agent/", "threadline/page"))]
    venv = tmp_path / "venv"
    subprocess.run([tasks.uv(), "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([tasks.uv(), "pip", "install", "--quiet", "--python", str(python), str(client_wheel)], check=True)
    listed = [tasks.uv(), "pip", "list", "--python", str(python), "--format", "freeze"]
    installed = subprocess.run(listed, capture_output=True, text=True, check=True).stdout.lower()
    assert not [name for name in ("langgraph", "langchain", "litestar", "psycopg") if name in installed], installed
    script = "import sys\nfrom threadline.client import Client\nwith Client(sys.argv[1]) as client:\n"
    script += "    print(client.ask('count to 3').text)"
    with serving(make_settings()) as base_url:
        said = subprocess.run([str(python), "-c", script, base_url], capture_output=True, text=True, check=True)
        with Client(base_url) as client:
            expected = client.ask("count to 3").text
    assert said.stdout.strip() == expected.strip() and expected.strip()
