"""Edits and regenerated answers on the page: a sent message is edited in place and answered from before it,
an answer is written again, and the version switcher moves between the versions, which stay after a reload and after
the server restarts."""

from __future__ import annotations

from chat_page import ChatPage
from launch import threadline_server
from playwright.sync_api import Page, expect


def versions_of(message) -> str:
    return message.get_by_test_id("version-number").inner_text()


def test_edit_and_regenerate_make_versions_that_survive_a_reload_and_a_restart(
    page: Page, e2e_database, tmp_path_factory
):
    data_dir = tmp_path_factory.mktemp("versions")
    with threadline_server(e2e_database, data_dir) as server:
        chat = ChatPage.open(page, server)
        chat.ask("one")
        chat.wait_until_answered()
        chat.ask("two")
        chat.wait_until_answered()

        second = chat.user_messages.nth(1)
        second.hover()
        second.get_by_test_id("edit-message").click()
        page.get_by_test_id("edit-text").fill("two, edited")
        page.get_by_test_id("edit-send").click()
        chat.wait_until_answered()
        expect(chat.assistant).to_contain_text("You said: \u201ctwo, edited\u201d")
        expect(chat.assistant).to_contain_text("I can see 1 earlier message ")
        expect(chat.user_messages.nth(1).get_by_test_id("version-number")).to_have_text("2/2")

        chat.user_messages.nth(1).get_by_test_id("previous-version").click()
        expect(chat.user_messages.nth(1)).to_contain_text("two")
        expect(chat.user_messages.nth(1).get_by_test_id("version-number")).to_have_text("1/2")
        expect(chat.assistant).to_contain_text("You said: \u201ctwo\u201d")

        chat.assistant.get_by_test_id("regenerate").click()
        chat.wait_until_answered()
        expect(chat.assistant.get_by_test_id("version-number")).to_have_text("2/2")

        page.reload()
        expect(chat.user_messages.nth(1).get_by_test_id("version-number")).to_have_text("1/2")
        expect(chat.assistant.get_by_test_id("version-number")).to_have_text("2/2")
        url = page.url

    with threadline_server(e2e_database, data_dir) as server:  # the same database, a new process
        page.goto(url.replace(url.split("/")[2], server.split("/")[2]))
        chat = ChatPage(page)
        expect(chat.assistant.get_by_test_id("version-number")).to_have_text("2/2")
        chat.assistant.get_by_test_id("previous-version").click()
        expect(chat.assistant.get_by_test_id("version-number")).to_have_text("1/2")
        chat.user_messages.nth(1).get_by_test_id("next-version").click()
        expect(chat.user_messages.nth(1)).to_contain_text("two, edited")
        expect(chat.assistant).to_contain_text("You said: \u201ctwo, edited\u201d")
        expect(chat.assistant.get_by_test_id("versions")).to_have_count(0)
        expect(chat.messages).to_have_count(4)
