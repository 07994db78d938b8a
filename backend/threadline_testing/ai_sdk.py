"""Our streams read by real client code in Node (conformance/): the AI SDK's from npm, as `useChat` reads
them, and the clients the seed documents give."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

CONFORMANCE = Path(__file__).resolve().parents[2] / "conformance"


def _node(script: str, raw: bytes) -> dict:
    if not (CONFORMANCE / "node_modules" / "ai").exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=CONFORMANCE, check=True)
    result = subprocess.run(["node", str(CONFORMANCE / script)], input=raw, capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr.decode()
    return json.loads(result.stdout)


def read_with_ai(raw: bytes) -> dict:
    """A UI Message Stream parsed by the real `ai` package (see conformance/read-ui-stream.mjs)."""
    return _node("read-ui-stream.mjs", raw)


def read_with_ai4(raw: bytes) -> dict:
    """An AI SDK 4 data stream parsed by the real ai@4 client code (see conformance/read-data-stream.mjs)."""
    return _node("read-data-stream.mjs", raw)


def seed_004_client(base_url: str, cookie: str, message: str, **options: object) -> dict:
    """Seed 004's own `streamChatResponse` against a server (see conformance/seed-004-client.mjs)."""
    request = {"baseUrl": base_url, "cookie": cookie, "message": message, **options}
    return _node("seed-004-client.mjs", json.dumps(request).encode())


def approve_with_chat(base_url: str, cookie: str, conversation_id: str, text: str, decisions: list[dict]) -> dict:
    """The real `ai` Chat through a tool approval: send, answer each request, let it resume (approval-chat.mjs)."""
    request = {"baseUrl": base_url, "cookie": cookie, "conversationId": conversation_id, "text": text}
    return _node("approval-chat.mjs", json.dumps(request | {"decisions": decisions}).encode())


def check_chunks(raw: bytes) -> dict[str, list[str]]:
    """The chunk types each `ai` major version's schema rejects in a UI Message Stream (check-chunks.mjs)."""
    return _node("check-chunks.mjs", raw)


def resume_with_chat(base_url: str, cookie: str, conversation_id: str) -> dict:
    """The real `ai` Chat's resumeStream() against a server, as a reloaded page does (resume-chat.mjs)."""
    request = {"baseUrl": base_url, "cookie": cookie, "conversationId": conversation_id}
    return _node("resume-chat.mjs", json.dumps(request).encode())


def readme_chat(base_url: str, cookie: str, conversation_id: str, options: str, text: str) -> dict:
    """The README's `useChat` options (`options`, its object literal) in the real `ai` Chat: `text` sent, the page
    gone mid-answer, and a reloaded page resuming (readme-chat.mjs)."""
    request = {"baseUrl": base_url, "cookie": cookie, "conversationId": conversation_id}
    return _node("readme-chat.mjs", json.dumps(request | {"options": options, "text": text}).encode())


def send_files_with_chat(base_url: str, cookie: str, conversation_id: str, text: str, files: list[dict]) -> dict:
    """The real `ai` Chat sending files with a message, and the history read back and validated (file-chat.mjs)."""
    request = {"baseUrl": base_url, "cookie": cookie, "conversationId": conversation_id, "text": text}
    return _node("file-chat.mjs", json.dumps(request | {"files": files}).encode())


def edit_with_chat(base_url: str, cookie: str, conversation_id: str) -> dict:
    """The real `ai` Chat editing a message and regenerating its answer, the history read back (edit-chat.mjs)."""
    request = {"baseUrl": base_url, "cookie": cookie, "conversationId": conversation_id}
    return _node("edit-chat.mjs", json.dumps(request).encode())


def browser_tool_chat(base_url: str, cookie: str, conversation_id: str, text: str, **page: object) -> dict:
    """The real `ai` Chat with the page's own tools (browser-tool-chat.mjs): `tools` in the body, `outputs` (and
    `errors`) by tool name given with addToolOutput, the answered message sent back automatically."""
    request = {"baseUrl": base_url, "cookie": cookie, "conversationId": conversation_id, "text": text, **page}
    return _node("browser-tool-chat.mjs", json.dumps(request).encode())


def run_ag_ui(base_url: str, cookie: str, thread_id: str, runs: list[dict]) -> dict:
    """Runs through the real @ag-ui/client HttpAgent, its verifier included (ag-ui-client.mjs): `runs` are
    `{text, fresh?, forwardedProps?, resolve?, cancel?, tools?, outputs?}`; each gives its event types, events, the
    browser tools' calls it left pending, the agent's messages and any error."""
    request = {"baseUrl": base_url, "cookie": cookie, "threadId": thread_id, "runs": runs}
    return _node("ag-ui-client.mjs", json.dumps(request).encode())
