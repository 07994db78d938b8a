"""What one request may cost the server, whoever sends it (the third hostile probe): a PDF made to be slow to
open is checked in a process of its own and refused after FILE_CHECK_SECONDS while other visitors are served;
a body is measured before it is decoded; the files of a long conversation are read once per answer and sent
to the model within FILE_PROMPT_BYTES."""

from __future__ import annotations

import asyncio
import logging

import httpx
import pytest
from helpers import chat, new_conversation_id, running, serving
from langchain_core.messages import AIMessage
from test_attachments import file_part, pdf, png, with_files
from threadline.agent.attachments import FileReader
from threadline.conversations.state import FileRef, question


def slow_pdf(pages: int = 120_000, per_node: int = 1_000) -> bytes:
    """The probe's PDF: a page tree of `pages` pages whose cross-reference table points every object at the same
    wrong offset, so a reader rebuilds it object by object (and warns for each)."""
    groups = pages // per_node
    first_node, first_page = 3, 3 + groups
    nodes = b" ".join(b"%d 0 R" % (first_node + g) for g in range(groups))
    parts = [b"%PDF-1.4\n1 0 obj <</Type/Catalog/Pages 2 0 R>> endobj\n"]
    parts.append(b"2 0 obj <</Type/Pages/Count %d/Kids [%s]>> endobj\n" % (pages, nodes))
    for g in range(groups):
        kids = b" ".join(b"%d 0 R" % (first_page + g * per_node + i) for i in range(per_node))
        parts.append(b"%d 0 obj <</Type/Pages/Count %d/Kids [%s]>> endobj\n" % (first_node + g, per_node, kids))
    parts.extend(b"%d 0 obj <</Type/Page>> endobj\n" % (first_page + i) for i in range(pages))
    body, size = b"".join(parts), first_page + pages
    xref = b"xref\n0 %d\n0000000000 65535 f \n" % size + b"0000000009 00000 n \n" * (size - 1)
    return body + xref + b"trailer <</Root 1 0 R/Size %d>>\nstartxref\n%d\n%%%%EOF\n" % (size, len(body))


def chained_pdf(links: int = 20_000) -> bytes:
    """A PDF whose page tree is reached through `links` indirect references, each naming the next."""
    parts = [b"%PDF-1.4\n1 0 obj <</Type/Catalog/Pages 2 0 R>> endobj\n"]
    parts.extend(b"%d 0 obj %d 0 R endobj\n" % (2 + i, 3 + i) for i in range(links))
    parts.append(b"%d 0 obj <</Type/Pages/Count 0/Kids []>> endobj\n" % (2 + links))
    return b"".join(parts) + b"trailer <</Root 1 0 R>>\n%%EOF\n"


async def test_a_pdf_made_to_be_slow_is_refused_in_time_while_others_are_served(make_settings, caplog):
    caplog.set_level(logging.WARNING)
    pdf_type = {"content-type": "application/pdf"}
    with serving(make_settings(file_check_seconds=2)) as base:
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            upload = asyncio.create_task(client.post("/api/files", content=slow_pdf(), headers=pdf_type))
            await asyncio.sleep(0.3)  # the upload is being checked
            health = await client.get("/health")
            assert not upload.done(), "another visitor's request is answered while the PDF is still being checked"
            refused = await upload
            assert health.status_code == 200
            assert refused.status_code == 400, refused.text
            assert "not a PDF that can be read" in refused.json()["error"]["message"]
            chained = await client.post(
                "/api/chat", json=with_files(None, "read this", file_part(chained_pdf(), "application/pdf", "c.pdf"))
            )
            assert chained.status_code == 400, chained.text
            good = await client.post("/api/files", content=pdf(2), headers=pdf_type)
            assert good.status_code == 201, good.text
    assert not [record for record in caplog.records if record.name.startswith("pypdf")]


BIG_BODIES = {
    "a 3 MB resume.value": {
        "id": "c1",
        "messages": [{"role": "user"}],
        "resume": {"interruptId": "q", "value": "v" * 3_000_000},
    },
    "an empty file part beside 2 MB of text": {
        "messages": [{"role": "user", "parts": [{"type": "file"}, {"type": "text", "text": "t" * 2_000_000}]}]
    },
    "200,000 tiny messages": {"messages": [{"role": "user", "parts": []}] * 200_000},
    "a 2 MB editedInput": {
        "messages": [
            {
                "role": "assistant",
                "parts": [
                    {
                        "type": "tool-x",
                        "toolCallId": "c",
                        "state": "approval-responded",
                        "approval": {"id": "a", "approved": True, "editedInput": {"x": "e" * 2_000_000}},
                    }
                ],
            }
        ]
    },
    "a text part of 2 MB named url": {
        "messages": [{"role": "user", "parts": [{"type": "text", "text": '"url":"data:' + "x" * 2_000_000}]}]
    },
}


