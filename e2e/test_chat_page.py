"""The chat page in real Chromium against the real server: one test per behaviour a user relies on."""

from __future__ import annotations

import re

import pytest
from launch import threadline_server
from playwright.sync_api import Page, expect
from threadline_testing import standins

SEND = "Send"


def open_page(page: Page, base_url: str, query: str = "") -> None:
    page.goto(f"{base_url}/{query}")
    expect(page.get_by_label("Message")).to_be_enabled()


def ask(page: Page, text: str) -> None:
    box = page.get_by_label("Message")
    box.fill(text)
    box.press("Enter")


def wait_until_answered(page: Page) -> None:
    expect(page.get_by_role("button", name="Stop")).to_have_count(0)
    expect(page.get_by_label("Message")).to_be_enabled()


def assistant(page: Page):
    return page.locator("article.message.assistant").last


def record(page: Page, selector: str) -> None:
    """Remember every text the elements matching `selector` show, even for a moment."""
    page.evaluate(
        """selector => {
        window.seen = [];
        new MutationObserver(() => document.querySelectorAll(selector).forEach(
            element => window.seen.push(element.textContent))).observe(document.body,
            {subtree: true, childList: true, characterData: true, attributes: true});
    }""",
        selector,
    )


def test_an_empty_conversation_welcomes_the_user(page: Page, server: str):
    open_page(page, server)
    expect(page.get_by_role("heading", name="How can I help?")).to_be_visible()
    expect(page.get_by_role("button", name=SEND)).to_be_disabled()
    expect(page.get_by_text("No conversations yet.")).to_be_visible()


def test_answers_stream_in_after_a_thinking_indicator(page: Page, server: str):
    open_page(page, server)
    record(page, ".thinking, article.message.assistant .markdown")
    ask(page, "count to 40")
    expect(assistant(page)).to_contain_text("1 2 3")
    expect(page.get_by_role("button", name="Stop")).to_be_visible()  # still streaming: the text came in pieces
    wait_until_answered(page)
    expect(assistant(page)).to_contain_text("39 40")
    seen = page.evaluate("window.seen")
    assert "Thinking…" in seen, "the indicator showed before the first token"
    partial = [text for text in seen if text.startswith("1 2") and "40" not in text]
    assert partial, "text appeared incrementally"
    expect(page.locator(".thinking")).to_have_count(0)


def test_user_right_assistant_left_each_with_a_timestamp(page: Page, server: str):
    open_page(page, server)
    ask(page, "hello there")
    wait_until_answered(page)
    user = page.locator("article.message.user").last
    answer = assistant(page)
    expect(user).to_contain_text("hello there")
    expect(answer).to_contain_text("You said: “hello there”")
    assert user.bounding_box()["x"] > answer.bounding_box()["x"] + 100
    user_color = user.locator(".bubble").evaluate("e => getComputedStyle(e).backgroundColor")
    answer_color = answer.locator(".bubble").evaluate("e => getComputedStyle(e).backgroundColor")
    assert user_color != answer_color
    for message in (user, answer):
        expect(message.locator("time")).to_have_text(re.compile(r"\d{1,2}:\d{2}"))


def test_markdown_renders_lists_code_and_links_but_never_raw_html(page: Page, server: str):
    open_page(page, server)
    ask(
        page,
        'look\n\n- apples\n- pears\n\n```\nprint("hi")\n```\n\n[docs](https://example.com) '
        '<img src=x onerror="window.pwned=1"> **bold**',
    )
    wait_until_answered(page)
    answer = assistant(page)
    expect(answer.locator("li")).to_have_text(["apples", "pears"])
    expect(answer.locator("pre code")).to_contain_text('print("hi")')
    link = answer.get_by_role("link", name="docs")
    expect(link).to_have_attribute("href", "https://example.com")
    expect(link).to_have_attribute("rel", "noopener noreferrer")
    expect(answer.locator("strong")).to_have_text("bold")
    expect(answer.locator("img")).to_have_count(0)
    assert page.evaluate("window.pwned") is None


def test_an_image_in_an_answer_is_a_link_and_never_loaded(page: Page, server: str):
    """A prompt-injected answer must not leak the conversation through an image URL the browser fetches."""
    requested = []
    page.on("request", lambda request: requested.append(request.url) if "leak" in request.url else None)
    response = page.goto(server)
    assert "img-src 'self' data:" in response.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    ask(page, "![the secret](http://127.0.0.1:9/leak.png?q=secret)")
    wait_until_answered(page)
    link = assistant(page).get_by_role("link", name="Image: the secret")
    expect(link).to_have_attribute("href", "http://127.0.0.1:9/leak.png?q=secret")
    expect(assistant(page).locator("img")).to_have_count(0)
    assert requested == []


