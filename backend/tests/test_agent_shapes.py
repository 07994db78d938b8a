"""Any LangGraph graph as LangGraph runs it, beyond chat agents built the usual way: hidden model calls, a provider
that streams one call under two ids, an output schema without `messages`, factories of any arity, graph names as a
`langgraph.json` writes them. Each graph here is the smallest one that shows what a public agent does
(agents/sources/README.md names them); read by the real `ai` 7 client, and its history checked against the stream."""

from __future__ import annotations

import asyncio
import json
import sys

import httpx
import pytest
from helpers import chat, chat_body, first_deltas, new_conversation_id, running, saved_answer, serving, standin_for
from test_agents import accepted, parts, texts
from test_cli import threadline
from test_public_agents import history_of, shown
from threadline.answers.thread_access import matches
from threadline.refusals import Refused
from threadline.settings.answers import AgentLimits
from threadline_testing.sse import parse_sse
from threadline_testing.standins import Call, Reply

# The tool every graph here calls: `use the shout tool with {"text": "hello"}` gets "HELLO".
SHOUT = """

@tool
def shout(text: str) -> str:
    "Say it louder."
    return text.upper()
"""


def shouted(message: dict) -> None:
    """The answer ran the shout tool: its part has the tool's output."""
    (tool,) = parts(message, "tool-shout")
    assert tool["state"] == "output-available" and tool["output"] == "HELLO"


async def history_is_the_stream(client, conversation_id: str, message: dict) -> None:
    """The conversation's one answer, reloaded, is what the `ai` client built from the stream."""
    (saved,) = (await history_of(client, conversation_id))[1::2]
    assert shown(saved) == shown(message)


HIDDEN_CALLS = (
    """
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

"""
    + SHOUT
    + """

def graph(context):
    # open_deep_research tags every model call so: LangSmith and the Agent Server do not stream it
    model = context.model.bind_tools([shout]).with_config(tags=[TAG])

    async def agent(state):
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([shout]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder


class Notes(MessagesState):
    notes: list


def aside(context):
    # the supervisor pattern of open_deep_research: a hidden call's tool calls and their results kept in a key of
    # its own, and only the report in `messages`
    model = context.model.bind_tools([shout]).with_config(tags=[TAG])

    async def research(state):
        call = await model.ainvoke(state["messages"])
        results = await ToolNode([shout]).ainvoke({"messages": [call]})
        return {"notes": [call, *results["messages"]]}

    async def report(state):
        return {"messages": [AIMessage("Report: " + state["notes"][-1].text)]}

    builder = StateGraph(Notes)
    builder.add_node("research", research)
    builder.add_node("report", report)
    builder.add_edge(START, "research")
    builder.add_edge("research", "report")
    return builder
"""
)


@pytest.mark.parametrize("tag", ["nostream", "langsmith:nostream"])
async def test_a_hidden_call_that_lands_in_the_messages_is_shown_whole_with_its_tool_calls(
    make_settings, tmp_path, tag
):
    path = tmp_path / "hidden_calls.py"
    path.write_text(HIDDEN_CALLS.replace("TAG", repr(tag)))
    async with running(make_settings(graph=f"{path}:graph")) as client:
        conversation_id = new_conversation_id()
        _, raw, chunks = await chat(client, conversation_id, 'use the shout tool with {"text": "hello"}')
        message = accepted(raw)["message"]
        shouted(message)
        assert "HELLO" in texts(message), "the answer after the tool, though its call was hidden too"
        assert sum(chunk["type"] == "text-delta" for chunk in chunks) == 1, "shown whole when it landed"
        await history_is_the_stream(client, conversation_id, message)


@pytest.mark.parametrize("tag", ["nostream", "langsmith:nostream"])
async def test_a_hidden_calls_tool_calls_kept_aside_are_hidden_with_their_results(make_settings, tmp_path, tag):
    path = tmp_path / "hidden_calls.py"
    path.write_text(HIDDEN_CALLS.replace("TAG", repr(tag)))
    async with running(make_settings(graph=f"{path}:aside")) as client:
        conversation_id = new_conversation_id()
        _, raw, _ = await chat(client, conversation_id, 'use the shout tool with {"text": "hello"}')
        message = accepted(raw)["message"]
        assert not [part for part in message["parts"] if part["type"].startswith("tool-")]
        assert texts(message) == "Report: HELLO"
        await history_is_the_stream(client, conversation_id, message)


