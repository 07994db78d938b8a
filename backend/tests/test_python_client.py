"""The Python client as complete as the API: profiles, uploads sent once and attached by reference, a running
answer resumed from elsewhere, ratings, deletion, and conversations as typed summaries."""

from __future__ import annotations

import asyncio
import threading
from datetime import datetime

import pytest
from helpers import serving
from test_attachments import png
from test_comparisons import two_demos
from threadline.client import AsyncClient, Client, ConversationSummary, ThreadlineError, Uploaded


def test_profiles_uploads_ratings_and_deletion(make_settings, tmp_path):
    photo = tmp_path / "photo.png"
    photo.write_bytes(png(16, 16, "blue"))
    with serving(two_demos(make_settings)) as base_url, Client(base_url) as client:
        assert [profile["id"] for profile in client.profiles()] == ["demo", "demo2"]
        uploaded = client.upload(photo)
        assert isinstance(uploaded, Uploaded) and uploaded.media_type == "image/png"
        answer = client.ask("what is this?", files=[uploaded], profile="demo2")
        (summary,) = client.conversations()
        assert isinstance(summary, ConversationSummary) and summary.id == answer.conversation_id
        assert summary.profile_id == "demo2" and isinstance(summary.last_message_at, datetime)
        (question,) = [message for message in client.messages(summary.id) if message["role"] == "user"]
        assert [part["url"] for part in question["parts"] if part["type"] == "file"] == [uploaded.url]
        client.rate(answer, "down", "not what I asked")
        rated = client.messages(summary.id)[-1]["metadata"]["feedback"]
        assert rated["rating"] == "down" and rated["comment"] == "not what I asked"
        client.rate(answer.id, None)
        assert "feedback" not in client.messages(summary.id)[-1]["metadata"], "taken back"
        assert client.rename(summary.id, "A blue square").title == "A blue square"
        client.delete(summary.id)
        assert list(client.conversations()) == []
        with pytest.raises(ThreadlineError) as missing:
            client.delete(summary.id)
        assert missing.value.status == 404


def test_a_running_answer_is_resumed_from_another_client(make_settings):
    with serving(make_settings(demo_token_delay_ms=20.0)) as base_url, Client(base_url) as writer:
        writer.ask("hello")  # this visitor's identity
        conversation_id = writer.ask("hello again").conversation_id
        started = threading.Event()

        def long_answer() -> None:
            for chunk in writer.stream("count to 40", conversation_id):
                if getattr(chunk, "delta", None):
                    started.set()

        running = threading.Thread(target=long_answer)
        running.start()
        assert started.wait(10)
        token = writer.token

        async def resume(conversation: str):
            async with AsyncClient(base_url, token=token) as reader:
                return await reader.resume(conversation)

        resumed = asyncio.run(resume(conversation_id))
        running.join()
        assert resumed is not None and resumed.text.rstrip().endswith("40"), "from its first chunk to its end"
        assert writer.resume(conversation_id) is None, "once it has ended, nothing runs"
        with pytest.raises(ThreadlineError) as missing:
            asyncio.run(resume("no-such-conversation-here"))
        assert missing.value.status == 404