@pytest.mark.parametrize("why", list(BIG_BODIES))
async def test_a_body_is_measured_before_it_is_decoded_and_only_file_bytes_get_more_room(make_settings, why):
    async with running(make_settings()) as client:
        response = await client.post("/api/chat", json=BIG_BODIES[why])
        assert response.status_code == 413, (why, response.text[:300])
        assert response.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"


async def test_a_body_over_1_mb_that_is_not_json_is_refused_for_its_size_without_being_parsed(make_settings):
    async with running(make_settings()) as client:
        response = await client.post(
            "/api/chat", content=b"[" * 2_000_000, headers={"content-type": "application/json"}
        )
        assert response.status_code == 413, response.text[:300]
        with_a_file = with_files(None, "look", file_part(b"x" * 1_500_000, "text/plain", "big.txt"))
        accepted = await client.post("/api/chat", json=with_a_file)
        assert accepted.status_code == 200, accepted.text[:300]


SMALL_VALUES = {
    "resume.value over 64 KB": ({"interruptId": "q", "value": {"reply": "r" * 70_000}}, "65,536 bytes"),
    "resume.value with a NUL": ({"interruptId": "q", "value": {"reply": "a\u0000b"}}, "NUL"),
}


@pytest.mark.parametrize("why", list(SMALL_VALUES))
async def test_a_value_the_client_chooses_has_its_own_small_limit(make_settings, why):
    resume, words = SMALL_VALUES[why]
    async with running(make_settings()) as client:
        _, _, _ = await chat(client, (conversation_id := new_conversation_id()), "hello")
        response = await client.post(
            "/api/chat", json={"id": conversation_id, "messages": [{"role": "user"}], "resume": resume}
        )
        assert response.status_code == 400, response.text[:300]
        assert (
            words in response.json()["error"]["message"]
            and response.json()["error"]["details"][0]["field"] == "resume.value"
        )
        history = await client.get(f"/api/conversations/{conversation_id}")
        assert len(history.json()["messages"]) == 2


def referencing(sha256: str, size: int, name: str) -> FileRef:
    return FileRef(id=sha256[:32], sha256=sha256, media_type="image/png", filename=name, size=size)


def conversation_of(turns: int, files: list[FileRef]) -> list:
    """`turns` questions, each attaching every file of `files`, and their answers."""
    messages: list = []
    for turn in range(turns):
        messages.append(question(f"look again {turn}", f"q{turn}", files))
        messages.append(AIMessage(f"answer {turn}", id=f"a{turn}"))
    return messages


async def test_a_file_referenced_in_every_turn_is_read_and_sent_once_per_model_call():
    reads: list[str] = []
    image = png()

    async def read(sha256: str) -> bytes | None:
        reads.append(sha256)
        return image

    big = referencing("a" * 64, len(image), "photo.png")
    reader = FileReader(read, budget=10 * len(image))
    for turns in (1, 20):
        reads.clear()
        prompt = await reader.readable(conversation_of(turns, [big, big]))
        sent = [
            block for message in prompt for block in message.content if isinstance(block, dict) and "base64" in block
        ]
        assert reads == ["a" * 64] and len(sent) == 1, turns
        assert sent[0] in prompt[-2].content, "sent with its newest mention"


async def test_the_files_of_one_model_call_stay_within_file_prompt_bytes_newest_first():
    async def read(sha256: str) -> bytes | None:
        return sha256.encode() * 100

    older, newer = referencing("b" * 64, 6_400, "old.png"), referencing("c" * 64, 6_400, "new.png")
    messages = [*conversation_of(1, [older]), question("and this one", "q9", [newer])]
    prompt = await FileReader(read, budget=10_000).readable(messages)
    texts = [block.get("text", "") for block in prompt[0].content if isinstance(block, dict)]
    assert any("old.png" in text and "not sent again" in text for text in texts)
    assert [block["base64"] for block in prompt[-1].content if "base64" in block]
    assert prompt[-1].content[0] == {"type": "text", "text": "and this one"}
