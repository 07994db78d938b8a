"""The chat page as the browser tests see it: what a person does (open, ask, stop) and what they look at,
found by role, label or a stable `data-testid`, never by a style's class name."""

from __future__ import annotations

from playwright.sync_api import Locator, Page, expect

SEND = "Send"


class ChatPage:
    def __init__(self, page: Page) -> None:
        self.page = page

    @classmethod
    def open(cls, page: Page, base_url: str, query: str = "") -> ChatPage:
        page.goto(f"{base_url}/{query}")
        chat = cls(page)
        expect(chat.box).to_be_enabled()
        return chat

    @property
    def box(self) -> Locator:
        return self.page.get_by_role("textbox", name="Message", exact=True)

    @property
    def send_button(self) -> Locator:
        return self.page.get_by_role("button", name=SEND)

    @property
    def stop_button(self) -> Locator:
        return self.page.get_by_role("button", name="Stop")

    def ask(self, text: str) -> None:
        self.box.fill(text)
        self.box.press("Enter")

    def wait_until_answered(self) -> None:
        expect(self.stop_button).to_have_count(0)
        expect(self.box).to_be_enabled()

    @property
    def messages(self) -> Locator:
        return self.page.get_by_test_id("user-message").or_(self.page.get_by_test_id("assistant-message"))

    @property
    def user_messages(self) -> Locator:
        return self.page.get_by_test_id("user-message")

    @property
    def assistant(self) -> Locator:
        """The newest answer."""
        return self.page.get_by_test_id("assistant-message").last

    @property
    def thinking(self) -> Locator:
        return self.page.get_by_test_id("thinking")

    @property
    def tool_cards(self) -> Locator:
        return self.page.get_by_test_id("tool-card")

    @property
    def conversations(self) -> Locator:
        """The sidebar's entries, most recently used first."""
        return self.page.get_by_test_id("open-conversation")

    @property
    def banner(self) -> Locator:
        return self.page.get_by_role("alert")

    def record(self, *test_ids: str) -> None:
        """Remember every text the elements with these test ids show, even for a moment (in `window.seen`)."""
        selector = ", ".join(f'[data-testid="{test_id}"]' for test_id in test_ids)
        self.page.evaluate(
            """selector => {
            window.seen = [];
            new MutationObserver(() => document.querySelectorAll(selector).forEach(
                element => window.seen.push(element.textContent))).observe(document.body,
                {subtree: true, childList: true, characterData: true, attributes: true});
        }""",
            selector,
        )

    def seen(self) -> list[str]:
        return list(self.page.evaluate("window.seen"))
