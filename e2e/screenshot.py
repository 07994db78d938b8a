"""Take the README's screenshot from a running server: `.venv/bin/python e2e/screenshot.py http://127.0.0.1:8000`."""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "screenshot.png"
sys.path.insert(0, str(ROOT / "e2e"))

from launch import CHROMIUM_FLAGS, chromium_path  # noqa: E402


def main(base_url: str) -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1200, "height": 720})
        page.goto(base_url)
        box = page.get_by_role("textbox", name="Message", exact=True)
        stop = page.get_by_role("button", name="Stop")
        for question in ("show me markdown", "calculate (17 * 23) + 4"):
            box.fill(question)
            box.press("Enter")
            stop.wait_for(state="hidden")
        page.get_by_test_id("regenerate").click()  # a second version of the last answer, with its switcher
        page.get_by_test_id("version-number").wait_for()
        page.wait_for_timeout(500)
        page.screenshot(path=OUT)
        browser.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000")
