"""Public LangGraph agents nobody on this project wrote, served unchanged (sources/README.md says what a test
had to replace) through THREADLINE_GRAPH, their models answered by the provider stand-ins, read by the real
`ai` 7 and `ai` 4 clients: each answers, runs its tools, keeps its history as the person saw it."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import chat, chat_body, new_conversation_id, running
from test_agents import accepted, parts, texts
from threadline_testing import standins
from threadline_testing.ai_sdk import read_with_ai4
from threadline_testing.standins import Call, Reply

SOURCES = Path(__file__).resolve().parent / "sources"


@pytest.fixture
def anthropic(monkeypatch):
    """The Anthropic stand-in, where an agent's own `init_chat_model("anthropic:…")` reaches it."""
    standin = standins.start("anthropic")
    monkeypatch.delenv("ANTHROPIC_API_URL", raising=False)  # read before ANTHROPIC_BASE_URL
    monkeypatch.setenv("ANTHROPIC_BASE_URL", standin.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.syspath_prepend(str(SOURCES))
    yield standin
    standin.stop()


def react_script(call: Call) -> Reply | None:
    """The ReAct template's model: searches when asked to, then counts the pages its search tool returned."""
    if call.last_result is not None:
        return Reply(text=f"I found {call.last_result.count('Result ')} pages.")
    if call.users[-1].startswith("search "):
        return Reply(tool=("search", {"query": call.users[-1].removeprefix("search ")}))
    return None


async def test_the_react_template_runs_on_its_own_context(make_settings, anthropic):
    """Its context is its own `Context` dataclass (a "provider/model" string, `max_search_results`), from the
    schema's defaults, the operator's THREADLINE_GRAPH_CONTEXT and the request's listed keys."""
    anthropic.script = react_script
    settings = make_settings(
        graph="react_agent.graph:graph",
        graph_context={"max_search_results": 3},
        request_context=("max_search_results",),
    )
    async with running(settings) as client:
        conversation_id = new_conversation_id()
        _, raw, _ = await chat(client, conversation_id, "hello there")
        assert texts(accepted(raw)["message"]) == "Echo: hello there (user messages seen: 1)"
        _, raw, _ = await chat(client, conversation_id, "search tide pools")
        message = accepted(raw)["message"]
        (search,) = parts(message, "tool-search")
        assert search["state"] == "output-available" and search["input"] == {"query": "tide pools"}
        assert texts(message) == "I found 3 pages.", "the operator's max_search_results"
        _, raw, _ = await chat(client, conversation_id, "search crabs", context={"max_search_results": 5})
        assert texts(accepted(raw)["message"]) == "I found 5 pages.", "the request's value, for this message"
        response = await client.post("/api/chat?protocol=data-stream", json=chat_body(conversation_id, "search kelp"))
        assert read_with_ai4(response.content)["message"]["content"] == "I found 3 pages."
        history = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"]
        assert [m["role"] for m in history] == ["user", "assistant"] * 4
        assert [texts(m) for m in history[1::2]] == [
            "Echo: hello there (user messages seen: 1)",
            "I found 3 pages.",
            "I found 5 pages.",
            "I found 3 pages.",
        ]
        assert anthropic.calls[0].system.startswith("You are a helpful AI assistant."), "its own prompt"


@pytest.mark.parametrize(
    ("context", "said"),
    [
        ({"model": "openai/gpt-4o"}, "a request cannot set model; it may set max_search_results"),
        ({"max_search_results": "many"}, "Expected `int`, got `str` - at `max_search_results`"),
    ],
)
async def test_a_request_sets_only_the_listed_keys_of_an_agents_context(make_settings, anthropic, context, said):
    settings = make_settings(graph="react_agent.graph:graph", request_context=("max_search_results",))
    async with running(settings) as client:
        response = await client.post("/api/chat", json=chat_body(None, "hello", context=context))
    assert response.status_code == 400, response.text
    (detail,) = response.json()["error"]["details"]
    assert detail["field"] == "context" and said in detail["message"]