def test_tool_calls_are_cards_that_expand_to_arguments_and_result(page: Page, server: str):
    open_page(page, server)
    ask(page, "calculate 6*7")
    wait_until_answered(page)
    card = page.get_by_test_id("tool-card")
    expect(card).to_have_count(1)
    expect(card.locator(".tool-name")).to_have_text("calculator")
    expect(card.locator(".tool-state")).to_have_text("Done")
    expect(card.get_by_text("Arguments")).not_to_be_visible()  # collapsed by default
    card.locator("summary").click()
    expect(card.locator("pre").first).to_contain_text('"expression": "6*7"')
    expect(card.locator("pre").last).to_have_text("42")
    text_after = assistant(page).locator(".markdown")
    expect(text_after).to_contain_text("returned 42")
    card_box, text_box = card.bounding_box(), text_after.bounding_box()
    assert card_box["y"] < text_box["y"], "the card sits where the call happened, before the answer text"


def test_a_slow_tool_shows_its_progress_on_its_card_until_it_is_done(page: Page, server: str):
    open_page(page, server)
    record(page, ".tool-progress")
    ask(page, 'use the slow tool with {"seconds": 2}')
    card = page.get_by_test_id("tool-card")
    expect(card.locator(".tool-state")).to_have_text("Running…")
    expect(card.locator(".tool-progress")).to_contain_text(re.compile(r"step \d+ of 20 \d+%"))
    wait_until_answered(page)
    expect(card.locator(".tool-state")).to_have_text("Done")
    expect(card.locator(".tool-progress")).to_have_count(0)
    card.locator("summary").click()
    expect(card.locator("pre").last).to_have_text("waited 2 s")
    seen = page.evaluate("window.seen")
    assert len(set(seen)) >= 3, seen  # it moved, step by step


def test_the_message_box_grows_and_enter_sends_while_shift_enter_breaks_lines(page: Page, server: str):
    open_page(page, server)
    box = page.get_by_label("Message")
    send = page.get_by_role("button", name=SEND)
    box.fill("   \n  ")
    expect(send).to_be_disabled()
    box.press("Enter")
    expect(page.locator("article.message")).to_have_count(0)  # whitespace is not sent
    box.fill("")
    height = box.bounding_box()["height"]
    box.type("first line")
    for line in ("second", "third", "fourth"):
        box.press("Shift+Enter")
        box.type(line)
    assert box.input_value() == "first line\nsecond\nthird\nfourth"
    assert box.bounding_box()["height"] > height * 2
    expect(send).to_be_enabled()
    box.press("Enter")
    expect(page.locator("article.message.user")).to_contain_text("fourth")
    wait_until_answered(page)
    assert box.input_value() == ""


def test_stop_ends_the_answer_keeps_what_arrived_and_the_server_saves_it(page: Page, server: str):
    open_page(page, server)
    ask(page, "count to 400")
    box = page.get_by_label("Message")
    expect(box).to_be_disabled()
    expect(page.get_by_role("button", name=SEND)).to_have_count(0)
    expect(assistant(page)).to_contain_text("5 6 7")
    page.get_by_role("button", name="Stop").click()
    wait_until_answered(page)
    shown = assistant(page).locator(".markdown").inner_text()
    assert "400" not in shown
    expect(assistant(page)).to_contain_text("stopped")
    conversation_id = page.url.split("?c=")[1]
    for _ in range(100):  # the server saves the partial answer once it sees the connection close
        saved = page.request.get(f"{server}/api/conversations/{conversation_id}").json()["messages"]
        if saved[-1]["metadata"].get("interrupted"):
            break
        page.wait_for_timeout(100)
    page.reload()
    expect(assistant(page).locator(".markdown")).to_contain_text(shown[:20])
    expect(assistant(page)).to_contain_text("stopped")


def test_a_reload_restores_the_conversation_from_the_url(page: Page, server: str):
    open_page(page, server)
    ask(page, "calculate 2+3")
    wait_until_answered(page)
    assert re.search(r"\?c=[0-9a-f]{32}$", page.url)
    page.reload()
    expect(page.locator("article.message.user")).to_have_text(re.compile("calculate 2\\+3"))
    expect(page.get_by_test_id("tool-card").locator(".tool-state")).to_have_text("Done")
    expect(assistant(page)).to_contain_text("returned 5")


