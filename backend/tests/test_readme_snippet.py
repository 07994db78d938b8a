"""The README's `useChat` snippet, as a frontend developer copies it: run by the real `ai` Chat, a reload
mid-answer picks the answer up again where the server kept writing it."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
from helpers import new_conversation_id, serving
from threadline.client import Client
from threadline.http.identity import COOKIE
from threadline_testing.ai_sdk import readme_chat

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_use_chat_options() -> str:
    """The object literal the README passes to `useChat(...)`."""
    block = re.search(r"## From `useChat`.*?```ts\n(.*?)```", README.read_text(), re.S)
    assert block, "the README has a useChat snippet"
    call = re.search(r"useChat\((\{.*\})\);", block[1], re.S)
    assert call, block[1]
    return call[1]


def test_the_readme_snippet_resumes_an_answer_after_a_reload(make_settings):
    with serving(make_settings(demo_token_delay_ms=20.0)) as base_url:
        cookie = httpx.get(f"{base_url}/api/conversations").cookies[COOKIE]
        result = readme_chat(
            base_url, f"{COOKIE}={cookie}", new_conversation_id(), readme_use_chat_options(), "count to 60"
        )
    assert not result["errors"], result["errors"]
    (answer,) = [message for message in result["messages"] if message["role"] == "assistant"]
    text = "".join(part.get("text", "") for part in answer["parts"] if part["type"] == "text")
    assert result["shownBeforeReload"] and text.rstrip().endswith("60"), text


def test_the_readme_python_snippet_goes_on_in_one_conversation(make_settings, capsys):
    block = re.search(r"## From Python.*?```python\n(.*?)```", README.read_text(), re.S)
    assert block, "the README has a Python snippet"
    with serving(make_settings()) as base_url:
        namespace: dict = {}
        exec(block[1].replace("http://127.0.0.1:8000", base_url), namespace)  # the README's own code, as a user runs it
        with Client(base_url, token=namespace["client"].token) as same_visitor:
            (conversation,) = same_visitor.conversations()
            said = [message["role"] for message in same_visitor.messages(conversation.id)]
    assert said == ["user", "assistant", "user", "assistant"], "both questions in one conversation"
    assert "42" in capsys.readouterr().out
