"""Signing in on the page (AUTH_ISSUER, AUTH_CLIENT_ID) through a local OpenID Connect provider: the code flow
with PKCE in Chromium, the anonymous conversations kept on the first sign-in, each user's own list, silent
renewal with the refresh token, sign-out back to an anonymous visitor, and a server for signed-in users only."""

from __future__ import annotations

import io
import time
from collections.abc import Iterator

import pytest
from chat_page import ChatPage
from launch import threadline_server
from PIL import Image
from playwright.sync_api import Page, expect
from threadline_testing import oidc

CLIENT_ID = "threadline-page"


@pytest.fixture(scope="module")
def provider() -> Iterator[oidc.Provider]:
    provider = oidc.start()
    provider.access_lifetime = 70  # oidc-client-ts renews a minute before expiry: here after ten seconds
    yield provider
    provider.stop()


def accounts_server(e2e_database: str, tmp_path_factory, provider: oidc.Provider, **env: str):
    return threadline_server(
        e2e_database,
        tmp_path_factory.mktemp("accounts"),
        AUTH_ISSUER=provider.issuer,
        AUTH_AUDIENCE=oidc.AUDIENCE,
        AUTH_CLIENT_ID=CLIENT_ID,
        CHAT_RATE_LIMIT="1000/minute",
        **env,
    )


@pytest.fixture(scope="module")
def server(e2e_database, tmp_path_factory, provider) -> Iterator[str]:
    with accounts_server(e2e_database, tmp_path_factory, provider) as url:
        yield url


def tiny_png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (3, 3), "navy").save(buffer, "PNG")
    return buffer.getvalue()


def sign_in(page: Page, name: str) -> None:
    """At the provider's login form, as a person would: their name, then its Sign in button."""
    page.get_by_label("User name").fill(name)
    page.get_by_role("button", name="Sign in").click()


def test_a_visitor_signs_in_keeps_their_conversations_and_signs_out(page: Page, server: str, provider):
    chat = ChatPage.open(page, server)
    chat.ask("a question before signing in")
    chat.wait_until_answered()
    expect(chat.conversations).to_have_count(1)

    refused: list[str] = []
    page.on("response", lambda response: refused.append(response.url) if response.status >= 400 else None)
    page.get_by_test_id("account").get_by_role("button", name="Sign in").click()
    sign_in(page, "alice")
    offer = page.get_by_test_id("claim-offer")
    expect(offer).to_contain_text("You have 1 conversation from before you signed in")
    assert refused == [], "the anonymous conversation is not read as the user before it is kept"
    expect(page.get_by_role("alert")).to_have_count(0)
    expect(page.get_by_test_id("account")).to_contain_text("Alice")
    expect(chat.box).to_be_disabled()  # nothing is sent before the offer is answered
    offer.get_by_role("button", name="Keep it").click()
    expect(offer).to_contain_text("1 conversation kept in your account.")
    offer.get_by_role("button", name="OK").click()
    expect(offer).to_have_count(0)
    expect(chat.box).to_be_enabled()
    expect(chat.conversations).to_have_count(1)
    chat.conversations.first.click()
    expect(chat.user_messages.first).to_contain_text("a question before signing in")

    page.reload()  # still signed in, and the conversation is the user's
    expect(page.get_by_test_id("account")).to_contain_text("Alice")
    expect(chat.user_messages.first).to_contain_text("a question before signing in")
    expect(page.get_by_test_id("claim-offer")).to_have_count(0)

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_test_id("account").get_by_role("button", name="Sign in")).to_be_visible()
    expect(chat.box).to_be_enabled()
    expect(chat.conversations).to_have_count(0)  # an anonymous visitor again, with nothing of alice's


def test_not_now_opens_a_new_chat_and_the_anonymous_conversation_stays_with_the_browser(page: Page, server: str):
    """The probe's path: signing in came back to the anonymous conversation's id, and a message sent there made
    an account conversation of that id, which a later claim then skipped, silently."""
    chat = ChatPage.open(page, server)
    chat.ask("said before signing in")
    chat.wait_until_answered()
    anonymous_url = page.url
    page.get_by_test_id("account").get_by_role("button", name="Sign in").click()
    sign_in(page, "carol")
    offer = page.get_by_test_id("claim-offer")
    expect(offer).to_be_visible()
    expect(chat.box).to_be_disabled()
    offer.get_by_role("button", name="Not now").click()
    expect(offer).to_have_count(0)
    expect(chat.user_messages).to_have_count(0)  # a new chat of the account's, not the anonymous id
    keep_later = page.get_by_test_id("keep-earlier")
    expect(keep_later).to_have_text("Keep 1 conversation from before")  # the offer can be opened again
    chat.ask("said as carol")
    chat.wait_until_answered()
    assert page.url != anonymous_url
    expect(chat.conversations).to_have_count(1)
    page.reload()
    expect(keep_later).to_be_visible()  # after a reload too, until it is kept
    chat.box.fill("a draft carol never sent")
    page.wait_for_function("() => Object.keys(localStorage).some(k => k.startsWith('threadline:draft:'))")
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_test_id("account").get_by_role("button", name="Sign in")).to_be_visible()
    kept = page.evaluate("() => Object.keys(localStorage).filter(k => k.startsWith('threadline:draft:'))")
    assert kept == [], "what carol typed is not left for whoever uses the browser next"
    expect(chat.conversations).to_have_count(1)  # the browser's anonymous conversation is still there
    chat.conversations.first.click()
    expect(chat.user_messages.first).to_contain_text("said before signing in")


