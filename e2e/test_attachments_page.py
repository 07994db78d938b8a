"""Attachments on the page: files picked, dropped or refused in the composer, sent with the message, shown
in it (an image's thumbnail, a PDF's name) after a reload too, opened with a click, and named by the model."""

from __future__ import annotations

import io
import re

from chat_page import ChatPage
from PIL import Image
from playwright.sync_api import Page, expect
from pypdf import PdfWriter


def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), "teal").save(buffer, "PNG")
    return buffer.getvalue()


def pdf() -> bytes:
    writer, buffer = PdfWriter(), io.BytesIO()
    writer.add_blank_page(width=200, height=200)
    writer.write(buffer)
    return buffer.getvalue()


def test_an_image_and_a_pdf_are_sent_shown_after_a_reload_and_opened(page: Page, server: str):
    chat = ChatPage.open(page, server)
    page.get_by_test_id("file-input").set_input_files(
        [
            {"name": "photo.png", "mimeType": "image/png", "buffer": png()},
            {"name": "report.pdf", "mimeType": "application/pdf", "buffer": pdf()},
        ]
    )
    expect(page.get_by_test_id("pending-file")).to_have_count(2)
    expect(page.get_by_role("progressbar")).to_have_count(0)  # both uploaded
    chat.ask("what are these?")
    chat.wait_until_answered()
    expect(page.get_by_test_id("pending-file")).to_have_count(0)
    sent = chat.user_messages.last.get_by_test_id("file-part")
    expect(sent).to_have_count(2)
    expect(chat.assistant).to_contain_text("photo.png (image/png")
    expect(chat.assistant).to_contain_text("report.pdf (application/pdf")

    page.reload()
    sent = chat.user_messages.last.get_by_test_id("file-part")
    expect(sent).to_have_count(2)
    expect(sent.first.get_by_role("img", name="photo.png")).to_be_visible()
    assert sent.first.locator("img").evaluate("image => image.naturalWidth") == 64, "the thumbnail loaded"
    expect(sent.last).to_contain_text("report.pdf")
    with page.expect_popup() as opened:
        sent.first.click()
    assert opened.value.url.startswith(f"{server}/api/files/")


def test_a_refused_file_says_why_and_can_be_removed_and_a_dropped_file_is_sent(page: Page, server: str):
    chat = ChatPage.open(page, server)
    page.get_by_test_id("file-input").set_input_files(
        [{"name": "evil.png", "mimeType": "image/png", "buffer": b"<html><script>alert(1)</script></html>"}]
    )
    refused = page.get_by_test_id("pending-file")
    expect(refused.get_by_role("alert")).to_have_text(re.compile(r"^evil\.png says it is image/png, but its bytes are"))
    chat.box.fill("look")
    expect(chat.send_button).to_be_disabled()
    refused.get_by_role("button", name="Remove evil.png").click()
    expect(refused).to_have_count(0)
    expect(chat.send_button).to_be_enabled()

    page.evaluate(
        """() => {
        const transfer = new DataTransfer();
        transfer.items.add(new File(['first line\\nsecond'], 'notes.txt', { type: 'text/plain' }));
        document.querySelector('form.composer').dispatchEvent(
            new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
    }"""
    )
    expect(page.get_by_test_id("pending-file")).to_contain_text("notes.txt")
    expect(page.get_by_role("progressbar")).to_have_count(0)
    chat.box.press("Enter")
    chat.wait_until_answered()
    expect(chat.assistant).to_contain_text("notes.txt (text, 17 bytes, beginning \u201cfirst line\u201d)")


def test_a_tools_image_and_source_show_in_the_answer(page: Page, server: str):
    chat = ChatPage.open(page, server)
    chat.ask("use the chart tool")
    chat.wait_until_answered()
    image = chat.assistant.get_by_test_id("file-part").locator("img")
    expect(image).to_be_visible()
    page.wait_for_function("image => image.naturalWidth === 1", arg=image.element_handle())
    expect(chat.assistant.get_by_test_id("source")).to_have_text("Tide tables")
    page.reload()
    expect(chat.assistant.get_by_test_id("source")).to_have_text("Tide tables")


def test_a_message_of_only_a_file_is_not_back_in_the_box_after_a_reload_before_its_answer_arrived(
    page: Page, server: str
):
    """The server took the message (its answer is whole there), but the page went away before it heard back: the
    history holds it, so it is not put back in the box to be sent a second time."""
    chat = ChatPage.open(page, server)
    page.get_by_test_id("file-input").set_input_files([{"name": "photo.png", "mimeType": "image/png", "buffer": png()}])
    expect(page.get_by_role("progressbar")).to_have_count(0)
    taken = []

    def held_back(route):  # the request goes through; the page never hears its answer
        route.fetch()
        taken.append(route)
        route.abort()

    page.route("**/api/chat", held_back)
    chat.box.press("Enter")
    for _ in range(300):  # until the server has answered in full (the handler runs while the page waits)
        if taken:
            break
        page.wait_for_timeout(50)
    assert taken, "the message reached the server"
    page.reload()
    expect(chat.user_messages).to_have_count(1)
    expect(chat.user_messages.last.get_by_test_id("file-part")).to_have_count(1)
    expect(page.get_by_test_id("pending-file")).to_have_count(0)
    expect(page.get_by_test_id("notice")).to_have_count(0)
