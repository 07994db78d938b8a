"""Tool calls that wait for the person's approval, end to end with the real `ai` Chat: approve, deny, forged
and replayed responses, two calls in one step, a restart in between, a new message instead, and a stop."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from helpers import chat, chat_body, last_text, new_conversation_id, running, serving
from mcp import types
from threadline.client import Client
from threadline.http.identity import COOKIE
from threadline.mcp.toolbox import needs_approval
from threadline.settings import load_settings
from threadline.settings.mcp_servers import McpServerConfig
from threadline_testing.ai_sdk import approve_with_chat, read_with_ai
from threadline_testing.sse import parse_sse


@pytest.fixture
def server(make_settings):
    with serving(make_settings()) as base_url:
        yield base_url


def visitor(base_url: str) -> tuple[httpx.Client, str]:
    client = httpx.Client(base_url=base_url, timeout=30)
    client.get("/api/conversations")
    return client, f"{COOKIE}={client.cookies[COOKIE]}"


def conversation(client: httpx.Client, text: str = "hello") -> str:
    """A conversation of the visitor's own, to be deleted by the tool that needs approval."""
    conversation_id = new_conversation_id()
    assert client.post("/api/chat", json=chat_body(conversation_id, text)).status_code == 200
    return conversation_id


def exists(client: httpx.Client, conversation_id: str) -> bool:
    return client.get(f"/api/conversations/{conversation_id}").status_code == 200


def tool_parts(message: dict) -> list[dict]:
    return [part for part in message["parts"] if part["type"].startswith("tool-")]


def test_approved_the_tool_runs_once_and_the_answer_goes_on(server):
    client, cookie = visitor(server)
    victim, here = conversation(client), new_conversation_id()
    result = approve_with_chat(server, cookie, here, f"delete conversation {victim}", [{"approved": True}])
    assert not result["errors"] and len(result["requested"]) == 1
    answer = result["messages"][-1]
    assert len(result["messages"]) == 2, "the resumed answer continues the same assistant message"
    (part,) = tool_parts(answer)
    assert part["state"] == "output-available" and part["output"] == f"Deleted the conversation {victim}."
    assert "Deleted the conversation" in last_text(answer)
    assert not exists(client, victim)
    stored = client.get(f"/api/conversations/{here}").json()["messages"][-1]
    assert stored["id"] == answer["id"] and tool_parts(stored)[0]["state"] == "output-available"


def test_denied_the_tool_never_runs_and_the_model_answers_without_it(server):
    client, cookie = visitor(server)
    victim, here = conversation(client), new_conversation_id()
    result = approve_with_chat(
        server, cookie, here, f"delete conversation {victim}", [{"approved": False, "reason": "keep it"}]
    )
    assert not result["errors"]
    (part,) = tool_parts(result["messages"][-1])
    assert part["state"] == "output-denied"
    assert "declined" in last_text(result["messages"][-1])
    assert exists(client, victim), "a denied call never runs"
    stored = tool_parts(client.get(f"/api/conversations/{here}").json()["messages"][-1])[0]
    assert stored["state"] == "output-denied" and stored["approval"]["reason"] == "keep it"


def test_two_calls_in_one_step_each_get_a_request(server):
    client, cookie = visitor(server)
    first, second, here = conversation(client), conversation(client), new_conversation_id()
    result = approve_with_chat(
        server, cookie, here, f"delete conversations {first} and {second}", [{"approved": True}, {"approved": False}]
    )
    assert not result["errors"] and len(result["requested"]) == 2
    states = [part["state"] for part in tool_parts(result["messages"][-1])]
    assert states == ["output-available", "output-denied"]
    assert not exists(client, first) and exists(client, second)


def ask_for_approval(client: httpx.Client, text: str) -> tuple[str, dict, dict]:
    """Send a message whose tool call waits; the conversation, the request chunk and the stored answer."""
    here = new_conversation_id()
    chunks = parse_sse(client.post("/api/chat", json=chat_body(here, text)).content)
    request = next(chunk for chunk in chunks if chunk["type"] == "tool-approval-request")
    assert chunks[-1] == {
        "type": "finish",
        "finishReason": "tool-calls",
        "messageMetadata": chunks[-1]["messageMetadata"],
    }
    answer = client.get(f"/api/conversations/{here}").json()["messages"][-1]
    return here, request, answer


