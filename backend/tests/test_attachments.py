"""Attachments: files sent with a message as `useChat` sends them (data URLs) or uploaded first, checked by their
bytes, stored once, kept out of the checkpoint, given to the model, read back in the history, served to their
owner only, and deleted with their conversation; every bad file refused with nothing stored."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
import struct
import sys
import uuid
import zlib

import boto3
import httpx
import psycopg
import pytest
from helpers import chat_body, new_conversation_id, on_backend, running, serving, stream_some, text_of
from PIL import Image
from pypdf import PdfWriter
from test_comparisons import TWO_DEMOS
from test_mcp import TEST_SERVER
from threadline.agent.compression import IMAGE_TOKENS, tokens
from threadline.client import Client, ThreadlineError
from threadline.conversations.attachments import CheckSlots, pdf_pages
from threadline.conversations.state import question
from threadline.http.identity import HEADER
from threadline.refusals import Refused
from threadline.settings import load_settings
from threadline.settings.mcp_servers import McpServerConfig
from threadline_testing import standins
from threadline_testing.ai_sdk import read_with_ai, send_files_with_chat
from threadline_testing.ports import free_port
from threadline_testing.processes import threadline_server
from threadline_testing.sse import parse_sse


def png(width: int = 8, height: int = 8, color: str = "red") -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buffer, "PNG")
    return buffer.getvalue()


def pdf(pages: int = 1) -> bytes:
    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=200, height=200)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def bomb_png(width: int = 100_000, height: int = 100_000) -> bytes:
    """A PNG whose header claims 10 gigapixels: refused by its header, before anything is decoded."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")


def data_url(data: bytes, media_type: str) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode()}"


def file_part(data: bytes, media_type: str, filename: str | None = None) -> dict:
    part = {"type": "file", "mediaType": media_type, "url": data_url(data, media_type)}
    return part | ({"filename": filename} if filename else {})


def with_files(conversation_id: str | None, text: str, *parts: dict) -> dict:
    body = chat_body(conversation_id, text)
    body["messages"][0]["parts"].extend(parts)
    return body


async def visitor(client) -> dict[str, str]:
    """A fresh anonymous visitor of its own: the tests share a database and count what is stored."""
    return {HEADER: (await client.get("/health", headers={HEADER: ""})).headers[HEADER]}


async def blob_count(database_url: str) -> int:
    async with await psycopg.AsyncConnection.connect(database_url) as conn:
        row = await (await conn.execute("SELECT count(*) FROM file_blobs")).fetchone()
    return int(row[0]) if row else 0


async def test_an_image_a_pdf_and_a_text_file_go_to_the_model_and_come_back_in_the_history(make_settings):
    image, document, notes = png(), pdf(), b"Shopping list\neggs\nmilk\n"
    async with running(make_settings()) as client:
        me = await visitor(client)
        conversation_id = new_conversation_id()
        body = with_files(
            conversation_id,
            "what are these?",
            file_part(image, "image/png", "photo.png"),
            file_part(document, "application/pdf", "report.pdf"),
            file_part(notes, "text/plain", "notes.txt"),
        )
        answer = await client.post("/api/chat", json=body, headers=me)
        assert answer.status_code == 200, answer.text
        text = text_of(parse_sse(answer.content))
        assert f"photo.png (image/png, {len(image):,} bytes)" in text
        assert f"report.pdf (application/pdf, {len(document):,} bytes)" in text
        assert "notes.txt (text, 24 bytes, beginning \u201cShopping list\u201d)" in text

        history = (await client.get(f"/api/conversations/{conversation_id}", headers=me)).json()["messages"]
        files = [part for part in history[0]["parts"] if part["type"] == "file"]
        assert [(part["filename"], part["mediaType"]) for part in files] == [
            ("photo.png", "image/png"),
            ("report.pdf", "application/pdf"),
            ("notes.txt", "text/plain"),
        ]
        for part, data in zip(files, (image, document, notes), strict=True):
            served = await client.get(part["url"], headers=me)
            assert served.status_code == 200 and served.content == data
            assert served.headers["content-type"].startswith(part["mediaType"])
            assert served.headers["x-content-type-options"] == "nosniff"
            policies = served.headers.get_list("content-security-policy")  # the page's, and the file's own
            assert any("sandbox" in policy for policy in policies), policies
        image_served = await client.get(files[0]["url"], headers=me)
        assert image_served.headers["content-disposition"].startswith("inline")
        assert (await client.get(files[1]["url"], headers=me)).headers["content-disposition"].startswith("attachment")
        assert (await client.get(files[0]["url"], headers=await visitor(client))).status_code == 404, "the owner's only"


