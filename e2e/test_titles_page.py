"""A new conversation is named by its model after the first answer: the sidebar and the browser tab show the
title as soon as the answer brings it, and after a reload."""

from __future__ import annotations

from chat_page import ChatPage
from launch import threadline_server
from playwright.sync_api import Page, expect


def test_the_first_answer_names_the_conversation(page: Page, e2e_database, tmp_path_factory):
    with threadline_server(e2e_database, tmp_path_factory.mktemp("titles")) as server:
        chat = ChatPage.open(page, server)
        chat.ask("Tell me about Lisbon in May")
        expect(chat.conversations.first).to_have_text("Tell me about Lisbon in May")  # listed at once
        chat.wait_until_answered()
        expect(chat.conversations.first).to_have_text("Lisbon in May")
        expect(page).to_have_title("Lisbon in May · threadline")
        page.reload()
        expect(chat.conversations.first).to_have_text("Lisbon in May")
