"""Browser tests: the real server (subprocess, real PostgreSQL) and the system's Chromium via Playwright.

Chromium comes from the operating system (tasks.py installs it with apt-get); Playwright's own browser
download is never used. A failing test leaves a screenshot in test-results/.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from standins import _free_port
from testdb import fresh_database

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "test-results"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run"]


def chromium_path() -> str | None:
    return os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")


@contextmanager
def threadline_server(database_url: str, data_dir: Path, **env: str) -> Iterator[str]:
    """`threadline serve` as a user runs it, on a free port; yields its base URL."""
    if not (ROOT / "frontend" / "dist" / "index.html").exists():
        pytest.fail("the chat page is not built: run the tests with `python3 tasks.py test`")
    port = _free_port()
    environment = {**os.environ, "CHAT_MODEL_PROVIDER": "demo", "DATABASE_URL": database_url,
                   "THREADLINE_PORT": str(port), "THREADLINE_DATA_DIR": str(data_dir), "LOG_LEVEL": "WARNING",
                   "CHAT_DEMO_TOKEN_DELAY_MS": "30", **env}
    process = subprocess.Popen([sys.executable, "-m", "threadline", "serve"], env=environment, cwd=ROOT)
    base_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{base_url}/health", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline or process.poll() is not None:
            process.kill()
            raise RuntimeError("threadline did not start")
        time.sleep(0.1)
    try:
        yield base_url
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="session")
def e2e_database(tmp_path_factory) -> Iterator[str]:
    with fresh_database(tmp_path_factory) as url:
        yield url


@pytest.fixture(scope="session")
def server(e2e_database, tmp_path_factory) -> Iterator[str]:
    with threadline_server(e2e_database, tmp_path_factory.mktemp("server"), CHAT_RATE_LIMIT="1000/minute") as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    path = chromium_path()
    if path is None:
        pytest.skip("no Chromium on this machine: `python3 tasks.py test` installs it with apt-get")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh browser context per test: a new visitor with no cookies and no conversations."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    page = item.funcargs.get("page") if hasattr(item, "funcargs") else None
    if report.when == "call" and report.failed and page is not None and not page.is_closed():
        RESULTS.mkdir(exist_ok=True)
        page.screenshot(path=RESULTS / f"{item.name}.png", full_page=True)
