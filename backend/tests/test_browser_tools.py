"""Browser tools: tools the page declares and runs itself, on both families of clients. The real `ai` Chat sends
them in the chat body and answers a call with `addToolOutput`; the real @ag-ui/client sends them as the run's
`tools` and answers with a tool message. The model is offered them beside the agent's own, a call of one is never
run on the server, the answer ends with it open, and the agent goes on from the page's output, live as in history."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from helpers import chat, chat_body, new_conversation_id, running, serving
from test_ag_ui import visitor
from test_agents import parts, texts
from threadline.client import AgentOptions, Client
from threadline.settings.profiles import Profile
from threadline_testing import standins
from threadline_testing.ai_sdk import browser_tool_chat, read_with_ai4, run_ag_ui
from threadline_testing.standins import Call, Reply

LOCATION = {
    "name": "get_location",
    "description": "Where the person is, as their browser knows it.",
    "parameters": {"type": "object", "properties": {"precision": {"type": "string", "enum": ["city", "exact"]}}},
}
HERE = {"city": "Lisbon"}


def ask_the_page(call: Call) -> Reply | None:
    """The model calls the page's tool when it is offered one and has no result yet; then the usual script."""
    if "get_location" in call.tools and "get_location" not in call.results:
        return Reply(tool=("get_location", {"precision": "city"}))
    return None


@pytest.fixture
def standin() -> Iterator[standins.StandIn]:
    standin = standins.start("openai")
    standin.script = ask_the_page
    yield standin
    standin.stop()


def on_standin(make_settings, standin: standins.StandIn, **overrides):
    profile = Profile(
        id="standin", provider="openai", model="gpt-standin", base_url=standin.base_url, api_key="sk-test", default=True
    )
    return make_settings(profiles=(profile,), **overrides)


def offered(standin: standins.StandIn) -> dict:
    """The page's tool as the provider received it in the first model call."""
    tools = {tool["function"]["name"]: tool["function"] for tool in standin.requests[0]["tools"]}
    return tools["get_location"]


def test_use_chat_runs_the_pages_tool_and_the_agent_goes_on_from_its_output(make_settings, standin):
    with serving(on_standin(make_settings, standin)) as base_url:
        cookie, conversation_id = visitor(base_url), new_conversation_id()
        result = browser_tool_chat(
            base_url, cookie, conversation_id, "where am I?", tools=[LOCATION], outputs={"get_location": HERE}
        )
    assert result["errors"] == [] and result["valid"] is True, result
    assert [call["toolName"] for call in result["calls"]] == ["get_location"], "the page ran it, once"
    assert offered(standin)["description"] == LOCATION["description"]
    assert offered(standin)["parameters"] == LOCATION["parameters"]
    answer = result["messages"][-1]
    (tool,) = parts(answer, "tool-get_location")
    assert tool["state"] == "output-available" and tool["output"] == HERE and tool["input"] == {"precision": "city"}
    assert texts(answer) == f"The tool said {json.dumps(HERE)}.", "the model read the page's output"
    saved = result["history"]
    assert [message["role"] for message in saved] == ["user", "assistant"], "one answer, resumed, as it was shown"
    (kept,) = parts(saved[1], "tool-get_location")
    assert (kept["state"], kept["output"], kept["toolCallId"]) == ("output-available", HERE, tool["toolCallId"])
    assert texts(saved[1]) == texts(answer)


def test_a_tool_the_page_could_not_run_is_the_error_the_model_reads(make_settings, standin):
    with serving(on_standin(make_settings, standin)) as base_url:
        cookie, conversation_id = visitor(base_url), new_conversation_id()
        result = browser_tool_chat(
            base_url,
            cookie,
            conversation_id,
            "where am I?",
            tools=[LOCATION],
            outputs={},
            errors={"get_location": "denied"},
        )
    assert result["errors"] == [] and result["valid"] is True, result
    (tool,) = parts(result["history"][1], "tool-get_location")
    assert tool["state"] == "output-error" and tool["errorText"] == "denied"
    assert texts(result["history"][1]) == "The tool said denied."


def test_an_ag_ui_run_ends_with_the_browser_tools_call_pending_and_the_next_run_goes_on_from_its_result(
    make_settings, standin
):
    with serving(on_standin(make_settings, standin)) as base_url:
        cookie, thread = visitor(base_url), new_conversation_id()
        runs = [
            {"text": "where am I?", "tools": [LOCATION]},
            {"tools": [LOCATION], "outputs": {"get_location": "Lisbon"}},
            {"text": "thanks", "fresh": True, "tools": [LOCATION]},
        ]
        asked, answered, later = run_ag_ui(base_url, cookie, thread, runs)["runs"]
    for run in (asked, answered, later):
        assert run.get("error") is None, run
    (call_id,) = asked["pending"]
    finished = asked["events"][-1]
    assert finished["outcome"] == {"type": "success", "pendingToolCallIds": [call_id]}
    assert "TOOL_CALL_RESULT" not in asked["types"], "never run on the server"
    assert answered["pending"] == [] and "TOOL_CALL_RESULT" not in answered["types"], "the client holds its result"
    # One answer is one assistant message (wires/ag_ui.py): the call, then what the agent said after its result.
    assert [(m["role"], m.get("content")) for m in answered["messages"][-2:]] == [
        ("assistant", "The tool said Lisbon."),
        ("tool", "Lisbon"),
    ]
    assert answered["messages"][-2]["toolCalls"][0]["id"] == call_id
    roles = [(m["role"], m.get("toolCallId")) for m in later["messages"]]
    assert roles[:3] == [("user", None), ("assistant", None), ("tool", call_id)], "a reloaded client holds it all"
    assert later["messages"][2]["content"] == "Lisbon"