def test_the_sidebar_lists_opens_starts_and_deletes_conversations(page: Page, server: str):
    open_page(page, server)
    ask(page, "first topic")
    wait_until_answered(page)
    first_url = page.url
    page.get_by_role("button", name="+ New chat").click()
    expect(page.get_by_role("heading", name="How can I help?")).to_be_visible()
    ask(page, "second topic")
    wait_until_answered(page)
    items = page.locator("nav .open")
    expect(items).to_have_text(["second topic", "first topic"])  # most recent first
    items.filter(has_text="first topic").click()
    expect(page.locator("article.message.user .bubble")).to_have_text(["first topic"])
    assert page.url == first_url
    page.get_by_role("button", name="Delete conversation “second topic”").click()
    expect(items).to_have_text(["first topic"])
    page.go_back()  # the deleted conversation's URL now opens empty
    page.goto(first_url)
    expect(page.locator("article.message.user .bubble")).to_have_text(["first topic"])


def test_the_page_works_with_the_keyboard_alone(page: Page, server: str):
    open_page(page, server)
    page.keyboard.press("Tab")  # from the message box (focused on load) into… wherever Tab leads
    page.get_by_label("Message").focus()
    page.keyboard.type("keyboard only")
    page.keyboard.press("Enter")
    wait_until_answered(page)
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    focused = page.evaluate("document.activeElement.textContent")
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert focused and outline != "none", "a focused control is visibly marked"
    page.get_by_role("button", name="+ New chat").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="How can I help?")).to_be_visible()
    page.locator("nav .open").first.focus()
    page.keyboard.press("Enter")
    expect(page.locator("article.message.user .bubble")).to_have_text(["keyboard only"])
    for control in ("Message",):
        expect(page.get_by_label(control)).to_be_visible()


@pytest.fixture(scope="module")
def failing_model_server(e2e_database, tmp_path_factory):
    """threadline on the OpenAI stand-in, which fails on request ("fail 500", "break after N", "flaky")."""
    standin = standins.start("openai")
    with threadline_server(
        e2e_database,
        tmp_path_factory.mktemp("failing"),
        CHAT_MODEL_PROVIDER="openai",
        OPENAI_BASE_URL=standin.base_url,
        OPENAI_API_KEY="sk-test",
        CHAT_RATE_LIMIT="1000/minute",
        CHAT_IDLE_TIMEOUT="2",
    ) as url:
        yield url
    standin.stop()


def test_an_error_shows_a_banner_keeps_the_partial_answer_and_retry_works(page: Page, failing_model_server: str):
    open_page(page, failing_model_server)
    ask(page, "break after 3")
    banner = page.get_by_role("alert")
    expect(banner).to_contain_text("Connection failed")
    expect(assistant(page)).to_contain_text("word0 word1 word2")  # what arrived stays
    expect(assistant(page).locator(".meta")).to_contain_text("interrupted")
    page.get_by_role("button", name="+ New chat").click()
    ask(page, "flaky")
    expect(banner).to_contain_text("unavailable right now")
    page.get_by_role("button", name="Retry").click()
    expect(assistant(page)).to_contain_text("Echo: flaky")
    expect(banner).to_have_count(0)
    expect(page.locator("article.message.user")).to_have_count(1)


def test_too_many_requests_says_when_to_try_again(page: Page, e2e_database, tmp_path_factory):
    with threadline_server(e2e_database, tmp_path_factory.mktemp("limited"), CHAT_RATE_LIMIT="2/minute") as url:
        open_page(page, url)
        for text in ("one", "two"):
            ask(page, text)
            wait_until_answered(page)
        ask(page, "three")
        expect(page.get_by_role("alert")).to_have_text(re.compile(r"Too many requests — try again in \d+ s\.\s*Retry"))


def test_a_running_tool_shows_as_running_then_failed_when_the_answer_times_out(page: Page, failing_model_server: str):
    open_page(page, failing_model_server)
    ask(page, "stall in tool")
    card = page.get_by_test_id("tool-card")
    expect(card.locator(".tool-state")).to_have_text("Running…")
    expect(card.locator(".tool-name")).to_have_text("calculator")
    expect(card.locator(".tool-state")).to_have_text("Failed", timeout=10_000)
    expect(page.get_by_role("alert")).to_contain_text("took too long")
    card.locator("summary").click()
    expect(card.locator("pre").last).to_contain_text("took too long")
