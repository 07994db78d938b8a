"""What the page survives: a host name without a secure context, a reload or another conversation mid-answer
with the server's default settings, a new message while a tool call waits for approval, and a server that
goes down mid-answer."""

from __future__ import annotations

import re
import signal

from chat_page import ChatPage
from launch import PLAIN_HTTP_HOST
from playwright.sync_api import Page, expect
from threadline_testing.ports import free_port
from threadline_testing.processes import start_threadline


def test_the_page_works_over_plain_http_on_a_name_that_is_not_localhost(page: Page, server: str):
    address = server.replace("127.0.0.1", PLAIN_HTTP_HOST)
    chat = ChatPage.open(page, address)
    assert page.evaluate("window.isSecureContext") is False, "no secure context: no crypto.randomUUID"
    expect(page.get_by_role("heading", name="How can I help?")).to_be_visible()
    chat.ask("hello over plain http")
    chat.wait_until_answered()
    expect(chat.assistant).to_contain_text("hello over plain http")
    page.get_by_role("button", name="+ New chat").click()
    expect(page.get_by_role("heading", name="How can I help?")).to_be_visible()


def test_a_reload_or_another_conversation_mid_answer_does_not_stop_it(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.ask("count to 120")
    expect(chat.assistant).to_contain_text("5 6 7")
    page.reload()  # CHAT_ON_DISCONNECT is the default (cancel): the page asks for its answers to go on
    expect(chat.assistant.get_by_test_id("answer-text")).to_contain_text("118 119 120", timeout=20_000)
    chat.wait_until_answered()
    expect(chat.assistant).not_to_contain_text("stopped")

    chat.ask("count to 100")
    expect(chat.assistant).to_contain_text("5 6 7")
    first = page.url
    page.get_by_role("button", name="+ New chat").click()
    expect(page.get_by_role("heading", name="How can I help?")).to_be_visible()
    page.goto(first)
    expect(chat.assistant.get_by_test_id("answer-text")).to_contain_text("98 99 100", timeout=20_000)
    chat.wait_until_answered()
    expect(chat.assistant).not_to_contain_text("stopped")


def test_a_new_message_while_a_tool_waits_for_approval_says_on_the_card_that_it_declined_it(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.ask("delete conversation nothing-here")
    card = chat.tool_cards.last
    expect(card.get_by_test_id("tool-state")).to_have_text("Needs your approval")
    chat.wait_until_answered()  # the card shows before the stream has closed; Enter does nothing until then
    expect(page.get_by_test_id("approval-waits")).to_contain_text("a message sent here declines it")
    expect(page.get_by_role("button", name="Regenerate")).to_have_count(0)  # an answer that waits is not done
    chat.ask("never mind, hello")
    expect(card.get_by_test_id("tool-state")).to_have_text("Declined")
    expect(page.get_by_test_id("approval-waits")).to_have_count(0)
    expect(card).to_contain_text(re.compile("superseded by a new message"))
    chat.wait_until_answered()
    expect(chat.assistant).to_contain_text("never mind, hello")  # the new message is answered
    expect(page.get_by_role("alert")).to_have_count(0)
    page.reload()
    expect(chat.tool_cards.last).to_contain_text("superseded by a new message")


def test_after_a_broken_stream_retry_while_the_server_is_down_keeps_the_partial_answer(
    page: Page, e2e_database, tmp_path_factory
):
    data_dir, port = tmp_path_factory.mktemp("down"), free_port()
    server = start_threadline(e2e_database, data_dir, port, CHAT_DEMO_TOKEN_DELAY_MS="30")
    try:
        chat = ChatPage.open(page, f"http://127.0.0.1:{port}")
        chat.ask("count to 400")
        expect(chat.assistant).to_contain_text("5 6 7")
        server.send_signal(signal.SIGKILL)  # the stream breaks mid-answer
        server.wait(timeout=30)
        banner = page.get_by_role("alert")
        expect(banner).to_have_count(1)
        shown = chat.assistant.get_by_test_id("answer-text").inner_text()
        page.get_by_role("button", name="Retry").click()  # the server is still down
        expect(banner).to_have_count(1)
        expect(banner).to_contain_text("cannot be reached")
        expect(chat.assistant.get_by_test_id("answer-text")).to_contain_text(shown)
        server = start_threadline(e2e_database, data_dir, port, CHAT_DEMO_TOKEN_DELAY_MS="0")
        page.get_by_role("button", name="Retry").click()
        chat.wait_until_answered()
        expect(chat.assistant).to_contain_text("398 399 400")
        expect(banner).to_have_count(0)  # nothing stays behind once it works again
    finally:
        if server.poll() is None:
            server.terminate()
            server.wait(timeout=30)
