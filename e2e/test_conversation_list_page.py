"""The sidebar as a long-time user sees it: a new conversation listed as soon as it is sent, conversations
grouped by when they were used, more loaded while scrolling through 120 of them, renamed, and searched."""

from __future__ import annotations

import uuid

from chat_page import ChatPage
from playwright.sync_api import Page, expect


def test_a_new_conversation_is_listed_while_its_first_answer_streams(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.ask("count to 40 slowly")
    expect(chat.stop_button).to_be_visible()
    expect(chat.conversations).to_have_count(1)
    expect(chat.conversations.first).to_have_text("count to 40 slowly")
    expect(chat.conversations.first).to_have_attribute("aria-current", "page")
    chat.wait_until_answered()
    expect(chat.conversations).to_have_count(1)


def test_120_conversations_are_paged_grouped_renamed_and_searched(page: Page, server: str):
    chat = ChatPage.open(page, server)
    marker = uuid.uuid4().hex[:6]
    for n in range(120):
        text = f"count to 1 about zebra{marker}" if n == 7 else f"count to 1 about topic {n}"
        body = {"id": f"list-{marker}-{n}", "messages": [{"role": "user", "parts": [{"type": "text", "text": text}]}]}
        assert page.request.post(f"{server}/api/chat", data=body).ok
    page.reload()
    expect(chat.conversations).to_have_count(50)
    expect(page.get_by_role("region", name="Today")).to_be_visible()
    expect(chat.conversations.first).to_have_text("count to 1 about topic 119")

    more = page.get_by_test_id("more-conversations")
    more.scroll_into_view_if_needed()
    expect(chat.conversations).to_have_count(100)
    more.scroll_into_view_if_needed()
    expect(chat.conversations).to_have_count(120)
    expect(more).to_have_count(0)
    expect(chat.conversations.last).to_have_text("count to 1 about topic 0")

    search = page.get_by_test_id("search")
    search.fill(f"zebra{marker}")
    expect(chat.conversations).to_have_count(1)
    chat.conversations.first.click()
    expect(chat.user_messages.first).to_contain_text(f"zebra{marker}")

    page.get_by_role("button", name=f"Rename conversation “count to 1 about zebra{marker}”").click()
    rename = page.get_by_label(f"New title for “count to 1 about zebra{marker}”")
    rename.fill(f"Striped animals {marker}")
    rename.press("Enter")
    search.fill(f"striped {marker}")
    expect(chat.conversations).to_have_count(1)
    expect(chat.conversations.first).to_have_text(f"Striped animals {marker}")
    search.fill(f"nothing-like-this-{marker}")
    expect(page.get_by_test_id("no-conversations")).to_have_text("No conversation matches.")
    search.fill("")
    expect(chat.conversations).to_have_count(50)