async def test_the_checkpoint_keeps_references_not_bytes(make_settings, database_url):
    big = b"a line of a long log file\n" * 80_000  # 2 MB
    async with running(make_settings()) as client:
        me = await visitor(client)
        conversation_id = new_conversation_id()
        body = with_files(conversation_id, "read this", file_part(big, "text/plain", "big.log"))
        assert (await client.post("/api/chat", json=body, headers=me)).status_code == 200
    async with await psycopg.AsyncConnection.connect(database_url) as conn:
        row = await (
            await conn.execute(
                "SELECT coalesce(sum(length(blob)), 0) FROM checkpoint_blobs WHERE thread_id LIKE %s",
                (f"%:{conversation_id}",),
            )
        ).fetchone()
    assert row is not None and row[0] < 20_000, f"{row[0]} bytes of checkpoint for a {len(big):,}-byte file"


async def test_an_upload_is_referenced_by_its_url_and_the_same_bytes_are_stored_once(make_settings, database_url):
    image = png(color="blue")
    async with running(make_settings()) as client:
        me, other = await visitor(client), await visitor(client)
        before = await blob_count(database_url)
        uploaded = await client.post(
            "/api/files?filename=blue.png", content=image, headers=me | {"content-type": "image/png"}
        )
        assert uploaded.status_code == 201, uploaded.text
        file = uploaded.json()
        assert file["mediaType"] == "image/png" and file["size"] == len(image) and file["filename"] == "blue.png"
        again = await client.post("/api/files", content=image, headers=other | {"content-type": "image/png"})
        assert again.json()["id"] == file["id"]
        assert await blob_count(database_url) == before + 1, "the same bytes are stored once"

        reference = {"type": "file", "mediaType": "image/png", "url": file["url"], "filename": "blue.png"}
        conversation_id = new_conversation_id()
        sent = await client.post("/api/chat", json=with_files(conversation_id, "", reference), headers=me)
        assert sent.status_code == 200 and "blue.png (image/png" in text_of(parse_sse(sent.content))
        listed = (await client.get("/api/conversations", headers=me)).json()
        assert listed[0]["title"] == "blue.png", "a message of files alone is named by its first file"

        stranger = await visitor(client)
        taken = await client.post("/api/chat", json=with_files(None, "mine?", reference), headers=stranger)
        assert taken.status_code == 404 and taken.json()["error"]["code"] == "NOT_FOUND"

        assert (await client.delete(f"/api/conversations/{conversation_id}", headers=me)).status_code == 204
        assert (await client.get(file["url"], headers=me)).status_code == 404, "gone with its conversation"
        assert (await client.get(file["url"], headers=other)).status_code == 200, "another's upload is theirs"