def responded(answer: dict, request: dict, approval_id: str | None = None, approved: bool = True) -> dict:
    """The assistant message as useChat sends it after addToolApprovalResponse."""
    part = tool_parts(answer)[0] | {"state": "approval-responded"}
    part["approval"] = {"id": approval_id or request["approvalId"], "approved": approved}
    return {"id": answer["id"], "role": "assistant", "parts": [part]}


def test_forged_replayed_and_strangers_responses_are_refused_and_nothing_runs(server):
    client, _ = visitor(server)
    victim = conversation(client)
    here, request, answer = ask_for_approval(client, f"delete conversation {victim}")
    assert tool_parts(answer)[0]["state"] == "approval-requested"

    forged = client.post("/api/chat", json={"id": here, "messages": [responded(answer, request, "forged-id")]})
    assert forged.status_code == 400 and forged.json()["error"]["code"] == "VALIDATION_ERROR"
    other_call = responded(answer, request)
    other_call["parts"][0]["toolCallId"] = "call_someone_else"
    assert client.post("/api/chat", json={"id": here, "messages": [other_call]}).status_code == 400
    stranger, _ = visitor(server)
    assert stranger.post("/api/chat", json={"id": here, "messages": [responded(answer, request)]}).status_code == 404
    assert exists(client, victim), "nothing ran"

    approved = client.post("/api/chat", json={"id": here, "messages": [responded(answer, request)]})
    assert approved.status_code == 200 and not exists(client, victim)
    replay = client.post("/api/chat", json={"id": here, "messages": [responded(answer, request)]})
    assert replay.status_code == 409 and replay.json()["error"]["code"] == "CONFLICT"


BUILT_IN_AS_HOSTED = str(Path(__file__).resolve().parents[2] / "examples" / "builtin.py") + ":graph"


@pytest.mark.parametrize("graph", [None, BUILT_IN_AS_HOSTED], ids=["built-in", "hosted create_agent"])
def test_an_approval_survives_a_restart(make_settings, graph):
    """A hosted agent's run that waits is saved when it stops to ask (its steps before are not checkpointed
    one by one: agent/hosting.py), and goes on in a new process."""
    settings = make_settings(graph=graph)
    with serving(settings) as base_url:
        client, _cookie = visitor(base_url)
        victim = conversation(client)
        here, request, answer = ask_for_approval(client, f"delete conversation {victim}")
    with serving(settings) as base_url:
        client.base_url = httpx.URL(base_url)
        resumed = client.post("/api/chat", json={"id": here, "messages": [responded(answer, request)]})
        assert resumed.status_code == 200 and not exists(client, victim)


def test_a_new_message_declines_what_waits_and_a_stop_clears_it(server):
    client, _ = visitor(server)
    victim = conversation(client)
    here, request, answer = ask_for_approval(client, f"delete conversation {victim}")
    declining = client.post("/api/chat", json=chat_body(here, "never mind"))
    assert declining.status_code == 200
    read = read_with_ai(declining.content)  # the declined call is the earlier answer's: not in this stream
    assert not read["errors"] and "never mind" in json.dumps(read["message"]["parts"])
    messages = client.get(f"/api/conversations/{here}").json()["messages"]
    assert tool_parts(messages[1])[0]["state"] == "output-denied"
    assert messages[1]["metadata"]["interrupted"] == "superseded" and messages[-1]["role"] == "assistant"
    late = client.post("/api/chat", json={"id": here, "messages": [responded(answer, request)]})
    assert late.status_code == 409 and exists(client, victim)

    there, request, answer = ask_for_approval(client, f"delete conversation {victim}")
    stopped = client.delete(f"/api/chat/{there}/stream")
    assert stopped.status_code == 200 and stopped.json()["cancelled"] is True
    assert tool_parts(client.get(f"/api/conversations/{there}").json()["messages"][-1])[0]["state"] == "output-denied"
    assert client.post("/api/chat", json={"id": there, "messages": [responded(answer, request)]}).status_code == 409
    assert exists(client, victim)


