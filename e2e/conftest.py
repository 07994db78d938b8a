"""Browser tests: the real server (subprocess, real PostgreSQL) and the system's Chromium via Playwright.

Chromium comes from the operating system (tasks.py installs it with apt-get); Playwright's own browser
download is never used. A failing test leaves a screenshot in test-results/.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest
from launch import CHROMIUM_FLAGS, RESULTS, ROOT, chromium_path, threadline_server
from playwright.sync_api import Browser, Page, expect, sync_playwright
from threadline_testing.database import fresh_database


@pytest.fixture(scope="session")
def e2e_database(tmp_path_factory) -> Iterator[str]:
    with fresh_database(tmp_path_factory.mktemp("pg")) as url:
        yield url


# The built-in tools, plus the test MCP server over stdio for a tool that reports progress.
MCP_SERVERS = json.dumps(
    [
        {"name": "threadline", "transport": "builtin"},
        {
            "name": "tests",
            "transport": "stdio",
            "command": sys.executable,
            "args": [str(ROOT / "backend" / "tests" / "mcp_test_server.py"), "stdio"],
        },
    ]
)


@pytest.fixture(scope="session")
def server(e2e_database, tmp_path_factory) -> Iterator[str]:
    with threadline_server(
        e2e_database,
        tmp_path_factory.mktemp("server"),
        CHAT_RATE_LIMIT="1000/minute",
        MCP_SERVERS=MCP_SERVERS,
        CHAT_GENERATED_TITLES="false",  # the tests name conversations by their first words; test_titles_page.py not
    ) as url:
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


# What a test waits for (an answer's end, say) comes when it comes: a busy machine can take longer than
# Playwright's 5 s for a whole answer to stream and render. Assertions wait as long as actions do.
WAIT_MS = 15_000
expect.set_options(timeout=WAIT_MS)


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh browser context per test: a new visitor with no cookies and no conversations. Whatever the test
    does, the page's Content-Security-Policy must never block the page's own code or styles."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    blocked = []
    page.on(
        "console", lambda message: blocked.append(message.text) if "Content Security Policy" in message.text else None
    )
    yield page
    context.close()
    assert not blocked, blocked


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    page = item.funcargs.get("page") if hasattr(item, "funcargs") else None
    if report.when == "call" and report.failed and page is not None and not page.is_closed():
        RESULTS.mkdir(exist_ok=True)
        page.screenshot(path=RESULTS / f"{item.name}.png", full_page=True)
