"""Sharing from the page: the owner makes a link, a second browser (another visitor) reads the conversation
read-only, and once the owner stops sharing the link shows that it no longer works."""

from __future__ import annotations

from chat_page import ChatPage
from playwright.sync_api import Browser, Page, expect


def test_a_shared_link_is_read_only_elsewhere_and_stops_working_when_revoked(page: Page, browser: Browser, server: str):
    failed: list[str] = []  # requests the browser logs as failed (a 404 on opening the dialog was one)
    page.on("response", lambda response: response.status >= 400 and failed.append(response.url))
    chat = ChatPage.open(page, server)
    chat.ask("calculate (17 * 23) + 4")
    chat.wait_until_answered()
    expect(chat.assistant).to_contain_text("395")

    page.get_by_test_id("share").click()
    dialog = page.get_by_test_id("share-dialog")
    expect(dialog).to_be_visible()
    assert failed == [], failed
    dialog.get_by_test_id("create-link").click()
    link = dialog.get_by_test_id("share-link")
    expect(link).to_have_value(f"{server}/share/" + link.input_value().rsplit("/", 1)[-1])
    url = link.input_value()
    assert "/share/" in url

    other = browser.new_context(viewport={"width": 390, "height": 780})
    try:
        reader = other.new_page()
        reader.goto(url)
        shared = reader.get_by_test_id("shared-conversation")
        expect(shared.get_by_role("heading", name="calculate (17 * 23) + 4")).to_be_visible()
        expect(shared.get_by_test_id("assistant-message")).to_contain_text("395")
        expect(shared.get_by_test_id("tool-card")).to_have_count(1)
        expect(reader.get_by_role("textbox")).to_have_count(0)  # no composer: nothing to continue
        expect(reader.get_by_test_id("rating")).to_have_count(0)
        expect(reader.get_by_test_id("sidebar")).to_have_count(0)

        dialog.get_by_test_id("stop-sharing").click()
        expect(dialog.get_by_test_id("share-status")).to_have_text("The link no longer works.")
        reader.reload()
        expect(reader.get_by_role("heading", name="This link does not work")).to_be_visible()
        dialog.get_by_test_id("close-share").click()
        expect(dialog).to_be_hidden()
    finally:
        other.close()