def test_which_tools_wait_for_approval():
    def tool(name: str, **hints) -> types.Tool:
        annotations = types.ToolAnnotations(**hints) if hints else None
        return types.Tool(name=name, inputSchema={"type": "object"}, annotations=annotations)

    plain = McpServerConfig(name="x", transport="builtin")
    assert needs_approval(tool("rm", destructiveHint=True), plain)
    assert not needs_approval(tool("rm", destructiveHint=True, readOnlyHint=True), plain)
    assert not needs_approval(tool("ls"), plain), "no annotations: it runs without asking"
    servers = json.dumps([{"name": "x", "transport": "builtin", "requireApproval": ["send_*"], "autoApprove": ["rm"]}])
    (configured,) = load_settings({"MCP_SERVERS": servers, "CHAT_MODEL_PROVIDER": "demo"}).mcp.mcp_servers
    assert needs_approval(tool("send_mail"), configured)
    assert not needs_approval(tool("rm", destructiveHint=True), configured), "autoApprove wins"


def test_the_python_client_approves_and_denies(server):
    with Client(server) as client:
        doomed, kept = client.ask("hello").conversation_id, client.ask("hello").conversation_id
        waiting = client.ask(f"delete conversation {doomed}")
        (call,) = waiting.tool_calls
        assert call.state == "approval-requested" and call.approval_id and waiting.finish_reason == "tool-calls"
        went_on = client.approve(waiting)
        assert went_on.tool_calls[0].state == "output-available" and "Deleted" in went_on.text
        declined = client.deny(client.ask(f"delete conversation {kept}"), "not now")
        assert declined.tool_calls[0].state == "output-denied" and "declined" in declined.text
        assert [row["conversation_id"] for row in client.list_conversations()].count(kept) == 1


async def test_the_models_mistakes_are_tool_input_errors_and_tools_have_titles(make_settings, openai_settings):
    async with running(openai_settings()) as client:
        _, missing_raw, missing = await chat(client, new_conversation_id(), "call a missing tool")
        _, broken_raw, broken = await chat(client, new_conversation_id(), "call with broken arguments")
    async with running(make_settings()) as client:
        _, invalid_raw, invalid = await chat(client, new_conversation_id(), 'use the calculator tool with {"x": 1}')
        _, _, titled = await chat(client, new_conversation_id(), "delete conversation nothing-here")
    for raw, chunks, error in (
        (missing_raw, missing, "There is no tool named 'no_such_tool'."),
        (broken_raw, broken, None),
        (invalid_raw, invalid, "Invalid input: 'expression' is a required property"),
    ):
        (failed,) = [chunk for chunk in chunks if chunk["type"] == "tool-input-error"]
        assert error is None or failed["errorText"] == error
        assert not [chunk for chunk in chunks if chunk["type"].startswith("tool-output")], "shown once, as the input's"
        read = read_with_ai(raw)
        assert not read["errors"]
        part = next(part for part in read["message"]["parts"] if part.get("toolCallId") == failed["toolCallId"])
        assert part["state"] == "output-error"
    call = next(chunk for chunk in titled if chunk["type"] == "tool-input-available")
    assert call["title"] == "Delete a conversation"
    usage = [chunk["messageMetadata"]["usage"] for chunk in invalid if chunk["type"] == "message-metadata"]
    assert len(usage) == 2 and usage[-1]["inputTokens"] > usage[0]["inputTokens"], "tokens so far, per model call"


async def test_a_profile_can_ask_for_more_approvals_or_fewer(make_settings):
    careful = {"id": "careful", "provider": "demo", "model": "demo", "require_approval": ["calc*"], "default": True}
    trusting = {"id": "trusting", "provider": "demo", "model": "demo", "auto_approve": ["delete_*"]}
    profiles = load_settings({"CHAT_PROFILES": json.dumps([careful, trusting])}).models.profiles
    async with running(make_settings(profiles=profiles)) as client:
        _, _, asked = await chat(client, new_conversation_id(), "calculate 2+2")
        _, _, ran = await chat(client, new_conversation_id(), "delete conversation nothing-here", profileId="trusting")
    assert "tool-approval-request" in [chunk["type"] for chunk in asked]
    assert [chunk["type"] for chunk in ran if chunk["type"].startswith("tool-")] == [
        "tool-input-available",
        "tool-output-error",  # it ran at once, and found no such conversation
    ]
