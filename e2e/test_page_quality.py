"""What makes the page pleasant and usable by everyone: GitHub Markdown with highlighted, copyable code,
one thinking indicator, dark mode (the system's, or picked), a deletion that asks first and can be undone,
and no WCAG 2 A/AA violation that axe-core finds, in both themes, at desktop and phone widths."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from chat_page import ChatPage
from launch import ROOT
from playwright.sync_api import Browser, Page, expect

AXE = ROOT / "frontend" / "node_modules" / "axe-core" / "axe.min.js"
WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
SIZES = {"desktop": (1280, 800), "phone": (390, 780)}


def violations(page: Page) -> list[str]:
    """axe-core's WCAG A/AA violations on the page as it is: rule, impact and where. Evaluated through the
    DevTools protocol, which the page's Content-Security-Policy does not govern."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.evaluate(Path(AXE).read_text())
    found = page.evaluate(
        "async tags => (await axe.run(document, {runOnly: {type: 'tag', values: tags}})).violations"
        ".map(v => `${v.id} (${v.impact}): ${v.nodes.map(n => n.target.join(' ')).join(', ')}`)",
        WCAG,
    )
    return list(found)


def test_markdown_tables_tasks_and_code_are_drawn_and_code_is_copied(page: Page, server: str):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    chat = ChatPage.open(page, server)
    chat.ask("show me markdown")
    chat.wait_until_answered()
    answer = chat.assistant
    expect(answer.get_by_role("table")).to_have_count(1)
    expect(answer.get_by_role("columnheader")).to_have_text(["Planet", "Moons", "Rings"])
    expect(answer.get_by_role("checkbox", name="Done", exact=True)).to_be_checked()
    expect(answer.get_by_role("checkbox", name="Not done")).not_to_be_checked()
    expect(answer.locator("del")).to_have_text("not")
    block = answer.get_by_test_id("code-block")
    expect(block.get_by_test_id("code-language")).to_have_text("python")
    expect(block.locator(".hljs-keyword").first).to_have_text("def")
    expect(block.locator("pre")).to_have_attribute("tabindex", "0")  # its scrolling is reachable by keyboard
    block.get_by_test_id("copy-code").click()
    expect(block.get_by_test_id("copy-code")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()").startswith("def greet(name: str) -> str:")
    answer.get_by_test_id("copy-answer").click()
    assert "| Planet | Moons | Rings |" in page.evaluate("navigator.clipboard.readText()")


def test_dark_mode_follows_the_system_and_the_toggle(page: Page, server: str):
    page.emulate_media(color_scheme="dark")
    ChatPage.open(page, server)
    background = "getComputedStyle(document.documentElement).backgroundColor"
    dark = page.evaluate(background)
    assert dark == "rgb(15, 17, 21)", dark
    toggle = page.get_by_test_id("theme-toggle")
    expect(toggle).to_have_text("Theme: system")
    toggle.click()  # light, whatever the system says
    expect(toggle).to_have_text("Theme: light")
    assert page.evaluate(background) == "rgb(247, 247, 248)"
    page.reload()  # the choice is kept
    assert page.evaluate(background) == "rgb(247, 247, 248)"
    page.get_by_test_id("theme-toggle").click()
    expect(page.get_by_test_id("theme-toggle")).to_have_text("Theme: dark")
    page.emulate_media(color_scheme="light")
    assert page.evaluate(background) == dark


def test_a_deletion_asks_first_and_can_be_undone(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.ask("a conversation to keep")
    chat.wait_until_answered()
    delete = page.get_by_role("button", name="Delete conversation “a conversation to keep”")
    delete.click()
    page.get_by_test_id("confirm-delete").get_by_role("button", name="Cancel").click()
    expect(chat.conversations).to_have_count(1)

    delete.click()
    page.get_by_test_id("confirm-delete-button").click()
    expect(chat.conversations).to_have_count(0)
    expect(page.get_by_role("heading", name="How can I help?")).to_be_visible()  # it was open
    page.get_by_test_id("undo-delete").click()
    expect(chat.conversations).to_have_text(["a conversation to keep"])
    expect(chat.user_messages.get_by_test_id("bubble")).to_have_text(["a conversation to keep"])  # opened again

    delete.click()
    page.get_by_test_id("confirm-delete-button").click()
    expect(page.get_by_test_id("deleted")).to_be_hidden(timeout=10_000)  # the undo time is over
    page.reload()
    expect(chat.conversations).to_have_count(0)


@pytest.mark.parametrize("size", SIZES)
def test_no_wcag_violations_on_the_welcome_and_a_rich_conversation(browser: Browser, server: str, size):
    width, height = SIZES[size]
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        page.set_default_timeout(15_000)
        chat = ChatPage.open(page, server)
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            assert violations(page) == [], f"the welcome screen, {scheme}"
        for question in ("show me markdown", "calculate (17 * 23) + 4", "think about tide pools"):
            chat.ask(question)
            chat.wait_until_answered()
        expect(chat.assistant.get_by_test_id("reasoning")).to_be_visible()
        chat.tool_cards.first.locator("summary").click()  # open: its arguments and result too
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            found = violations(page)
            assert found == [], f"a conversation with code, a table, a tool and reasoning, {scheme}: {found}"
    finally:
        context.close()


def test_copy_says_copied_only_when_it_copied_even_without_the_clipboard_api(page: Page, server: str):
    """A plain-HTTP address on a network has no Clipboard API: the copy command is used, and when that fails
    too the button says so instead of "Copied"."""
    page.add_init_script(
        "Object.defineProperty(navigator, 'clipboard', {value: undefined});"
        "window.copyWorks = true;"
        "document.execCommand = (command) => {"
        "  window.copied = document.activeElement.value; return command === 'copy' && window.copyWorks; };"
    )
    chat = ChatPage.open(page, server)
    chat.ask("show me markdown")
    chat.wait_until_answered()
    copy = chat.assistant.get_by_test_id("copy-answer")
    copy.click()
    expect(copy).to_have_text("Copied")
    copied = page.evaluate("window.copied")
    assert copied.startswith("Here") or copied[:1].strip(), "no blank lines before the answer"
    assert "| Planet | Moons | Rings |" in copied
    page.evaluate("window.copyWorks = false")
    page.wait_for_timeout(1_600)  # "Copied" goes after a moment
    copy.click()
    expect(copy).to_have_text("Could not copy")


def test_focus_stays_where_the_person_moved_it_when_an_answer_ends(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.ask("count to 40")
    search = page.get_by_test_id("search")
    search.click()
    page.keyboard.type("coun")
    chat.wait_until_answered()
    expect(search).to_be_focused()
    expect(search).to_have_value("coun")
    expect(chat.box).to_have_value("")


def test_a_phone_has_one_bar_on_top_with_the_conversations_header_in_it(browser: Browser, server: str):
    page = browser.new_context(viewport={"width": 390, "height": 780}).new_page()
    chat = ChatPage.open(page, server)
    chat.ask("hello there")
    chat.wait_until_answered()
    bar = page.locator("header.topbar")
    expect(bar.get_by_test_id("share")).to_be_visible()
    expect(bar.get_by_role("button", name="+ New chat")).to_be_visible()
    (header,) = page.locator(".chat-header").all()
    top, inner = bar.bounding_box(), header.bounding_box()
    assert inner["y"] >= top["y"] and inner["y"] + inner["height"] <= top["y"] + top["height"], "one row, not two"
    page.set_viewport_size({"width": 1200, "height": 800})  # wider: the header goes back above the conversation
    expect(page.locator(".chat > .chat-header").get_by_test_id("share")).to_be_visible()


def test_the_phone_drawer_takes_the_focus_and_escape_closes_it(browser: Browser, server: str):
    page = browser.new_context(viewport={"width": 390, "height": 780}).new_page()
    ChatPage.open(page, server)
    menu = page.get_by_test_id("menu")
    menu.click()
    expect(page.get_by_test_id("search")).to_be_focused()
    page.keyboard.press("Escape")
    expect(menu).to_have_attribute("aria-expanded", "false")
    expect(menu).to_be_focused()
    page.context.close()


def test_small_things_people_notice(page: Page, server: str):
    """A rename kept on click-away, an unchanged edit that makes no version, right-to-left text in its own
    direction, a long paste collapsed, a heading for the conversation, and no console error on load."""
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    chat = ChatPage.open(page, server)
    chat.ask("שלום, מה שלומך?")
    chat.wait_until_answered()
    expect(chat.user_messages.first.locator("p.plain")).to_have_attribute("dir", "auto")
    expect(chat.assistant.get_by_test_id("answer-text").first).to_have_attribute("dir", "auto")
    expect(page.locator("h1")).to_have_count(1)

    first = chat.user_messages.first
    first.hover()
    first.get_by_test_id("edit-message").click()
    page.get_by_test_id("edit-text").press("Enter")  # the same text: nothing to answer again
    expect(first.get_by_test_id("version-number")).to_have_count(0)
    expect(chat.assistant).to_have_count(1)

    chat.conversations.first.hover()
    page.get_by_role("button", name=re.compile("^Rename conversation")).click()
    page.get_by_role("textbox", name=re.compile("^New title")).fill("Kept by a click away")
    page.get_by_test_id("search").click()
    expect(chat.conversations.first).to_have_text("Kept by a click away")

    chat.ask("\n".join(f"line {n}" for n in range(15)))
    chat.wait_until_answered()
    pasted = chat.user_messages.last
    expect(pasted.locator("p.plain.collapsed")).to_have_count(1)
    pasted.get_by_role("button", name="Show more").click()
    expect(pasted.locator("p.plain.collapsed")).to_have_count(0)
    assert not errors, errors


def test_an_opened_conversation_never_shows_its_raw_markdown(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.ask("show me markdown")
    chat.wait_until_answered()
    page.add_init_script(
        "window.rawSeen = false;"
        "new MutationObserver(() => {"
        "  if (document.body?.innerText.includes('| Planet |')) window.rawSeen = true;"
        "}).observe(document, {subtree: true, childList: true, characterData: true});"
    )
    page.reload()
    expect(chat.assistant.get_by_role("table")).to_have_count(1)
    assert page.evaluate("window.rawSeen") is False, "the raw Markdown showed before the renderer"


def test_the_newest_message_stays_in_view_when_the_keyboard_shrinks_the_phone_screen(browser: Browser, server: str):
    page = browser.new_context(viewport={"width": 390, "height": 780}).new_page()
    chat = ChatPage.open(page, server)
    chat.ask("show me markdown")  # an answer taller than the screen
    chat.wait_until_answered()
    end = chat.assistant.last.get_by_test_id("message-meta")
    expect(end).to_be_in_viewport()
    page.set_viewport_size({"width": 390, "height": 420})  # what the on-screen keyboard leaves
    expect(end).to_be_in_viewport()
    page.context.close()


def test_a_long_conversation_paints_only_the_messages_near_the_screen(page: Page, server: str):
    """Every message stays in the page (find-in-page, screen readers); the bubbles far from the screen are skipped
    by layout and paint (`content-visibility: auto`), so a long thread does not slow the streaming answer. What is
    drawn is checked by axe as it is, in both themes."""
    chat = ChatPage.open(page, server)
    conversation_id = page.evaluate("crypto.randomUUID()")
    said = "Every message stays in the page, however far above the screen it is. " * 4
    for turn in range(12):  # long questions, two-token answers: a tall thread, quickly made
        body = {
            "id": conversation_id,
            "messages": [{"role": "user", "parts": [{"type": "text", "text": f"hello {turn}. {said}count to 2"}]}],
        }
        assert page.request.post(f"{server}/api/chat", data=body).ok
    page.goto(f"{server}/?c={conversation_id}")
    expect(chat.user_messages).to_have_count(12)
    chat.ask("hello again")
    chat.wait_until_answered()
    first, last = chat.messages.first, chat.messages.last
    drawn = "message => message.querySelector('.bubble > *').checkVisibility({contentVisibilityAuto: true})"
    assert not first.evaluate(drawn), "far above the screen: skipped"
    assert last.evaluate(drawn)
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        found = violations(page)
        assert found == [], f"a long conversation, {scheme}: {found}"
    first.scroll_into_view_if_needed()
    expect(first).to_be_in_viewport()
    expect(first).to_contain_text("hello 0")
    for _ in range(50):  # drawn at the next frame once near (the page's CSP keeps wait_for_function out)
        if first.evaluate(drawn):
            break
        page.wait_for_timeout(50)
    assert first.evaluate(drawn), "drawn once near the screen"