def test_a_python_program_runs_its_own_tool_and_the_agent_goes_on_from_its_output(make_settings, standin):
    """The Python client's way: the tools in `AgentOptions`, the answer's `open_calls`, `send_outputs`."""
    own = AgentOptions(tools=[LOCATION])
    with serving(on_standin(make_settings, standin)) as base_url, Client(base_url) as client:
        asked = client.ask("where am I?", agent=own)
        (call,) = asked.open_calls
        assert (call.tool_name, call.input) == ("get_location", {"precision": "city"})
        answer = client.send_outputs(asked, {call.tool_call_id: HERE}, agent=own)
    assert answer.text == f"The tool said {json.dumps(HERE)}." and answer.open_calls == []
    assert answer.tool_calls[0].output == HERE and answer.id == asked.id, "the same answer, gone on"


HOSTED = """
from langchain.agents import create_agent
from threadline.agent.browser_tools import BrowserTools


def with_browser_tools(context):
    return create_agent(context.model, [], middleware=[BrowserTools()])


def without(context):
    return create_agent(context.model, [])
"""


async def test_a_teams_create_agent_takes_browser_tools_once_it_lists_the_middleware(make_settings, standin, tmp_path):
    path = tmp_path / "browser_agent.py"
    path.write_text(HOSTED)
    conversation_id = new_conversation_id()
    async with running(on_standin(make_settings, standin, graph=f"{path}:without")) as client:
        refused = await client.post("/api/chat", json=chat_body(conversation_id, "where am I?", tools=[LOCATION]))
    assert refused.status_code == 400 and "BrowserTools" in refused.json()["error"]["message"]
    async with running(on_standin(make_settings, standin, graph=f"{path}:with_browser_tools")) as client:
        _, _, chunks = await chat(client, conversation_id, "where am I?", tools=[LOCATION])
        (call,) = [chunk for chunk in chunks if chunk["type"] == "tool-input-available"]
        assert call["toolName"] == "get_location" and chunks[-1]["type"] == "finish"
        assert not any(chunk["type"].startswith("tool-output") for chunk in chunks)
        answer = {"id": "a1", "role": "assistant", "parts": [tool_output(call["toolCallId"], "Porto")]}
        body = {"id": conversation_id, "messages": [answer], "tools": [LOCATION]}
        resumed = await client.post("/api/chat", json=body)
        assert resumed.status_code == 200
        again = await client.post("/api/chat", json=body)
        assert again.status_code == 409, "an output is taken once"
        history = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"]
    (tool,) = parts(history[1], "tool-get_location")
    assert tool["output"] == "Porto" and texts(history[1]) == "The tool said Porto."


def tool_output(call_id: str, output: object) -> dict:
    return {"type": "tool-get_location", "toolCallId": call_id, "state": "output-available", "output": output}


async def test_browser_tools_that_cannot_be_offered_are_refused_and_a_new_message_declines_a_call_that_waits(
    make_settings, standin
):
    conversation_id = new_conversation_id()
    async with running(on_standin(make_settings, standin)) as client:
        for tools, word in [
            ([LOCATION | {"name": "calculator"}], "'calculator' is the name of one of the agent's own tools"),
            ([LOCATION, LOCATION], "declared twice"),
            ([LOCATION | {"parameters": {"type": "string"}}], "must be an object's"),
            ([LOCATION | {"name": "get location"}], "name"),
            ([LOCATION] * 33, "32"),
        ]:
            refused = await client.post("/api/chat", json=chat_body(conversation_id, "where am I?", tools=tools))
            assert refused.status_code == 400 and word in refused.text, refused.text
        nothing = {"id": conversation_id, "messages": [{"role": "assistant", "parts": [tool_output("c1", "x")]}]}
        assert (await client.post("/api/chat", json=nothing)).status_code == 404, "no conversation yet"
        paused = await client.post(
            "/api/chat?protocol=data-stream", json=chat_body(conversation_id, "where am I?", tools=[LOCATION])
        )
        (call,) = read_with_ai4(paused.content)["message"]["toolInvocations"]  # ai 4 reads the call, left open
        assert (call["toolName"], call["state"], call["args"]) == ("get_location", "call", {"precision": "city"})
        stale = {"id": conversation_id, "messages": [{"role": "assistant", "parts": [tool_output("c1", "x")]}]}
        missing = await client.post("/api/chat", json=stale)
        assert missing.status_code == 400 and "missing" in missing.text
        _, _, chunks = await chat(client, conversation_id, "never mind: calculate 6*7")
        assert chunks[-1]["type"] == "finish"
        history = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"]
    (tool,) = parts(history[1], "tool-get_location")
    assert tool["state"] == "output-denied", "a new message declines the call that waited"
    assert history[1]["metadata"]["interrupted"] == "superseded"