BAD = {
    "an HTML page named .png": (file_part(b"<html><script>alert(1)</script></html>", "image/png", "x.png"), 400),
    "an SVG with a script": (
        file_part(b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', "image/svg+xml"),
        400,
    ),
    "a decompression bomb": (file_part(bomb_png(), "image/png", "bomb.png"), 400),
    "a PDF over the page cap": (file_part(pdf(301), "application/pdf", "long.pdf"), 400),
    "a data URL that does not decode": (
        {"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,@@@not base64@@@"},
        400,
    ),
    "a file by URL": ({"type": "file", "mediaType": "image/png", "url": "https://169.254.169.254/x.png"}, 400),
    "a loopback URL": ({"type": "file", "mediaType": "image/png", "url": "http://127.0.0.1:5432/"}, 400),
    "a path in the name": (file_part(b"hello", "text/plain", "../../etc/passwd"), 400),
    "a control character in the name": (file_part(b"hello", "text/plain", "a\x07b.txt"), 400),
    "a name of 10,000 characters": (file_part(b"hello", "text/plain", "n" * 10_000), 400),
    "a zip archive": (file_part(b"PK\x03\x04" + b"\x00" * 100, "application/zip", "bomb.zip"), 400),
    "JSON that does not parse": (file_part(b"{not json", "application/json", "data.json"), 400),
    "a file over FILE_MAX_BYTES": (file_part(b"a" * 2_000, "text/plain", "big.txt"), 413),
}


@pytest.mark.parametrize("why", list(BAD))
async def test_a_bad_file_is_refused_and_nothing_is_stored(make_settings, database_url, why):
    part, status = BAD[why]
    async with running(make_settings(file_max_bytes=1_000 if "FILE_MAX" in why else 10_000_000)) as client:
        me = await visitor(client)
        before = await blob_count(database_url)
        conversation_id = new_conversation_id()
        good = file_part(png(color="green"), "image/png", "fine.png")  # refused with it: nothing is half-stored
        response = await client.post("/api/chat", json=with_files(conversation_id, "look", good, part), headers=me)
        assert response.status_code == status, (why, response.text)
        assert "Traceback" not in response.text and response.json()["error"]["message"]
        assert await blob_count(database_url) == before, why
        assert (await client.get(f"/api/conversations/{conversation_id}", headers=me)).status_code == 404


async def test_too_many_files_or_bytes_in_one_message_are_refused(make_settings):
    async with running(make_settings(file_max_count=2, file_max_message_bytes=3_000)) as client:
        me = await visitor(client)
        three = [file_part(f"note {n}".encode(), "text/plain", f"n{n}.txt") for n in range(3)]
        refused = await client.post("/api/chat", json=with_files(None, "hi", *three), headers=me)
        assert refused.status_code == 413 and refused.json()["error"]["code"] == "FILES_TOO_LARGE"
        heavy = [file_part(bytes([65 + n]) * 2_000, "text/plain", f"h{n}.txt") for n in range(2)]
        refused = await client.post("/api/chat", json=with_files(None, "hi", *heavy), headers=me)
        assert refused.status_code == 413 and "3,000 bytes" in refused.json()["error"]["message"]


async def test_the_storage_quota_holds_per_owner(make_settings):
    async with running(make_settings(file_quota_bytes=3_000)) as client:
        me = await visitor(client)
        first = await client.post("/api/files", content=b"a" * 2_000, headers=me | {"content-type": "text/plain"})
        assert first.status_code == 201
        second = await client.post("/api/files", content=b"b" * 2_000, headers=me | {"content-type": "text/plain"})
        assert second.status_code == 413 and second.json()["error"]["code"] == "STORAGE_FULL"
        other = await visitor(client)
        assert (
            await client.post("/api/files", content=b"b" * 2_000, headers=other | {"content-type": "text/plain"})
        ).status_code == 201


async def test_a_profile_whose_model_cannot_read_images_refuses_them_before_the_model_call(make_settings):
    profiles = load_settings(
        {"CHAT_PROFILES": json.dumps([{"id": "texts", "provider": "demo", "model": "demo", "inputs": ["text"]}])}
    ).models.profiles
    async with running(make_settings(profiles=profiles)) as client:
        me = await visitor(client)
        refused = await client.post(
            "/api/chat", json=with_files(None, "see", file_part(png(), "image/png")), headers=me
        )
        assert refused.status_code == 400 and "cannot read image files" in refused.json()["error"]["message"]
        text_file = file_part(b"plain words", "text/plain", "words.txt")
        assert (await client.post("/api/chat", json=with_files(None, "read", text_file), headers=me)).status_code == 200


async def test_the_memory_backend_keeps_files_too(make_settings):
    async with running(make_settings(memory_backend="memory", database_url=None)) as client:
        me = await visitor(client)
        conversation_id = new_conversation_id()
        body = with_files(conversation_id, "hi", file_part(png(), "image/png", "dot.png"))
        assert (await client.post("/api/chat", json=body, headers=me)).status_code == 200
        history = (await client.get(f"/api/conversations/{conversation_id}", headers=me)).json()["messages"]
        url = history[0]["parts"][0]["url"]
        assert (await client.get(url, headers=me)).content == png()
        await client.delete(f"/api/conversations/{conversation_id}", headers=me)
        assert (await client.get(url, headers=me)).status_code == 404


def test_the_ai_sdks_chat_sends_files_and_reads_them_back(make_settings):
    with serving(make_settings()) as base_url:
        cookie_value = httpx.get(f"{base_url}/health").headers[HEADER]
        conversation_id = new_conversation_id()
        parts = [file_part(png(), "image/png", "dot.png"), file_part(b"# Title\nbody", "text/markdown", "a.md")]
        result = send_files_with_chat(base_url, f"threadline_client={cookie_value}", conversation_id, "look", parts)
    assert not result["errors"] and result["valid"] is True, result
    answer = result["messages"][-1]
    assert "dot.png (image/png" in "".join(part.get("text", "") for part in answer["parts"])
    sent = [part for part in result["history"][0]["parts"] if part["type"] == "file"]
    assert [(part["filename"], part["mediaType"]) for part in sent] == [
        ("dot.png", "image/png"),
        ("a.md", "text/markdown"),
    ]
    assert all(part["url"].startswith("/api/files/") for part in sent)


@pytest.fixture
def provider_standins():
    started = {name: standins.start(name) for name in ("openai", "anthropic", "gemini")}
    yield started
    for standin in started.values():
        standin.stop()


async def test_each_provider_gets_the_files_in_its_own_apis_format(make_settings, provider_standins):
    """Through the real client libraries (langchain-openai, -anthropic, -google-genai) to the stand-ins."""
    profiles = [
        {"id": "openai", "provider": "openai", "model": "gpt-standin", "api_key": "sk-test", "default": True},
        {"id": "anthropic", "provider": "anthropic", "model": "claude-standin", "api_key": "sk-ant-test"},
        {"id": "gemini", "provider": "google", "model": "gemini-standin", "api_key": "test-key"},
    ]
    for profile in profiles:
        profile["base_url"] = provider_standins[profile["id"]].base_url
    settings = make_settings(profiles=load_settings({"CHAT_PROFILES": json.dumps(profiles)}).models.profiles)
    image, document = png(), pdf()
    image64, document64 = base64.b64encode(image).decode(), base64.b64encode(document).decode()
    parts = (
        file_part(image, "image/png", "photo.png"),
        file_part(document, "application/pdf", "report.pdf"),
        file_part(b"line one\nline two", "text/plain", "notes.txt"),
    )
    async with running(settings) as client:
        me = await visitor(client)
        for profile in ("openai", "anthropic", "gemini"):
            body = with_files(new_conversation_id(), "describe", *parts) | {"profileId": profile}
            response = await client.post("/api/chat", json=body, headers=me)
            assert response.status_code == 200, (profile, response.text)
    openai = provider_standins["openai"].requests[0]["messages"][-1]["content"]
    assert {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{image64}"}} in openai
    pdf_part = next(part for part in openai if part["type"] == "file")["file"]
    assert pdf_part["file_data"] == f"data:application/pdf;base64,{document64}" and pdf_part["filename"] == "report.pdf"
    assert any("Attached file notes.txt:\nline one" in part.get("text", "") for part in openai)

    anthropic = provider_standins["anthropic"].requests[0]["messages"][-1]["content"]
    assert {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": image64}} in anthropic
    document_block = next(block for block in anthropic if block["type"] == "document")
    assert document_block["source"] == {"type": "base64", "media_type": "application/pdf", "data": document64}
    assert any("Attached file notes.txt" in block.get("text", "") for block in anthropic)

    gemini = provider_standins["gemini"].requests[0]["contents"][-1]["parts"]
    inline = [
        part.get("inlineData") or part["inline_data"] for part in gemini if {"inlineData", "inline_data"} & set(part)
    ]
    received = [(blob.get("mimeType") or blob["mime_type"], base64.urlsafe_b64decode(blob["data"])) for blob in inline]
    assert received == [("image/png", image), ("application/pdf", document)]
    assert any("Attached file notes.txt" in part.get("text", "") for part in gemini)


def test_the_python_client_attaches_files_by_path(make_settings, tmp_path):
    photo, notes = tmp_path / "photo.png", tmp_path / "notes.md"
    photo.write_bytes(png())
    notes.write_text("# Plans\nmore")
    with serving(make_settings()) as base_url, Client(base_url) as client:
        answer = client.ask("what are these?", files=[photo, notes])
        assert "photo.png (image/png" in answer.text and "notes.md (text" in answer.text
        with pytest.raises(ThreadlineError) as refused:
            client.ask("and this?", files=[tmp_path / "photo.png", tmp_path / "photo.png"] * 3)
    assert refused.value.status == 413 and refused.value.code == "FILES_TOO_LARGE"


@pytest.fixture
def s3_server():
    """moto's S3-compatible server on a loopback port, with a bucket for the files."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=free_port())
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    credentials = {"aws_access_key_id": "test", "aws_secret_access_key": "test", "region_name": "us-east-1"}
    s3 = boto3.client("s3", endpoint_url=endpoint, **credentials)
    s3.create_bucket(Bucket="threadline-files")
    yield endpoint, s3
    server.stop()


async def test_two_processes_share_files_in_an_object_store_and_a_deletion_removes_them(
    s3_server, database_url, tmp_path
):
    endpoint, s3 = s3_server
    env = {
        "FILE_STORE_URL": "s3://threadline-files/uploads",
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_DEFAULT_REGION": "us-east-1",
        "CHAT_RATE_LIMIT": "1000/minute",
    }
    image = png(color="purple")
    with (
        threadline_server(database_url, tmp_path, **env) as first,
        threadline_server(database_url, tmp_path, **env) as second,
    ):
        async with httpx.AsyncClient(base_url=first) as one, httpx.AsyncClient(base_url=second) as two:
            me = {HEADER: (await one.get("/health")).headers[HEADER]}
            before = await blob_count(database_url)
            uploaded = await one.post(
                "/api/files?filename=p.png", content=image, headers=me | {"content-type": "image/png"}
            )
            file = uploaded.json()
            stored = s3.list_objects_v2(Bucket="threadline-files", Prefix="uploads/")["Contents"]
            assert [item["Key"] for item in stored] == [f"uploads/{hashlib.sha256(image).hexdigest()}"]
            assert await blob_count(database_url) == before, "the bytes are not in the database"

            conversation_id = new_conversation_id()
            reference = {"type": "file", "mediaType": "image/png", "url": file["url"], "filename": "p.png"}
            answer = await two.post("/api/chat", json=with_files(conversation_id, "and?", reference), headers=me)
            assert "p.png (image/png" in text_of(parse_sse(answer.content)), "the other process read the bytes"
            assert (await two.get(file["url"], headers=me)).content == image

            assert (await one.delete(f"/api/conversations/{conversation_id}", headers=me)).status_code == 204
            assert "Contents" not in s3.list_objects_v2(Bucket="threadline-files", Prefix="uploads/")
            assert (await two.get(file["url"], headers=me)).status_code == 404


async def test_a_tools_image_and_link_become_file_and_source_parts_live_and_after_a_reload(make_settings):
    server = McpServerConfig(name="local", transport="stdio", command=sys.executable, args=(str(TEST_SERVER), "stdio"))
    async with running(make_settings(mcp_servers=(server,))) as client:
        me = await visitor(client)
        conversation_id = new_conversation_id()
        body = chat_body(conversation_id, "use the chart tool")
        answer = await client.post("/api/chat", json=body, headers=me)
        chunks = parse_sse(answer.content)
        files = [chunk for chunk in chunks if chunk["type"] == "file"]
        sources = [chunk for chunk in chunks if chunk["type"] == "source-url"]
        assert [file["mediaType"] for file in files] == ["image/png"], "the HTML posing as a PNG is not kept"
        assert sources == [
            {
                "type": "source-url",
                "sourceId": sources[0]["sourceId"],
                "url": "https://example.com/tides",
                "title": "Tide tables",
            }
        ]
        output = next(chunk for chunk in chunks if chunk["type"] == "tool-output-available")["output"]
        assert "Here is the chart." in output and "was not kept" in output, "the model reads why"
        assert (await client.get(files[0]["url"], headers=me)).headers["content-type"] == "image/png"
        read = read_with_ai(answer.content)
        assert not read["errors"] and {"file", "source-url"} <= {part["type"] for part in read["message"]["parts"]}

        history = (await client.get(f"/api/conversations/{conversation_id}", headers=me)).json()["messages"]
        parts = [part for part in history[-1]["parts"] if part["type"] in ("file", "source-url")]
        assert parts == [*files, *sources], "a reload shows what the stream showed"
        await client.delete(f"/api/conversations/{conversation_id}", headers=me)
        assert (await client.get(files[0]["url"], headers=me)).status_code == 404, "gone with the conversation"


@pytest.mark.parametrize("wire", ["ndjson", "sse"])
def test_the_python_client_keeps_a_tools_files_and_sources(make_settings, wire):
    server = McpServerConfig(name="local", transport="stdio", command=sys.executable, args=(str(TEST_SERVER), "stdio"))
    with serving(make_settings(mcp_servers=(server,))) as base_url, Client(base_url, wire=wire) as client:
        answer = client.ask("use the chart tool")
        produced = [part for part in answer.parts if isinstance(part, dict) and part["type"] in ("file", "source-url")]
        assert [part["type"] for part in produced] == ["file", "source-url"]
        assert client.http.get(produced[0]["url"]).content.startswith(b"\x89PNG")


def test_context_compression_counts_attached_files():
    image = {"id": "a" * 32, "sha256": "b" * 64, "media_type": "image/png", "filename": "x.png", "size": 10}
    notes = image | {"media_type": "text/plain", "filename": "n.txt", "size": 40_000}
    plain = question("hello", "m1", [])
    assert tokens([question("hello", "m1", [image])]) - tokens([plain]) == IMAGE_TOKENS
    assert tokens([question("hello", "m1", [notes])]) - tokens([plain]) == 10_000


async def test_a_regenerated_or_compared_answer_sees_the_files_again(make_settings):
    profiles = load_settings({"CHAT_PROFILES": json.dumps(TWO_DEMOS)}).models.profiles
    async with running(make_settings(profiles=profiles)) as client:
        me = await visitor(client)
        conversation_id = new_conversation_id()
        body = with_files(conversation_id, "look", file_part(png(), "image/png", "dot.png"))
        assert (await client.post("/api/chat", json=body, headers=me)).status_code == 200
        again = await client.post(
            "/api/chat", json=chat_body(conversation_id, "", trigger="regenerate-message"), headers=me
        )
        assert "dot.png (image/png" in text_of(parse_sse(again.content))
        compared_id = new_conversation_id()
        body = with_files(compared_id, "look", file_part(png(), "image/png", "dot.png")) | {
            "compareProfiles": ["demo", "demo2"]
        }
        first = parse_sse((await client.post("/api/chat", json=body, headers=me)).content)
        assert "dot.png (image/png" in text_of(first)
        comparison_id = first[0]["messageMetadata"]["comparisonId"]
        second = await client.get(f"/api/comparisons/{comparison_id}/stream", headers=me)
        assert "dot.png (image/png" in text_of(parse_sse(second.content)), "the other answer sees it too"


@pytest.mark.parametrize("backend", ["postgres", "memory"])
async def test_uploads_no_message_used_are_deleted_after_a_while(make_settings, backend):
    settings = on_backend(make_settings, backend)
    async with running(settings) as client:
        me = await visitor(client)
        unsent = await client.post("/api/files", content=b"never sent " + uuid_bytes(), headers=me | TEXT)
        sent = await client.post("/api/files", content=b"sent " + uuid_bytes(), headers=me | TEXT)
        reference = {"type": "file", "mediaType": "text/plain", "url": sent.json()["url"]}
        assert (await client.post("/api/chat", json=with_files(None, "hi", reference), headers=me)).status_code == 200
        assert await client.app.state.services.storage.files.drop_unused(0) >= 1
        assert (await client.get(unsent.json()["url"], headers=me)).status_code == 404
        assert (await client.get(sent.json()["url"], headers=me)).status_code == 200, "a sent file stays"


TEXT = {"content-type": "text/plain"}


def uuid_bytes() -> bytes:
    return uuid.uuid4().hex.encode()


async def test_a_message_refused_as_busy_stores_none_of_its_files(make_settings, database_url):
    with serving(make_settings(demo_token_delay_ms=20.0)) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            me = await visitor(client)
            client.headers.update(me)
            before = await blob_count(database_url)
            conversation_id = new_conversation_id()
            response, _chunks, _ = await stream_some(client, conversation_id, deltas=1)
            busy = with_files(conversation_id, "and this", file_part(png(9, 9, "navy"), "image/png", "n.png"))
            refused = await client.post("/api/chat", json=busy)
            assert refused.status_code == 409, refused.text
            assert await blob_count(database_url) == before, "nothing of a refused message is stored"
            await response.aclose()


async def test_new_anonymous_ids_from_one_address_share_its_daily_file_bytes(make_settings):
    async with running(make_settings(file_quota_bytes=1_000, file_bytes_per_day=2_500)) as client:
        statuses = []
        for n in range(5):  # each a new anonymous visitor, from the same address
            me = await visitor(client)
            upload = await client.post(
                "/api/files", content=bytes([65 + n]) * 900, headers=me | {"content-type": "text/plain"}
            )
            statuses.append(upload.status_code)
        assert statuses == [201, 201, 429, 429, 429], statuses
        refused = await client.post(
            "/api/chat",
            json=with_files(None, "hi", file_part(b"z" * 900, "text/plain", "z.txt")),
            headers=await visitor(client),
        )
        assert refused.status_code == 429 and "bytes of files" in refused.json()["error"]["message"]
        assert int(refused.headers["retry-after"]) > 0


async def test_pdf_checks_run_two_at_a_time_and_past_a_queue_are_refused_at_once():
    """Each PDF check is a process of its own (~90 MB): a burst of uploads waits its turn, and past the queue is
    refused with a retryable 503 instead of starting a process per file."""
    slots = CheckSlots(at_once=2, waiting=3)
    running, most = 0, 0

    async def check() -> str:
        nonlocal running, most
        try:
            async with slots.slot():
                running += 1
                most = max(most, running)
                await asyncio.sleep(0.05)
                running -= 1
                return "checked"
        except Refused as refused:
            return refused.code

    outcomes = await asyncio.gather(*(check() for _ in range(8)))
    assert most == 2, "never more than two checks at once"
    assert sorted(outcomes) == ["OVER_CAPACITY"] * 3 + ["checked"] * 5
    assert await check() == "checked", "the slots are free again"
    one_page = io.BytesIO()
    writer = PdfWriter()
    writer.add_blank_page(width=100, height=100)
    writer.write(one_page)
    assert await pdf_pages(one_page.getvalue(), 10) == 1, "a real check goes through the same slots"