def test_a_keep_offer_answered_not_now_is_offered_again_from_the_account_bar(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.ask("said before signing in, kept later")
    chat.wait_until_answered()
    page.get_by_test_id("account").get_by_role("button", name="Sign in").click()
    sign_in(page, "erin")
    page.get_by_test_id("claim-offer").get_by_role("button", name="Not now").click()
    page.get_by_test_id("keep-earlier").click()
    offer = page.get_by_test_id("claim-offer")
    offer.get_by_role("button", name="Keep it").click()
    expect(offer).to_contain_text("1 conversation kept in your account.")
    offer.get_by_role("button", name="OK").click()
    expect(page.get_by_test_id("keep-earlier")).to_have_count(0)
    expect(chat.conversations.first).to_contain_text("Said before signing in")


def test_a_reload_before_answering_the_keep_offer_offers_it_again(page: Page, server: str):
    """Reloaded before the offer was answered, the page went on under the anonymous conversation's id, and a later
    Keep said "Nothing new to keep": the offer comes back, and holds the box, until it is answered."""
    chat = ChatPage.open(page, server)
    chat.ask("said before signing in, then reloaded")
    chat.wait_until_answered()
    page.get_by_test_id("account").get_by_role("button", name="Sign in").click()
    sign_in(page, "dave")
    expect(page.get_by_test_id("claim-offer")).to_be_visible()
    page.reload()
    offer = page.get_by_test_id("claim-offer")
    expect(offer).to_contain_text("You have 1 conversation from before you signed in")
    expect(chat.box).to_be_disabled()
    offer.get_by_role("button", name="Keep it").click()
    expect(offer).to_contain_text("1 conversation kept in your account.")
    offer.get_by_role("button", name="OK").click()
    page.reload()
    expect(page.get_by_test_id("account")).to_contain_text("Dave")
    expect(page.get_by_test_id("claim-offer")).to_have_count(0)
    expect(chat.conversations).to_have_count(1)


def test_each_user_sees_only_their_own_and_sign_in_renews_silently(page: Page, server: str, provider):
    chat = ChatPage.open(page, server)
    page.get_by_test_id("account").get_by_role("button", name="Sign in").click()
    sign_in(page, "bob")
    expect(page.get_by_test_id("account")).to_contain_text("Bob")
    expect(page.get_by_test_id("claim-offer")).to_have_count(0)  # nothing anonymous to keep
    expect(chat.conversations).to_have_count(0)  # alice's conversation is not bob's
    renewals = provider.grants.count("refresh_token")
    chat.ask("hello from bob")
    chat.wait_until_answered()
    deadline = time.monotonic() + 30
    while provider.grants.count("refresh_token") == renewals and time.monotonic() < deadline:
        page.wait_for_timeout(500)
    assert provider.grants.count("refresh_token") > renewals, "the page renewed its tokens with the refresh token"
    page.get_by_test_id("file-input").set_input_files(
        [{"name": "dot.png", "mimeType": "image/png", "buffer": tiny_png()}]
    )
    expect(page.get_by_role("progressbar")).to_have_count(0)
    chat.ask("and after the renewal?")
    chat.wait_until_answered()
    expect(chat.user_messages).to_have_count(2)
    thumbnail = chat.user_messages.last.get_by_role("img", name="dot.png")  # fetched with the user's token
    expect(thumbnail).to_be_visible()
    page.wait_for_function("image => image.naturalWidth === 3", arg=thumbnail.element_handle())
    expect(chat.banner).to_have_count(0)
    expect(chat.conversations).to_have_count(1)


def test_a_server_for_signed_in_users_only_asks_to_sign_in_first(page: Page, e2e_database, tmp_path_factory, provider):
    with accounts_server(e2e_database, tmp_path_factory, provider, AUTH_ANONYMOUS="deny") as url:
        page.goto(url)
        screen = page.get_by_test_id("sign-in-screen")
        expect(screen).to_contain_text("Sign in to chat.")
        screen.get_by_role("button", name="Sign in").click()
        sign_in(page, "carol")
        chat = ChatPage(page)
        expect(chat.box).to_be_enabled()
        chat.ask("hello")
        chat.wait_until_answered()
        expect(chat.assistant).to_contain_text("offline demo model")
