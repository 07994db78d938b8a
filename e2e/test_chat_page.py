"""The chat page in real Chromium against the real server: one test per behaviour a user relies on."""

from __future__ import annotations

import json
import re

import pytest
from chat_page import ChatPage
from launch import RESULTS, threadline_server
from playwright.sync_api import Page, expect
from threadline_testing import standins


def test_an_empty_conversation_welcomes_the_user(page: Page, server: str):
    chat = ChatPage.open(page, server)
    expect(page.get_by_role("heading", name="How can I help?")).to_be_visible()
    expect(chat.send_button).to_be_disabled()
    expect(page.get_by_text("No conversations yet.")).to_be_visible()


def test_answers_stream_in_after_a_thinking_indicator(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.record("thinking", "answer-text")
    chat.ask("count to 40")
    expect(chat.assistant).to_contain_text("1 2 3")
    expect(chat.stop_button).to_be_visible()  # still streaming: the text came in pieces
    chat.wait_until_answered()
    expect(chat.assistant).to_contain_text("39 40")
    seen = chat.seen()
    assert "Thinking…" in seen, "the indicator showed before the first token"
    partial = [text for text in seen if text.startswith("1 2") and "40" not in text]
    assert partial, "text appeared incrementally"
    expect(chat.thinking).to_have_count(0)


def test_user_right_assistant_left_each_with_a_timestamp(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.ask("hello there")
    chat.wait_until_answered()
    user = chat.user_messages.last
    answer = chat.assistant
    expect(user).to_contain_text("hello there")
    expect(answer).to_contain_text("You said: “hello there”")
    assert user.bounding_box()["x"] > answer.bounding_box()["x"] + 100
    user_color = user.get_by_test_id("bubble").evaluate("e => getComputedStyle(e).backgroundColor")
    answer_color = answer.get_by_test_id("bubble").evaluate("e => getComputedStyle(e).backgroundColor")
    assert user_color != answer_color
    for message in (user, answer):
        expect(message.locator("time")).to_have_text(re.compile(r"\d{1,2}:\d{2}"))


def test_markdown_renders_lists_code_and_links_but_never_raw_html(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.ask(
        'look\n\n- apples\n- pears\n\n```\nprint("hi")\n```\n\n[docs](https://example.com) '
        '<img src=x onerror="window.pwned=1"> **bold**',
    )
    chat.wait_until_answered()
    answer = chat.assistant
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
    chat = ChatPage(page)
    chat.ask("![the secret](http://127.0.0.1:9/leak.png?q=secret)")
    chat.wait_until_answered()
    link = chat.assistant.get_by_role("link", name="Image: the secret")
    expect(link).to_have_attribute("href", "http://127.0.0.1:9/leak.png?q=secret")
    expect(chat.assistant.locator("img")).to_have_count(0)
    assert requested == []


def test_tool_calls_are_cards_that_expand_to_arguments_and_result(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.ask("calculate 6*7")
    chat.wait_until_answered()
    card = chat.tool_cards
    expect(card).to_have_count(1)
    expect(card.get_by_test_id("tool-name")).to_have_text("calculator")
    expect(card.get_by_test_id("tool-state")).to_have_text("Done")
    expect(card.get_by_text("Arguments")).not_to_be_visible()  # collapsed by default
    card.locator("summary").click()
    expect(card.locator("pre").first).to_contain_text('"expression": "6*7"')
    expect(card.locator("pre").last).to_have_text("42")
    text_after = chat.assistant.get_by_test_id("answer-text")
    expect(text_after).to_contain_text("returned 42")
    card_box, text_box = card.bounding_box(), text_after.bounding_box()
    assert card_box["y"] < text_box["y"], "the card sits where the call happened, before the answer text"


def test_a_slow_tool_shows_its_progress_on_its_card_until_it_is_done(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.record("tool-progress")
    chat.ask('use the slow tool with {"seconds": 2}')
    card = chat.tool_cards
    expect(card.get_by_test_id("tool-state")).to_have_text("Running…")
    expect(card.get_by_test_id("tool-spinner")).to_be_visible()
    expect(card.get_by_test_id("tool-progress")).to_contain_text(re.compile(r"step \d+ of 20 \d+%"))
    chat.wait_until_answered()
    expect(card.get_by_test_id("tool-state")).to_have_text("Done")
    expect(card.get_by_test_id("tool-spinner")).to_have_count(0)
    expect(card.get_by_test_id("tool-progress")).to_have_count(0)
    card.locator("summary").click()
    expect(card.locator("pre").last).to_have_text("waited 2 s")
    seen = chat.seen()
    assert len(set(seen)) >= 3, seen  # it moved, step by step


def test_the_message_box_grows_and_enter_sends_while_shift_enter_breaks_lines(page: Page, server: str):
    chat = ChatPage.open(page, server)
    box = chat.box
    send = chat.send_button
    box.fill("   \n  ")
    expect(send).to_be_disabled()
    box.press("Enter")
    expect(chat.messages).to_have_count(0)  # whitespace is not sent
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
    expect(chat.user_messages).to_contain_text("fourth")
    chat.wait_until_answered()
    assert box.input_value() == ""


def test_stop_ends_the_answer_keeps_what_arrived_and_the_server_saves_it(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.ask("count to 400")
    box = chat.box
    expect(chat.send_button).to_have_count(0)
    expect(chat.assistant).to_contain_text("5 6 7")
    box.fill("the next question")  # written while the answer streams; Enter does not send it yet
    box.press("Enter")
    expect(chat.user_messages).to_have_count(1)
    chat.stop_button.click()
    chat.wait_until_answered()
    expect(box).to_have_value("the next question")
    shown = chat.assistant.get_by_test_id("answer-text").inner_text()
    assert "400" not in shown
    expect(chat.assistant).to_contain_text("stopped")
    expect(chat.assistant.get_by_test_id("rating")).to_have_count(0)  # a partial answer is not rated
    conversation_id = page.url.split("?c=")[1]
    for _ in range(100):  # the server saves the partial answer once it sees the connection close
        saved = page.request.get(f"{server}/api/conversations/{conversation_id}").json()["messages"]
        if saved[-1]["metadata"].get("interrupted"):
            break
        page.wait_for_timeout(100)
    page.reload()
    expect(chat.assistant.get_by_test_id("answer-text")).to_contain_text(shown[:20])
    expect(chat.assistant).to_contain_text("stopped")


def test_a_reload_restores_the_conversation_from_the_url(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.ask("calculate 2+3")
    chat.wait_until_answered()
    assert re.search(r"\?c=[0-9a-f]{32}$", page.url)
    page.reload()
    expect(chat.user_messages).to_have_text(re.compile("calculate 2\\+3"))
    expect(chat.tool_cards.get_by_test_id("tool-state")).to_have_text("Done")
    expect(chat.assistant).to_contain_text("returned 5")


def test_the_sidebar_lists_opens_starts_and_deletes_conversations(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.ask("first topic")
    chat.wait_until_answered()
    first_url = page.url
    page.get_by_role("button", name="+ New chat").click()
    expect(page.get_by_role("heading", name="How can I help?")).to_be_visible()
    chat.ask("second topic")
    chat.wait_until_answered()
    items = chat.conversations
    expect(items).to_have_text(["second topic", "first topic"])  # most recent first
    items.filter(has_text="first topic").click()
    expect(chat.user_messages.get_by_test_id("bubble")).to_have_text(["first topic"])
    assert page.url == first_url
    page.get_by_role("button", name="Delete conversation “second topic”").click()
    page.get_by_test_id("confirm-delete-button").click()
    expect(items).to_have_text(["first topic"])
    page.go_back()  # the deleted conversation's URL now opens empty
    page.goto(first_url)
    expect(chat.user_messages.get_by_test_id("bubble")).to_have_text(["first topic"])


def test_the_page_works_with_the_keyboard_alone(page: Page, server: str):
    chat = ChatPage.open(page, server)
    page.keyboard.press("Tab")  # from the message box (focused on load) into… wherever Tab leads
    chat.box.focus()
    page.keyboard.type("keyboard only")
    page.keyboard.press("Enter")
    chat.wait_until_answered()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    focused = page.evaluate("document.activeElement.getAttribute('aria-label') || document.activeElement.textContent")
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert focused and outline != "none", "a focused control has a name and is visibly marked"
    page.get_by_role("button", name="+ New chat").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="How can I help?")).to_be_visible()
    chat.conversations.first.focus()
    page.keyboard.press("Enter")
    expect(chat.user_messages.get_by_test_id("bubble")).to_have_text(["keyboard only"])
    expect(chat.box).to_be_visible()


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
    chat = ChatPage.open(page, failing_model_server)
    chat.ask("break after 3")
    banner = page.get_by_role("alert")
    expect(banner).to_contain_text("Connection failed")
    expect(chat.assistant).to_contain_text("word0 word1 word2")  # what arrived stays
    expect(chat.assistant.get_by_test_id("message-meta")).to_contain_text("interrupted")
    page.get_by_role("button", name="+ New chat").click()
    chat.ask("flaky")
    expect(banner).to_contain_text("unavailable right now")
    page.get_by_role("button", name="Retry").click()
    expect(chat.assistant).to_contain_text("Echo: flaky")
    expect(banner).to_have_count(0)
    expect(chat.user_messages).to_have_count(1)


def test_too_many_requests_says_when_to_try_again(page: Page, e2e_database, tmp_path_factory):
    with threadline_server(e2e_database, tmp_path_factory.mktemp("limited"), CHAT_RATE_LIMIT="2/minute") as url:
        chat = ChatPage.open(page, url)
        for text in ("one", "two"):
            chat.ask(text)
            chat.wait_until_answered()
        chat.ask("three")
        banner = page.get_by_role("alert")
        expect(banner).to_have_text(re.compile(r"Too many requests — try again in \d+ s\.\s*Retry"))
        expect(page.get_by_role("button", name="Retry")).to_be_disabled()  # until the wait is over
        expect(chat.user_messages.last.get_by_test_id("not-sent")).to_be_visible()
        first = int(re.search(r"in (\d+) s", banner.inner_text()).group(1))
        expect(banner).not_to_contain_text(f"in {first} s", timeout=5_000)  # it counts down
        page.reload()  # the refusal is gone with the page; the wait is not
        waiting = re.compile(r"Too many requests — you can send again in \d+ s\.")
        expect(page.get_by_test_id("rate-limited")).to_have_text(waiting)
        expect(chat.box).to_be_disabled()


def test_a_running_tool_shows_as_running_then_failed_when_the_answer_times_out(page: Page, failing_model_server: str):
    chat = ChatPage.open(page, failing_model_server)
    chat.ask("stall in tool")
    card = chat.tool_cards
    expect(card.get_by_test_id("tool-state")).to_have_text("Running…")
    expect(card.get_by_test_id("tool-name")).to_have_text("calculator")
    expect(card.get_by_test_id("tool-state")).to_have_text("Failed", timeout=10_000)
    expect(page.get_by_role("alert")).to_contain_text("took too long")
    card.locator("summary").click()
    expect(card.locator("pre").last).to_contain_text("took too long")


def test_on_a_phone_only_the_messages_scroll_and_the_header_stays_in_sight(page: Page, server: str):
    page.set_viewport_size({"width": 390, "height": 800})
    chat = ChatPage.open(page, server)
    for _ in range(2):
        chat.ask("count to 120")
        chat.wait_until_answered()
    # Waited for, not read once: on a busy machine the last answer's layout may still be settling.
    page.wait_for_function("document.scrollingElement.scrollHeight <= window.innerHeight")  # the page never scrolls
    expect(page.get_by_role("button", name="+ New chat")).to_be_in_viewport()
    expect(chat.box).to_be_in_viewport()


def test_an_answer_is_rated_and_the_rating_survives_a_reload(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.ask("hello there")
    chat.wait_until_answered()
    up, down = chat.assistant.get_by_test_id("thumb-up"), chat.assistant.get_by_test_id("thumb-down")
    up.click()
    expect(up).to_have_attribute("aria-pressed", "true")
    down.click()
    expect(down).to_have_attribute("aria-pressed", "true")
    expect(up).to_have_attribute("aria-pressed", "false")
    comment = chat.assistant.get_by_test_id("rating-comment-input")
    expect(comment).to_be_focused()
    comment.fill("It only repeated me.")
    chat.assistant.get_by_test_id("rating-comment-send").click()
    expect(chat.assistant.get_by_test_id("rating-comment")).to_have_text("“It only repeated me.”")
    page.reload()
    expect(chat.assistant.get_by_test_id("thumb-down")).to_have_attribute("aria-pressed", "true")
    expect(chat.assistant.get_by_test_id("rating-comment")).to_have_text("“It only repeated me.”")
    chat.assistant.get_by_test_id("thumb-down").click()  # pressed again: the rating is taken back
    expect(chat.assistant.get_by_test_id("thumb-down")).to_have_attribute("aria-pressed", "false")
    page.reload()
    expect(chat.assistant.get_by_test_id("thumb-down")).to_have_attribute("aria-pressed", "false")
    expect(chat.assistant.get_by_test_id("rating-comment")).to_have_count(0)


def demo_and_standin(standin: standins.StandIn) -> str:
    """CHAT_PROFILES with two models: the demo model (the default) and the OpenAI stand-in."""
    return json.dumps(
        [
            {"id": "demo", "label": "Demo model", "provider": "demo", "model": "demo", "default": True},
            {
                "id": "gpt",
                "label": "Stand-in GPT",
                "provider": "custom",
                "model": "gpt-standin",
                "base_url": standin.base_url,
            },
        ]
    )


@pytest.fixture(scope="module")
def two_model_server(e2e_database, tmp_path_factory):
    """threadline with two profiles: the demo model (the default) and the OpenAI stand-in."""
    standin = standins.start("openai")
    with threadline_server(
        e2e_database, tmp_path_factory.mktemp("profiles"), CHAT_PROFILES=demo_and_standin(standin)
    ) as url:
        yield url
    standin.stop()


def test_a_new_conversation_picks_its_model_and_each_answer_names_it(page: Page, two_model_server: str):
    chat = ChatPage.open(page, two_model_server)
    picker = page.get_by_label("Model")
    expect(picker).to_have_value("demo")
    picker.select_option(label="Stand-in GPT")
    chat.ask("hello")
    chat.wait_until_answered()
    expect(chat.assistant).to_contain_text("Echo: hello (user messages seen: 1)")
    expect(chat.assistant.get_by_test_id("answer-model")).to_have_text(" · Stand-in GPT")
    chat.ask("again")  # named no more: the conversation keeps its model
    chat.wait_until_answered()
    expect(chat.assistant).to_contain_text("Echo: again (user messages seen: 2)")
    page.reload()
    expect(chat.assistant.get_by_test_id("answer-model")).to_have_text(" · Stand-in GPT")
    page.get_by_role("button", name="+ New chat").click()
    expect(page.get_by_label("Model")).to_have_value("demo")


def test_the_models_thinking_shows_above_the_answer_collapsed_once_it_answers(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.record("thinking", "reasoning-summary")
    chat.ask("think about tea")
    chat.wait_until_answered()
    thinking = chat.assistant.get_by_test_id("reasoning")
    expect(thinking.locator("summary")).to_have_text(re.compile(r"^Thought for \d+ s$"))
    expect(thinking).not_to_have_attribute("open", "")
    assert " Thinking…" in chat.seen(), "the reasoning said so while the model thought"
    expect(chat.thinking).to_have_count(0)
    thinking.locator("summary").click()
    expect(thinking).to_contain_text("The user wants me to think about tea")
    page.reload()
    expect(chat.assistant.get_by_test_id("reasoning")).to_contain_text("The user wants me to think about tea")
    box = chat.assistant.get_by_test_id("bubble").bounding_box()
    assert box and thinking.bounding_box()["y"] < chat.assistant.get_by_test_id("answer-text").bounding_box()["y"]


@pytest.fixture(scope="module")
def ab_server(e2e_database, tmp_path_factory):
    """threadline comparing two profiles on every message: the demo model (A) and the OpenAI stand-in (B)."""
    standin = standins.start("openai")
    with threadline_server(
        e2e_database,
        tmp_path_factory.mktemp("ab"),
        CHAT_PROFILES=demo_and_standin(standin),
        CHAT_AB_PROFILES="demo,gpt",
    ) as url:
        yield url
    standin.stop()


def test_two_answers_side_by_side_a_vote_reveals_the_models_and_the_chosen_one_goes_on(page: Page, ab_server: str):
    chat = ChatPage.open(page, ab_server)
    chat.ask("hello")
    comparison = page.get_by_test_id("comparison")
    expect(comparison.get_by_role("heading")).to_have_text(["Response A", "Response B"])
    expect(page.get_by_test_id("response-b")).to_contain_text("Echo: hello (user messages seen: 1)")
    expect(page.get_by_test_id("response-a")).to_contain_text("hello")
    expect(comparison).not_to_contain_text("Stand-in GPT")  # the models stay unnamed until the vote
    expect(comparison.get_by_test_id("thumb-up")).to_have_count(0)
    expect(chat.box).to_be_disabled()
    expect(chat.box).to_have_attribute("placeholder", "Vote above to go on")

    page.get_by_test_id("vote-B").click()
    result = page.get_by_test_id("comparison-result")
    expect(result).to_have_text("You preferred Response B (Stand-in GPT) over Response A (Demo model).")
    expect(comparison).to_have_count(0)
    expect(chat.assistant).to_contain_text("Echo: hello (user messages seen: 1)")
    expect(chat.assistant.get_by_test_id("answer-model")).to_have_text(" · Stand-in GPT")
    expect(chat.box).to_be_enabled()

    page.reload()
    expect(result).to_have_text("You preferred Response B (Stand-in GPT) over Response A (Demo model).")
    expect(chat.assistant).to_contain_text("Echo: hello (user messages seen: 1)")
    chat.ask("and again")
    expect(page.get_by_test_id("response-b")).to_contain_text("Echo: and again (user messages seen: 2)")
    page.get_by_test_id("vote-tie").click()
    expect(result.last).to_contain_text("A tie between Response A (Demo model) and Response B (Stand-in GPT)")


def a_conversation_to_delete(page: Page, chat: ChatPage, topic: str) -> str:
    chat.ask(topic)
    chat.wait_until_answered()
    conversation_id = re.search(r"[?&]c=([\w-]+)", page.url).group(1)
    page.get_by_role("button", name="+ New chat").click()
    return conversation_id


def test_a_tool_that_needs_approval_waits_for_approve_or_deny(page: Page, server: str):
    chat = ChatPage.open(page, server)
    doomed = a_conversation_to_delete(page, chat, "doomed topic")
    kept = a_conversation_to_delete(page, chat, "kept topic")
    chat.ask(f"delete conversation {kept}")
    card = chat.tool_cards.last
    expect(card.get_by_test_id("tool-state")).to_have_text("Needs your approval")
    expect(card).to_contain_text(kept)  # the arguments are in sight before anything runs
    card.get_by_label("Reason (optional, sent with a denial)").fill("I still need it")
    card.get_by_test_id("deny").click()
    expect(card.get_by_test_id("tool-state")).to_have_text("Declined")
    expect(chat.assistant).to_contain_text("declined")
    chat.wait_until_answered()

    chat.ask(f"delete conversation {doomed}")
    expect(chat.tool_cards.last.get_by_test_id("tool-state")).to_have_text("Needs your approval")
    page.reload()  # the request still waits after a reload, and is answered from there
    card = chat.tool_cards.last
    card.get_by_test_id("approve").click()
    expect(card.get_by_test_id("tool-state")).to_have_text("Done")
    expect(chat.assistant).to_contain_text(f"Deleted the conversation {doomed}")
    chat.wait_until_answered()
    expect(chat.conversations.filter(has_text="doomed topic")).to_have_count(0)
    expect(chat.conversations.filter(has_text="kept topic")).to_have_count(1)


@pytest.fixture(scope="module")
def continuing_server(e2e_database, tmp_path_factory):
    """threadline whose answers run on when their page goes away (CHAT_ON_DISCONNECT=continue)."""
    with threadline_server(e2e_database, tmp_path_factory.mktemp("continue"), CHAT_ON_DISCONNECT="continue") as url:
        yield url


def test_a_reload_mid_answer_picks_the_answer_up_and_it_ends(page: Page, continuing_server: str):
    chat = ChatPage.open(page, continuing_server)
    chat.ask("count to 120")
    expect(chat.assistant).to_contain_text("5 6 7")
    page.reload()
    expect(chat.assistant.get_by_test_id("answer-text")).to_contain_text("118 119 120", timeout=20_000)
    chat.wait_until_answered()
    expect(chat.assistant.get_by_test_id("answer-text")).to_have_count(1)  # one answer, not a second copy
    expect(chat.assistant).not_to_contain_text("stopped")


def test_stop_still_stops_an_answer_that_runs_on_after_a_disconnect(page: Page, continuing_server: str):
    chat = ChatPage.open(page, continuing_server)
    chat.ask("count to 400")
    expect(chat.assistant).to_contain_text("5 6 7")
    chat.stop_button.click()
    chat.wait_until_answered()
    expect(chat.assistant).to_contain_text("stopped")
    page.reload()
    expect(chat.assistant).to_contain_text("stopped")
    assert "400" not in chat.assistant.get_by_test_id("answer-text").inner_text()


def test_a_new_chat_in_another_tab_is_answered_while_the_first_still_streams(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.ask("count to 400")
    expect(chat.assistant).to_contain_text("5 6 7")
    other = ChatPage.open(page.context.new_page(), server)  # a second tab, same visitor, a new conversation
    other.ask("hello from the other tab")
    expect(other.assistant).to_contain_text("hello from the other tab")
    other.wait_until_answered()
    expect(other.banner).to_have_count(0)
    chat.stop_button.click()
    chat.wait_until_answered()


def test_send_anyway_stops_the_answer_running_in_the_same_conversation_in_another_tab(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.ask("hello")
    chat.wait_until_answered()
    other = ChatPage(page.context.new_page())
    # The same conversation, open in a second tab, which asks for an answer still being written when it opens:
    # nothing yet. Waited for, so that the second tab does not pick up the answer asked for next and follow it.
    with other.page.expect_response(lambda response: response.url.endswith("/stream")) as resumed:
        other.page.goto(page.url)
    assert resumed.value.status == 204
    expect(other.user_messages).to_have_count(1)
    chat.ask("count to 400")
    expect(chat.assistant.last).to_contain_text("5 6 7")
    other.ask("hello from the other tab")
    expect(other.banner).to_contain_text("already streaming in this conversation")
    other.page.get_by_role("button", name="Send anyway").click()
    expect(other.assistant.last).to_contain_text("hello from the other tab")
    other.wait_until_answered()
    chat.wait_until_answered()
    expect(chat.assistant.last).to_contain_text("stopped")


def test_the_welcome_offers_example_prompts_and_a_click_sends_one(page: Page, server: str):
    chat = ChatPage.open(page, server)
    examples = page.get_by_test_id("example-prompt")
    expect(examples).to_have_count(5)
    examples.filter(has_text="count to 20").click()
    expect(chat.user_messages.get_by_test_id("bubble")).to_have_text(["count to 20"])
    expect(page.get_by_test_id("streaming-dots")).to_be_visible()  # while the text streams in
    chat.wait_until_answered()
    expect(chat.assistant).to_contain_text("19 20")
    expect(page.get_by_test_id("streaming-dots")).to_have_count(0)


def test_the_welcome_offers_the_configured_prompts_not_the_demo_commands(page: Page, e2e_database, tmp_path_factory):
    starters = '["Plan a sprint", "Draft release notes"]'
    with threadline_server(e2e_database, tmp_path_factory.mktemp("starters"), CHAT_STARTERS=starters) as url:
        ChatPage.open(page, url)
        expect(page.get_by_test_id("example-prompt")).to_have_text(["Plan a sprint", "Draft release notes"])


def test_a_suggested_reply_chip_sends_its_value_and_only_the_last_answer_has_chips(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.ask("calculate 6*7")
    chat.wait_until_answered()
    chips = page.get_by_test_id("suggested-value")
    expect(chips).to_have_text(["Double it", "Count to 5"])
    chips.first.click()
    expect(chat.user_messages.last.get_by_test_id("bubble")).to_have_text("calculate (6*7) * 2")
    chat.wait_until_answered()
    expect(chat.assistant).to_contain_text("84")
    expect(page.get_by_test_id("suggestions")).to_have_count(1)
    page.reload()  # suggestions are kept with the answer
    expect(page.get_by_test_id("suggested-value").first).to_have_text("Double it")


def test_server_and_client_action_buttons(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.ask("hello")
    chat.wait_until_answered()
    actions = page.get_by_test_id("suggested-action")
    expect(actions).to_have_text(["Summarize", "New topic"])  # no chip repeats the answer's own Copy button
    expect(page.get_by_test_id("copy-answer")).to_have_count(1)
    summarize = actions.filter(has_text="Summarize")
    assert "action-primary" in summarize.get_attribute("class")
    actions.filter(has_text="New topic").click()  # the page's own action: a new chat
    expect(page.get_by_role("heading", name="How can I help?")).to_be_visible()
    chat.conversations.first.click()  # back to the conversation
    chat.wait_until_answered()
    summarize = page.get_by_test_id("suggested-action").filter(has_text="Summarize")
    summarize.click()
    expect(chat.user_messages.last.get_by_test_id("bubble")).to_have_text("Summarize our conversation so far.")
    expect(chat.assistant).to_contain_text("In short: you asked “hello”")
    chat.wait_until_answered()
    page.reload()
    expect(chat.user_messages.get_by_test_id("bubble")).to_have_text(["hello", "Summarize our conversation so far."])
    expect(chat.assistant).to_contain_text("In short: you asked “hello”")


def _nothing_off_screen(page: Page) -> None:
    width = page.evaluate("window.innerWidth")
    assert page.evaluate("document.scrollingElement.scrollWidth") <= width, "the page scrolls sideways"
    wide = page.evaluate(
        """w => [...document.querySelectorAll('.bubble, .tool, .suggestions, .composer')]
            .filter(e => e.getBoundingClientRect().right > w + 1).map(e => e.className)""",
        width,
    )
    assert wide == [], wide


def test_the_whole_journey_on_a_phone(page: Page, server: str):
    page.set_viewport_size({"width": 390, "height": 844})
    chat = ChatPage.open(page, server)
    sidebar = page.get_by_test_id("sidebar")
    expect(sidebar).not_to_be_in_viewport()
    expect(page.get_by_test_id("menu")).to_be_in_viewport()
    chat.ask("calculate 2**200")
    chat.wait_until_answered()
    expect(page.get_by_test_id("suggestions")).to_be_in_viewport()
    chat.ask("look\n\n```\n" + "x" * 300 + "\n```")  # a long code line scrolls inside its bubble
    chat.wait_until_answered()
    _nothing_off_screen(page)
    first = page.url
    page.get_by_role("button", name="+ New chat").click()
    chat.ask("count to 400")
    expect(chat.stop_button).to_be_in_viewport()
    expect(chat.box).to_be_in_viewport()
    chat.stop_button.click()
    chat.wait_until_answered()
    expect(chat.assistant).to_contain_text("stopped")
    page.get_by_test_id("menu").click()
    expect(sidebar).to_be_in_viewport()
    expect(chat.conversations).to_have_count(2)
    chat.conversations.last.click()
    expect(sidebar).not_to_be_in_viewport()
    expect(page).to_have_url(first)  # set once its messages are read, after the drawer closed
    expect(chat.tool_cards).to_have_count(1)
    expect(chat.assistant).to_be_in_viewport(ratio=0.1)
    _nothing_off_screen(page)
    expect(chat.box).to_be_in_viewport()
    page.screenshot(path=str(RESULTS / "phone-journey.png"))


def test_a_conversation_is_renamed_in_the_sidebar_and_names_the_tab(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.ask("## Plan a **trip**")
    chat.wait_until_answered()
    expect(chat.conversations.first).to_have_text("Plan a trip")
    expect(page).to_have_title("Plan a trip · threadline")
    page.get_by_role("button", name="Rename conversation “Plan a trip”").click()
    title = page.get_by_label("New title for “Plan a trip”")
    title.fill("Lisbon in May")
    title.press("Enter")
    expect(chat.conversations.first).to_have_text("Lisbon in May")
    expect(page).to_have_title("Lisbon in May · threadline")
    page.reload()
    expect(chat.conversations.first).to_have_text("Lisbon in May")
    page.get_by_role("button", name="Rename conversation “Lisbon in May”").click()
    page.get_by_label("New title for “Lisbon in May”").press("Escape")
    expect(chat.conversations.first).to_have_text("Lisbon in May")


def test_scrolling_up_while_an_answer_streams_stays_put_until_the_button_goes_back_down(page: Page, server: str):
    page.set_viewport_size({"width": 900, "height": 280})
    chat = ChatPage.open(page, server)
    chat.ask("count to 300")
    expect(chat.assistant).to_contain_text("150 151 152", timeout=15_000)  # half of it: 4.5 s unhurried
    log = page.get_by_role("log")
    assert log.evaluate("log => log.scrollHeight > log.clientHeight + 60"), "the answer overflows"
    log.evaluate("log => { log.scrollTop = 0; log.dispatchEvent(new Event('scroll')); }")
    page.wait_for_timeout(2000)  # the answer streams on
    assert log.evaluate("log => log.scrollTop") < 50, "the reader is not pulled back down"
    page.get_by_test_id("scroll-to-bottom").click()
    page.wait_for_function(
        "() => { const log = document.querySelector('[role=log]'); "
        "return log.scrollHeight - log.scrollTop - log.clientHeight < 48; }"
    )
    expect(page.get_by_test_id("scroll-to-bottom")).to_have_count(0)
    chat.stop_button.click()
    chat.wait_until_answered()


def test_a_refused_message_keeps_its_files_on_retry_and_comes_back_after_a_reload(
    page: Page, e2e_database, tmp_path_factory
):
    notes = {"name": "notes.txt", "mimeType": "text/plain", "buffer": b"Shopping list\neggs\n"}
    with threadline_server(e2e_database, tmp_path_factory.mktemp("lossless"), CHAT_RATE_LIMIT="1/10 seconds") as url:
        chat = ChatPage.open(page, url)
        chat.ask("count to 1")  # answered at once: the next message comes well inside the limit's window
        chat.wait_until_answered()
        page.get_by_test_id("file-input").set_input_files([notes])
        expect(page.get_by_role("progressbar")).to_have_count(0)
        chat.ask("what is in this file?")
        expect(page.get_by_role("alert")).to_contain_text("Too many requests")
        expect(page.get_by_role("button", name="Retry")).to_be_enabled(timeout=20_000)
        page.get_by_role("button", name="Retry").click()
        chat.wait_until_answered()  # the next message must come inside the window this opened: 10 s, for a busy CI
        expect(chat.assistant).to_contain_text("notes.txt")  # the model got the file: Retry sent it too
        expect(chat.user_messages.last.get_by_test_id("not-sent")).to_have_count(0)

        page.get_by_test_id("file-input").set_input_files([notes])
        expect(page.get_by_role("progressbar")).to_have_count(0)
        chat.ask("and again?")
        expect(page.get_by_role("alert")).to_contain_text("Too many requests")
        page.reload()  # the refused message was never stored: it comes back into the box, files and all
        expect(page.get_by_test_id("notice")).to_contain_text("not sent")
        expect(chat.box).to_have_value("and again?")
        expect(page.get_by_test_id("pending-file")).to_contain_text("notes.txt")
        page.wait_for_timeout(10_000)  # the rate limit's window
        chat.send_button.click()
        chat.wait_until_answered()
        expect(chat.assistant.last).to_contain_text("notes.txt")


def test_a_draft_is_kept_per_conversation_across_switches_and_reloads(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.ask("first conversation")
    chat.wait_until_answered()
    chat.box.fill("half a thought")
    page.get_by_role("button", name="+ New chat").click()
    expect(chat.box).to_have_value("")
    chat.box.fill("another draft")
    chat.conversations.first.click()
    expect(chat.box).to_have_value("half a thought")
    page.reload()
    expect(chat.box).to_have_value("half a thought")