RESPONSES_API = (
    """
from langchain.agents import create_agent
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

"""
    + SHOUT
    + """

agent = create_agent(ChatOpenAI(model="gpt-5.5", use_responses_api=True), [shout])
"""
)


def shout_script(call: Call) -> Reply:
    if call.last_result is not None:
        return Reply(text=f"It said {call.last_result}.")
    return Reply(text="Let me shout.", tool=("shout", {"text": "hello"}))


async def test_a_responses_api_call_is_one_message_and_its_tool_result_comes_when_it_finishes(make_settings, tmp_path):
    """OpenAI's Responses API streams one call under LangChain's run id, then the response's id."""
    path = tmp_path / "responses_agent.py"
    path.write_text(RESPONSES_API)
    with standin_for("openai", "OPENAI_BASE_URL", "OPENAI_API_KEY") as openai:
        openai.script = shout_script
        async with running(make_settings(graph=f"{path}:agent")) as client:
            conversation_id = new_conversation_id()
            _, raw, chunks = await chat(client, conversation_id, "shout hello")
            message = accepted(raw)["message"]
            shouted(message)
            kinds = [chunk["type"] for chunk in chunks]
            assert kinds.index("tool-output-available") < kinds.index("finish-step"), "not held to the end"
            assert texts(message) == "Let me shout.It said HELLO."
            await history_is_the_stream(client, conversation_id, message)


NAMED_AGENT = """
from langchain.agents import create_agent
from langchain_openai import ChatOpenAI

agent = create_agent(ChatOpenAI(model="gpt-standin"), [], name="researcher")
"""


WRITTEN_WHOLE = """
from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph


def two_at_once(context):
    builder = StateGraph(MessagesState)
    builder.add_node("write", lambda state: {"messages": [AIMessage("First."), AIMessage("Second.")]})
    builder.add_edge(START, "write")
    return builder


def streamed_then_written(context):
    async def talk(state):
        return {"messages": [await context.model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("talk", talk)
    builder.add_node("sign", lambda state: {"messages": [AIMessage("Signed, the agent.")]})
    builder.add_edge(START, "talk")
    builder.add_edge("talk", "sign")
    return builder
"""


@pytest.mark.parametrize(
    ("graph", "last"), [("two_at_once", "Second."), ("streamed_then_written", "Signed, the agent.")]
)
async def test_each_of_the_agents_messages_is_a_text_part_of_its_own_live_and_in_history(
    make_settings, tmp_path, graph, last
):
    """Two messages a node writes at once, or a streamed one and one a node writes after it, are two text parts, not
    one text joined, in the stream as in the history."""
    path = tmp_path / "written_whole.py"
    path.write_text(WRITTEN_WHOLE)
    async with running(make_settings(graph=f"{path}:{graph}")) as client:
        conversation_id = new_conversation_id()
        _, raw, _ = await chat(client, conversation_id, "hello")
        message = accepted(raw)["message"]
        said = [part["text"] for part in parts(message, "text")]
        assert len(said) == 2 and said[1] == last, said
        await history_is_the_stream(client, conversation_id, message)


def test_a_stopped_answer_of_a_named_agent_keeps_its_name_live_and_in_history(make_settings, tmp_path):
    """A team's named create_agent (a supervisor's worker) says who speaks as its call streams (`lc_agent_name`),
    before its message has a name: an answer stopped mid-call keeps it."""
    path = tmp_path / "named_agent.py"
    path.write_text(NAMED_AGENT)
    with standin_for("openai", "OPENAI_BASE_URL", "OPENAI_API_KEY") as openai:
        openai.script = lambda call: Reply(text=" ".join(map(str, range(1, 61))), pace=0.02)
        with serving(make_settings(graph=f"{path}:agent")) as base_url:
            live, saved = asyncio.run(stop_midway(base_url))
    by = {"threadline": {"agent": "researcher"}}
    (ended,) = [chunk for chunk in live if chunk["type"] == "text-end"]
    assert ended.get("providerMetadata") == by, ended
    (text,) = parts(saved, "text")
    assert saved["metadata"]["interrupted"] == "cancelled" and text["providerMetadata"] == by


async def stop_midway(base_url: str) -> tuple[list[dict], dict]:
    """The chunks an answer streamed before and after it was stopped mid-way, and the answer as it was saved."""
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
        await client.get("/api/conversations")
        conversation_id = new_conversation_id()
        request = client.build_request("POST", "/api/chat", json=chat_body(conversation_id, "count slowly"))
        response = await client.send(request, stream=True)
        _, chunks = await first_deltas(response, 3)
        stop = await client.post("/api/cancel_stream", json={"conversation_id": conversation_id})
        assert stop.status_code == 200
        live = [chunk async for chunk in chunks]
        return live, await saved_answer(client, conversation_id)


OUTPUT_SCHEMA = (
    """
from typing import TypedDict

from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

"""
    + SHOUT
    + """

class Found(TypedDict):
    info: dict


class State(MessagesState):
    info: dict


def graph(context):
    # data-enrichment's shape: the agent works in `messages`, and its output schema lets only `info` through
    model = context.model.bind_tools([shout])

    async def agent(state):
        answer = await model.ainvoke(state["messages"])
        return {"messages": [answer], "info": {"said": answer.text}}

    builder = StateGraph(State, input_schema=MessagesState, output_schema=Found)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([shout]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder


def no_arguments():  # deepagents' text-to-sql example: a factory that takes nothing
    builder = StateGraph(MessagesState)
    builder.add_node("agent", lambda state: {"messages": [("ai", "Made by a factory of no arguments.")]})
    builder.add_edge(START, "agent")
    return builder.compile()


def with_config(config):
    builder = StateGraph(MessagesState)
    builder.add_node("agent", lambda state: {"messages": [("ai", f"Made for {sorted(config)}.")]})
    builder.add_edge(START, "agent")
    return builder.compile()
"""
)


async def test_an_output_schema_without_messages_hides_nothing_of_what_the_agent_did(make_settings, tmp_path):
    path = tmp_path / "output_schema.py"
    path.write_text(OUTPUT_SCHEMA)
    async with running(make_settings(graph=f"{path}:graph")) as client:
        conversation_id = new_conversation_id()
        _, raw, _ = await chat(client, conversation_id, 'use the shout tool with {"text": "hello"}')
        message = accepted(raw)["message"]
        shouted(message)
        assert "HELLO" in texts(message)
        history = await history_of(client, conversation_id)
        assert [m["role"] for m in history] == ["user", "assistant"]
        assert shown(history[1]) == shown(message)


@pytest.mark.parametrize(
    ("factory", "said"),
    [("no_arguments", "Made by a factory of no arguments."), ("with_config", "Made for ['configurable'].")],
)
async def test_a_factory_takes_what_langgraph_json_allows(make_settings, tmp_path, factory, said):
    path = tmp_path / "output_schema.py"
    path.write_text(OUTPUT_SCHEMA)
    async with running(make_settings(graph=f"{path}:{factory}")) as client:
        _, raw, _ = await chat(client, new_conversation_id(), "hi")
        assert texts(accepted(raw)["message"]) == said


async def test_a_graph_is_named_as_its_langgraph_json_writes_it(make_settings, tmp_path):
    (tmp_path / "speakers.py").write_text(OUTPUT_SCHEMA)
    (tmp_path / "langgraph.json").write_text(
        json.dumps({"graphs": {"Email Agent": "./speakers.py:no_arguments", "v1.config": "./speakers.py:with_config"}})
    )
    async with running(make_settings(graph=str(tmp_path / "langgraph.json"))) as client:
        listed = (await client.get("/api/agents")).json()
        assert [agent["id"] for agent in listed] == ["Email Agent", "v1.config"]
        conversation_id = new_conversation_id()
        _, raw, _ = await chat(client, conversation_id, "hi", agent="v1.config")
        assert texts(accepted(raw)["message"]) == "Made for ['configurable']."
        rows = (await client.get("/api/conversations")).json()
        assert [row["agentId"] for row in rows] == ["v1.config"]
        for refused in ("Nobody", "Email\nAgent", "x" * 129):
            response = await client.post("/api/chat", json=chat_body(new_conversation_id(), "hi", agent=refused))
            assert response.status_code == 400, refused
            assert response.json()["error"]["details"][0]["field"] == "agent"


PYDANTIC_ANSWER = """
from langchain.agents import create_agent
from langchain.agents.structured_output import ToolStrategy
from langchain_anthropic import ChatAnthropic
from pydantic import BaseModel


class Weather(BaseModel):
    city: str
    high_c: int


agent = create_agent(ChatAnthropic(model="claude-sonnet-4-5"), [], response_format=ToolStrategy(Weather))
"""


async def test_a_pydantic_structured_answer_is_json_live_and_in_the_history(make_settings, tmp_path):
    path = tmp_path / "pydantic_answer.py"
    path.write_text(PYDANTIC_ANSWER)
    with standin_for("anthropic", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY") as anthropic:
        anthropic.script = lambda call: Reply(tool=("Weather", {"city": "Lisbon", "high_c": 24}))
        async with running(make_settings(graph=f"{path}:agent")) as client:
            conversation_id = new_conversation_id()
            _, raw, _ = await chat(client, conversation_id, "the weather in Lisbon?")
            (live,) = parts(accepted(raw)["message"], "data-structured-response")
            assert live["data"] == {"city": "Lisbon", "high_c": 24}
            (saved,) = parts((await history_of(client, conversation_id))[1], "data-structured-response")
            assert saved["data"] == live["data"]


OWN_STORE = """
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage
from langgraph.config import get_store
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.store.memory import InMemoryStore

# langgraph-bigtool's and langmem's pattern: the agent's tools or memories in an indexed store compiled into it
store = InMemoryStore(index={"dims": 8, "embed": DeterministicFakeEmbedding(size=8), "fields": ["about"]})
store.put(("tools",), "shout", {"about": "say something louder"})


async def look_up(state):
    found = await get_store().asearch(("tools",), query=state["messages"][-1].text)
    return {"messages": [AIMessage(f"Found {len(found)}: {', '.join(item.key for item in found)}.")]}


builder = StateGraph(MessagesState)
builder.add_node("look_up", look_up)
builder.add_edge(START, "look_up")
agent = builder.compile(store=store)
"""


async def test_an_agents_own_store_is_the_one_it_reads_and_check_says_so(make_settings, tmp_path):
    path = tmp_path / "own_store.py"
    path.write_text(OWN_STORE)
    async with running(make_settings(graph=f"{path}:agent")) as client:
        _, raw, _ = await chat(client, new_conversation_id(), "a tool to shout")
        assert texts(accepted(raw)["message"]) == "Found 1: shout."
    checked = threadline("check", "--graph", f"{path}:agent", THREADLINE_DATA_DIR=str(tmp_path))
    said = dict(line.split(":", 1) for line in checked.stdout.splitlines())
    assert said["agent memory"].strip().startswith("agent: its own InMemoryStore; else threadline's"), said


TYPED_INPUT = """
from typing import TypedDict

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph


class Email(TypedDict):  # typing's TypedDict: Pydantic builds no JSON schema from it on Python 3.11
    author: str
    subject: str


class Input(MessagesState):
    email_input: Email


class State(Input):
    seen: int


def read(state):
    email = state["email_input"]
    return {"messages": [AIMessage(f"From {email['author']}: {email['subject']}.")]}


builder = StateGraph(State, input_schema=Input)
builder.add_node("read", read)
builder.add_edge(START, "read")
agent = builder.compile()
"""


async def test_a_typed_dict_input_is_checked_by_its_type_hints_and_a_missing_key_is_named(make_settings, tmp_path):
    """agents-from-scratch's email assistant takes `email_input`; a message without it is a 400 naming it, not the
    agent's KeyError; given once, it is kept for the conversation's next messages."""
    path = tmp_path / "typed_input.py"
    path.write_text(TYPED_INPUT)
    async with running(make_settings(graph=f"{path}:agent")) as client:
        conversation_id = new_conversation_id()
        missing = await client.post("/api/chat", json=chat_body(conversation_id, "read it"))
        assert missing.status_code == 400, missing.text
        assert "email_input" in missing.json()["error"]["message"]
        email = {"author": "Ana", "subject": "Lunch"}
        _, raw, _ = await chat(client, conversation_id, "read it", input={"email_input": email})
        assert texts(accepted(raw)["message"]) == "From Ana: Lunch."
        _, raw, _ = await chat(client, conversation_id, "again")
        assert texts(accepted(raw)["message"]) == "From Ana: Lunch.", "kept from the message that gave it"
        wrong = await client.post("/api/chat", json=chat_body(conversation_id, "hi", input={"email_input": "x"}))
        assert wrong.status_code == 400 and "email_input" in wrong.json()["error"]["details"][0]["message"]
        unknown = await client.post("/api/chat", json=chat_body(conversation_id, "hi", input={"seen": 1}))
        assert unknown.status_code == 400 and "it takes email_input" in unknown.json()["error"]["details"][0]["message"]
        history = await history_of(client, conversation_id)  # the refused message is kept, as after any failure
        assert [texts(m) for m in history[-4:]] == ["read it", "From Ana: Lunch.", "again", "From Ana: Lunch."]


UNSAVEABLE = """
import math
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph


class State(MessagesState):
    scope: dict[str, Any]


async def run_code(state):
    # langgraph-codeact keeps the names its code defined, `import math` among them: a module, which no checkpoint
    # serializer stores
    return {"messages": [AIMessage("I imported math.")], "scope": {"math": math}}


builder = StateGraph(State)
builder.add_node("run_code", run_code)
builder.add_edge(START, "run_code")
agent = builder.compile()
"""


async def test_state_that_cannot_be_saved_is_the_agents_error_naming_the_type_and_keeps_what_was_shown(
    make_settings, tmp_path
):
    path = tmp_path / "unsaveable.py"
    path.write_text(UNSAVEABLE)
    async with running(make_settings(graph=f"{path}:agent")) as client:
        conversation_id = new_conversation_id()
        response = await client.post("/api/chat", json=chat_body(conversation_id, "import math"))
        chunks = parse_sse(response.content)
        (error,) = [chunk for chunk in chunks if chunk["type"] == "error"]
        assert "The agent's state could not be saved" in error["errorText"], "the agent's error, not the service's"
        assert "module" in error["errorText"], "names the type that could not be saved"
        assert "I imported math." in [chunk.get("delta") for chunk in chunks]
        history = await history_of(client, conversation_id)
        assert [texts(m) for m in history] == ["import math", "I imported math."], "what the person saw is kept"


WORKS_BEFORE_IT_SPEAKS = """
import asyncio

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph


def graph(context):
    # open_deep_research's shape: it researches with hidden calls and steps before it says anything
    model = context.model.with_config(tags=["langsmith:nostream"])

    async def research(state):
        await model.ainvoke(state["messages"])  # its tokens come for longer than the first-token limit
        return {}

    async def read_sources(state):
        await asyncio.sleep(0.4)
        return {}

    async def check_sources(state):
        await asyncio.sleep(0.4)
        return {}

    async def report(state):
        return {"messages": [AIMessage("Here is the report.")]}

    builder = StateGraph(MessagesState)
    for node in (research, read_sources, check_sources, report):
        builder.add_node(node.__name__, node)
    builder.add_edge(START, "research")
    builder.add_edge("research", "read_sources")
    builder.add_edge("read_sources", "check_sources")
    builder.add_edge("check_sources", "report")
    return builder
"""


async def test_an_agent_that_works_before_it_speaks_is_not_cut_off_and_shows_its_steps(make_settings, tmp_path):
    """The limits measure the silence of the agent's work (hidden tokens, its steps), not of its visible text."""
    path = tmp_path / "researcher.py"
    path.write_text(WORKS_BEFORE_IT_SPEAKS)
    settings = make_settings(
        graph=f"{path}:graph", demo_token_delay_ms=40.0, first_token_timeout=0.3, idle_timeout=0.6, total_timeout=30.0
    )
    async with running(settings) as client:
        _, raw, chunks = await chat(client, new_conversation_id(), "count to 20", streamMode="events")
        assert texts(accepted(raw)["message"]) == "Here is the report."
    statuses = [chunk["data"]["text"] for chunk in chunks if chunk["type"] == "data-status"]
    assert [status for status in statuses if status.startswith("Working")][:3] == [
        "Working: research…",
        "Working: read sources…",
        "Working: check sources…",
    ]


SLOW_START = """
import asyncio

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph


async def think(state):
    await asyncio.sleep(1.0)  # no token, no step: silent work the server's limits do not allow
    return {"messages": [AIMessage("Thought it through.")]}


builder = StateGraph(MessagesState)
builder.add_node("think", think)
builder.add_edge(START, "think")
graph = builder.compile()
"""


async def test_an_agent_may_have_longer_limits_of_its_own(make_settings, tmp_path):
    path = tmp_path / "slow_start.py"
    path.write_text(SLOW_START)
    server = {"first_token_timeout": 0.3, "idle_timeout": 0.3}
    async with running(make_settings(graph=f"{path}:graph", **server)) as client:
        refused = await client.post("/api/chat", json=chat_body(new_conversation_id(), "think"))
        assert refused.status_code == 500 and refused.json()["error"]["code"] == "TIMEOUT"
    own = {"graph": AgentLimits(first_token=5.0)}
    async with running(make_settings(graph=f"{path}:graph", agent_timeouts=own, **server)) as client:
        _, raw, _ = await chat(client, new_conversation_id(), "think")
        assert texts(accepted(raw)["message"]) == "Thought it through."
    checked = threadline(
        "check",
        "--graph",
        f"{path}:graph",
        THREADLINE_AGENT_TIMEOUTS='{"grph": {"total": 600}}',
        THREADLINE_DATA_DIR=str(tmp_path),
    )
    assert checked.returncode == 2 and "THREADLINE_AGENT_TIMEOUTS names no agent 'grph'" in checked.stderr


TASK_GRAPHS = """
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.graph import START, StateGraph


@dataclass(kw_only=True)
class SummaryState:  # local-deep-researcher's: research_topic in, running_summary out
    research_topic: str = field(default=None)
    search_query: str = field(default=None)
    running_summary: str = field(default=None)


@dataclass(kw_only=True)
class SummaryStateInput:
    research_topic: str = field(default=None)


@dataclass(kw_only=True)
class SummaryStateOutput:
    running_summary: str = field(default=None)


def researcher(context):
    async def generate_query(state: SummaryState):
        return {"search_query": (await context.model.ainvoke([HumanMessage(state.research_topic)])).text}

    async def summarize_sources(state: SummaryState):
        return {"running_summary": f"On {state.research_topic}: {len(state.search_query)} characters of notes."}

    builder = StateGraph(SummaryState, input_schema=SummaryStateInput, output_schema=SummaryStateOutput)
    builder.add_node("generate_query", generate_query)
    builder.add_node("summarize_sources", summarize_sources)
    builder.add_edge(START, "generate_query")
    builder.add_edge("generate_query", "summarize_sources")
    return builder


@dataclass(kw_only=True)
class InputState:  # data-enrichment's: a topic and the schema of what to find
    topic: str
    extraction_schema: dict[str, Any]


@dataclass(kw_only=True)
class State(InputState):
    info: dict[str, Any] = field(default=None)
    loop_step: int = 0


@dataclass(kw_only=True)
class OutputState:
    info: dict[str, Any]


def enrich(state: State):
    return {"info": {key: f"{key} of {state.topic}" for key in state.extraction_schema["properties"]}}


builder = StateGraph(State, input_schema=InputState, output_schema=OutputState)
builder.add_node("enrich", enrich)
builder.add_edge(START, "enrich")
enricher = builder.compile()


@dataclass(kw_only=True)
class TwoTexts:
    title: str
    body: str


two_texts = StateGraph(TwoTexts)
two_texts.add_node("noop", lambda state: {})
two_texts.add_edge(START, "noop")
"""


async def test_a_graph_without_messages_takes_the_message_as_its_text_input_and_answers_with_its_output(
    make_settings, tmp_path
):
    path = tmp_path / "task_graphs.py"
    path.write_text(TASK_GRAPHS)
    async with running(make_settings(graph=f"{path}:researcher")) as client:
        conversation_id = new_conversation_id()
        _, raw, chunks = await chat(client, conversation_id, "tide pools", streamMode="events")
        message = accepted(raw)["message"]
        said = texts(message)
        assert said.startswith("On tide pools: ") and said.endswith("characters of notes.")
        (output,) = parts(message, "data-structured-response")
        assert output["data"] == {"running_summary": said}
        assert sum(chunk["type"] == "text-delta" for chunk in chunks) == 1, "its model's tokens are its work"
        statuses = [chunk["data"]["text"] for chunk in chunks if chunk["type"] == "data-status"]
        assert "Working: generate query…" in statuses
        history = await history_of(client, conversation_id)
        assert [texts(m) for m in history] == ["tide pools", said]
        assert shown(history[1]) == shown(message)
        _, raw, _ = await chat(client, conversation_id, "kelp forests")
        assert texts(accepted(raw)["message"]).startswith("On kelp forests: "), "each message is a new topic"


async def test_a_task_graphs_other_inputs_come_from_the_chat_body_and_an_unmappable_graph_is_refused(
    make_settings, tmp_path
):
    path = tmp_path / "task_graphs.py"
    path.write_text(TASK_GRAPHS)
    async with running(make_settings(graph=f"{path}:enricher")) as client:
        conversation_id = new_conversation_id()
        missing = await client.post("/api/chat", json=chat_body(conversation_id, "Lisbon"))
        assert missing.status_code == 400 and "needs extraction_schema" in missing.json()["error"]["message"]
        schema = {"type": "object", "properties": {"population": {}, "mayor": {}}}
        _, raw, _ = await chat(client, conversation_id, "Lisbon", input={"extraction_schema": schema})
        (output,) = parts(accepted(raw)["message"], "data-structured-response")
        assert output["data"] == {"info": {"population": "population of Lisbon", "mayor": "mayor of Lisbon"}}
        given = await client.post("/api/chat", json=chat_body(conversation_id, "x", input={"topic": "Porto"}))
        assert given.status_code == 400 and "`topic` comes from the chat" in given.text
    checked = threadline("check", "--graph", f"{path}:two_texts", THREADLINE_DATA_DIR=str(tmp_path))
    assert checked.returncode == 2 and "text inputs body, title for the chat message" in checked.stderr


AUTH = """
from langgraph_sdk import Auth

auth = Auth()


@auth.authenticate
async def who(authorization: str | None, headers: dict):
    if not authorization or not authorization.startswith("Bearer good-"):
        raise Auth.exceptions.HTTPException(status_code=401, detail="Authorization header missing")
    name, _, role = authorization.removeprefix("Bearer good-").partition(":")
    team = headers.get(b"x-team", b"").decode()
    return {"identity": name, "permissions": [role or "reader"], "team": team}
"""

# open_deep_research's handlers (its src/security/auth.py): the owner written into a new thread's metadata, every
# other action filtered by it; and two of a team's own: a thread belongs to the team it was made in, and only an
# editor deletes or renames
HANDLERS = """

@auth.on.threads.create
@auth.on.threads.create_run
async def on_thread_create(ctx, value):
    metadata = value.setdefault("metadata", {})
    metadata["owner"] = ctx.user.identity
    metadata["team"] = ctx.user["team"]


@auth.on.threads.read
@auth.on.threads.search
async def on_thread_read(ctx, value):
    return {"owner": ctx.user.identity, "team": ctx.user.team}


@auth.on.threads
async def on_thread_change(ctx, value):
    if "editor" not in ctx.permissions:
        raise Auth.exceptions.HTTPException(status_code=403, detail="Only editors change threads")
    return {"owner": {"$eq": ctx.user.identity}}


@auth.on.assistants.create
async def on_assistant_create(ctx, value):
    return False


@auth.on.store()
async def on_store(ctx, value):
    assert value["namespace"][0] == ctx.user.identity
"""


async def test_a_langgraph_json_auth_names_the_caller_and_its_handlers_decide_what_they_may_do(
    make_settings, tmp_path, caplog
):
    (tmp_path / "graphs.py").write_text(OUTPUT_SCHEMA)
    (tmp_path / "auth.py").write_text(AUTH)
    config = {"graphs": {"agent": "./graphs.py:no_arguments"}, "auth": {"path": "./auth.py:auth"}}
    (tmp_path / "langgraph.json").write_text(json.dumps(config))
    ada, bo = {"authorization": "Bearer good-ada"}, {"authorization": "Bearer good-bo"}
    async with running(make_settings(graph=str(tmp_path / "langgraph.json"))) as client:
        assert (await client.get("/health")).status_code == 200, "public routes stay open"
        refused = await client.get("/api/conversations")
        assert refused.status_code == 401 and refused.json()["error"]["message"] == "Authorization header missing"
        conversation_id = new_conversation_id()
        assert (await client.post("/api/chat", json=chat_body(conversation_id, "hi"), headers=ada)).status_code == 200
        assert [row["id"] for row in (await client.get("/api/conversations", headers=ada)).json()] == [conversation_id]
        assert (await client.get("/api/conversations", headers=bo)).json() == []
        assert (await client.get(f"/api/conversations/{conversation_id}", headers=bo)).status_code == 404

    (tmp_path / "auth.py").write_text(AUTH + HANDLERS)
    async with running(make_settings(graph=str(tmp_path / "langgraph.json"))) as client:
        assert "assistants.create, store.*" in caplog.text and "they are not run" in caplog.text
        red, blue = ada | {"x-team": "red"}, ada | {"x-team": "blue"}
        conversation_id = new_conversation_id()
        assert (await client.post("/api/chat", json=chat_body(conversation_id, "hi"), headers=red)).status_code == 200
        path = f"/api/conversations/{conversation_id}"
        assert (await client.get(path, headers=red)).status_code == 200
        # the same person in another team: the read and search filters leave the red team's thread out
        assert (await client.get(path, headers=blue)).status_code == 404
        assert (await client.get("/api/conversations", headers=blue)).json() == []
        assert [row["id"] for row in (await client.get("/api/conversations", headers=red)).json()] == [conversation_id]
        # a reader may not rename or delete (the threads handler's own 403); an editor may
        renamed = await client.patch(path, json={"title": "Plans"}, headers=red)
        assert renamed.status_code == 403 and renamed.json()["error"]["message"] == "Only editors change threads"
        assert (await client.delete(path, headers=red)).status_code == 403
        editor = {"authorization": "Bearer good-ada:editor", "x-team": "red"}
        assert (await client.patch(path, json={"title": "Plans"}, headers=editor)).status_code == 200
        assert (await client.delete(path, headers=editor)).status_code == 204
        assert (await client.get(path, headers=red)).status_code == 404
    checked = threadline("check", "--graph", str(tmp_path / "langgraph.json"), THREADLINE_DATA_DIR=str(tmp_path))
    assert checked.returncode == 0, checked.stderr


@pytest.mark.parametrize(
    ("rule", "kept"),
    [
        ({"owner": "ada"}, True),
        ({"owner": {"$eq": "bo"}}, False),
        ({"tags": {"$contains": "red"}}, True),
        ({"tags": {"$contains": ["red", "blue"]}}, False),
        ({"missing": "x"}, False),
    ],
)
def test_an_auth_handlers_filter_is_matched_as_langgraph_matches_it(rule, kept):
    assert matches({"owner": "ada", "tags": ["red", "green"]}, rule) is kept
    with pytest.raises(Refused):
        matches({"owner": "ada"}, {"owner": {"$ne": "bo"}})  # an operator LangGraph's filters do not have


@pytest.mark.parametrize("value", [2**64, json.loads("[" * 300 + "]" * 300)])
async def test_a_value_no_checkpoint_can_store_is_refused_before_the_answer_starts(make_settings, tmp_path, value):
    path = tmp_path / "typed_input.py"
    path.write_text(TYPED_INPUT)
    async with running(make_settings(graph=f"{path}:agent")) as client:
        conversation_id = new_conversation_id()
        email = {"author": "Ana", "subject": "Lunch", "extra": value}
        response = await client.post("/api/chat", json=chat_body(conversation_id, "hi", input={"email_input": email}))
        assert response.status_code == 400 and "cannot be saved with the conversation" in response.text
        assert (await client.get(f"/api/conversations/{conversation_id}")).status_code == 404, "nothing started"


GATED = """
import asyncio
import threading

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph

released = threading.Event()  # set by the test once the answer says this node is running


async def wait_for_go(state):
    went = await asyncio.to_thread(released.wait, 10)
    return {"messages": [AIMessage("Went." if went else "Never released.")]}


builder = StateGraph(MessagesState)
builder.add_node("wait_for_go", wait_for_go)
builder.add_edge(START, "wait_for_go")
graph = builder.compile()
"""


async def test_a_nodes_status_arrives_while_it_runs_not_when_it_ends(make_settings, tmp_path):
    """The node waits until the test has read its status from the stream: a status held until the node ended
    would never come."""
    path = tmp_path / "gated.py"
    path.write_text(GATED)
    seen = []
    with serving(make_settings(graph=f"{path}:graph")) as base_url:
        body = chat_body(new_conversation_id(), "go", streamMode="events")
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            async with client.stream("POST", "/api/chat", json=body) as response:
                async for line in response.aiter_lines():
                    if line.startswith("data: {"):
                        seen.append(json.loads(line.removeprefix("data: ")))
                        if seen[-1].get("data", {}).get("text") == "Working: wait for go…":
                            sys.modules["threadline_agent_gated"].released.set()  # the node goes on only now
    assert [chunk["delta"] for chunk in seen if chunk["type"] == "text-delta"] == ["Went."]
