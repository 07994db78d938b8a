"""A team's own LangGraph agent behind threadline (THREADLINE_GRAPH): each example in examples/ through the real
`ai` clients and the seed wires: history, tools, approvals (approve, decline, edit), the agent's question
answered after a reload, progress data, a stop, traces; and the graphs threadline refuses at start-up."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import psycopg
import pytest
from helpers import chat, chat_body, new_conversation_id, quiet_demo, running, saved_answer, serving, stream_some
from litestar import Litestar, get
from litestar.testing import AsyncTestClient
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool
from threadline.agent.loading import load_source, load_sources
from threadline.client import AgentOptions, Client, ThreadlineError
from threadline.http.app import Threadline
from threadline.http.identity import COOKIE
from threadline.settings import DEFAULTS, load_settings
from threadline.storage.conversation_list import StorageLimits
from threadline.storage.fallback import DatabaseHealth
from threadline.storage.migrations import migrate
from threadline.storage.postgres.conversation_list import PostgresConversations
from threadline.storage.saver import PooledPostgresSaver
from threadline.storage.schema import Schema
from threadline_testing.ai_sdk import (
    approve_with_chat,
    check_chunks,
    read_with_ai,
    read_with_ai4,
    resume_with_chat,
    seed_004_client,
)
from threadline_testing.database import TEST_SCHEMA
from threadline_testing.sse import parse_sse

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ALL = ["assistant", "builtin", "research"]


def example(make_settings, name: str, **overrides):
    return make_settings(graph=f"{EXAMPLES / name}.py:graph", **overrides)


def accepted(raw: bytes) -> dict:
    """What the real `ai` 7 client makes of a stream, after checking every chunk against the schemas of `ai` 5-7."""
    assert check_chunks(raw) == {"5": [], "6": [], "7": []}
    message = read_with_ai(raw)
    assert not message.get("errors"), message
    return message


def texts(message: dict) -> str:
    return "".join(part.get("text", "") for part in message["parts"] if part["type"] == "text")


def parts(message: dict, kind: str) -> list[dict]:
    return [part for part in message["parts"] if part["type"] == kind]


@pytest.mark.parametrize("name", ALL)
async def test_two_turns_keep_their_history_on_the_server(make_settings, name):
    async with running(example(make_settings, name)) as client:
        conversation_id = new_conversation_id()
        _, raw, _ = await chat(client, conversation_id, "hello there")
        assert "I can see 0 earlier messages" in texts(accepted(raw)["message"])
        _, raw, _ = await chat(client, conversation_id, "and again")
        assert "I can see 1 earlier message " in texts(accepted(raw)["message"])
        history = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"]
        assert [message["role"] for message in history] == ["user", "assistant", "user", "assistant"]
        assert "I can see 1 earlier message " in texts(history[-1])
        response = await client.post("/api/chat?protocol=data-stream", json=chat_body(conversation_id, "third"))
        assert "I can see 2 earlier messages" in read_with_ai4(response.content)["message"]["content"]


@pytest.mark.parametrize("suggests", [True, False])
@pytest.mark.parametrize("name", ["assistant", "builtin"])
async def test_a_tool_round_trip_streams_the_call_and_its_result(make_settings, name, suggests):
    """With suggestions they come in a step after the agent's; without, its run closes the turn: the same answer."""
    async with running(example(make_settings, name, **({} if suggests else {"profiles": quiet_demo()}))) as client:
        conversation_id = new_conversation_id()
        _, raw, chunks = await chat(client, conversation_id, "what time is it in Europe/Paris?")
        message = accepted(raw)["message"]
        (tool,) = parts(message, "tool-current_time")
        assert tool["state"] == "output-available" and tool["input"] == {"timezone": "Europe/Paris"}
        assert "came through a real tool call" in texts(message)
        steps = [chunk["type"] for chunk in chunks if chunk["type"] in ("start-step", "finish-step")]
        assert steps == ["start-step", "finish-step", "start-step", "finish-step"], "a step per model call"
        assert bool(parts(message, "data-suggestions")) is suggests
        history = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"]
        assert parts(history[-1], "tool-current_time")[0]["state"] == "output-available"
        assert texts(history[-1]) == texts(message) and history[-1]["metadata"]["finishedAt"]
        trace = (await client.get(f"/api/trace/by_message/{message['id']}")).json()
        kinds = [event["type"] for event in trace["events"]]
        assert kinds == ["model_call", "tool_call", "model_call"], kinds
        assert trace["status"] == "completed" and trace["events"][1]["server"] == "threadline"


@pytest.fixture
def assistant_server(make_settings):
    with serving(example(make_settings, "assistant")) as base_url:
        yield base_url


def visitor(base_url: str) -> tuple[httpx.Client, str]:
    client = httpx.Client(base_url=base_url, timeout=30)
    client.get("/api/conversations")
    return client, f"{COOKIE}={client.cookies[COOKIE]}"


def test_approved_through_the_real_chat_the_tool_runs(assistant_server):
    _, cookie = visitor(assistant_server)
    result = approve_with_chat(assistant_server, cookie, new_conversation_id(), "calculate 2+3", [{"approved": True}])
    assert not result["errors"] and len(result["requested"]) == 1
    (tool,) = parts(result["messages"][-1], "tool-calculator")
    assert tool["state"] == "output-available" and tool["output"] == "5"


def test_declined_the_tool_never_runs_and_the_reason_reaches_the_agent(assistant_server):
    client, cookie = visitor(assistant_server)
    conversation_id = new_conversation_id()
    decisions = [{"approved": False, "reason": "not now"}]
    result = approve_with_chat(assistant_server, cookie, conversation_id, "calculate 2+3", decisions)
    assert not result["errors"]
    (tool,) = parts(result["messages"][-1], "tool-calculator")
    assert tool["state"] == "output-denied"
    assert "not now" in texts(result["messages"][-1])
    history = client.get(f"/api/conversations/{conversation_id}").json()["messages"]
    assert parts(history[-1], "tool-calculator")[0]["state"] == "output-denied", "declined, as it was live"


def waiting_call(client: httpx.Client, conversation_id: str, text: str) -> tuple[dict, dict]:
    """Send `text`, which ends waiting for approval; the stored answer and its tool part that waits."""
    response = client.post("/api/chat", json=chat_body(conversation_id, text))
    chunks = parse_sse(response.content)
    assert any(chunk["type"] == "tool-approval-request" for chunk in chunks), chunks
    answer = client.get(f"/api/conversations/{conversation_id}").json()["messages"][-1]
    (waiting,) = [part for part in answer["parts"] if part.get("state") == "approval-requested"]
    return answer, waiting


def respond(client: httpx.Client, conversation_id: str, answer: dict, part: dict, approval: dict) -> httpx.Response:
    part = part | {"state": "approval-responded", "approval": {"id": part["approval"]["id"], **approval}}
    answered = answer | {"parts": [part if p.get("toolCallId") == part["toolCallId"] else p for p in answer["parts"]]}
    return client.post("/api/chat", json={"id": conversation_id, "messages": [answered]})


def test_why_a_call_waits_is_the_agents_own_wording_live_and_after_a_reload(assistant_server):
    """HumanInTheLoopMiddleware's `description` is the `data-approval` part's `reason` (valid for ai 5 to 7)."""
    client, _ = visitor(assistant_server)
    conversation_id = new_conversation_id()
    response = client.post("/api/chat", json=chat_body(conversation_id, "calculate 2+3"))
    message = read_with_ai(response.content)["message"]  # ai 5 has no approvals
    (tool,), (live,) = parts(message, "tool-calculator"), parts(message, "data-approval")
    assert live["data"] == {
        "toolCallId": tool["toolCallId"],
        "decisions": ["approve", "edit", "reject"],
        "reason": "The calculator evaluates this expression on the server: check it, or change it first.",
    }
    answer = client.get(f"/api/conversations/{conversation_id}").json()["messages"][-1]
    assert parts(answer, "data-approval") == [live], "the history says it as the stream did"


def test_an_edited_input_runs_instead_of_the_models(assistant_server):
    client, _ = visitor(assistant_server)
    conversation_id = new_conversation_id()
    answer, waiting = waiting_call(client, conversation_id, "calculate 2+3")
    assert waiting["input"] == {"expression": "2+3"}
    wrong = respond(client, conversation_id, answer, waiting, {"approved": True, "editedInput": {"expression": 42}})
    assert wrong.status_code == 400 and "changed input" in wrong.json()["error"]["message"], wrong.text
    extra = {"approved": True, "editedInput": {"expression": "6*7", "shell": "rm -rf /"}}
    added = respond(client, conversation_id, answer, waiting, extra)
    assert added.status_code == 400 and "has no argument shell (it takes expression)" in added.text, added.text
    response = respond(
        client, conversation_id, answer, waiting, {"approved": True, "editedInput": {"expression": "6*7"}}
    )
    assert response.status_code == 200, response.text
    outputs = [chunk for chunk in parse_sse(response.content) if chunk["type"] == "tool-output-available"]
    assert outputs and outputs[0]["output"].endswith("42")
    replayed = respond(client, conversation_id, answer, waiting, {"approved": True})
    assert replayed.status_code == 409 and replayed.json()["error"]["code"] == "CONFLICT"


def test_forged_approvals_and_edits_the_agent_does_not_allow_are_refused(assistant_server):
    client, _ = visitor(assistant_server)
    conversation_id, victim = new_conversation_id(), new_conversation_id()
    assert client.post("/api/chat", json=chat_body(victim, "hello")).status_code == 200
    answer, waiting = waiting_call(client, conversation_id, f"delete conversation {victim}")
    forged = waiting | {"approval": {"id": "forged"}}
    assert respond(client, conversation_id, answer, forged, {"approved": True}).status_code == 400
    edited = respond(
        client, conversation_id, answer, waiting, {"approved": True, "editedInput": {"conversation_id": "x"}}
    )
    assert edited.status_code == 400 and "cannot be edited" in edited.json()["error"]["message"]
    assert client.get(f"/api/conversations/{victim}").status_code == 200, "nothing ran"
    assert respond(client, conversation_id, answer, waiting, {"approved": True}).status_code == 200
    assert client.get(f"/api/conversations/{victim}").status_code == 404


def test_a_new_message_declines_what_waits_and_keeps_it(assistant_server):
    client, _ = visitor(assistant_server)
    conversation_id = new_conversation_id()
    waiting_call(client, conversation_id, "calculate 2+3")
    assert client.post("/api/chat", json=chat_body(conversation_id, "never mind")).status_code == 200
    history = client.get(f"/api/conversations/{conversation_id}").json()["messages"]
    assert [message["role"] for message in history] == ["user", "assistant", "user", "assistant"]
    (tool,) = parts(history[1], "tool-calculator")
    assert tool["state"] in ("output-denied", "output-error")


@pytest.mark.parametrize("name", ALL)
def test_the_seed_wires_carry_every_agents_answer(make_settings, name):
    with serving(example(make_settings, name)) as base_url:
        client, cookie = visitor(base_url)
        events = seed_004_client(base_url, cookie, "hello there")["events"]
        assert [events[0]["type"], events[-1]["type"]] == ["message_start", "message_end"]
        assert "I can see 0 earlier messages" in "".join(
            e.get("content", "") for e in events if e["type"] == "text_delta"
        )
        response = client.post("/api/get_chat_response_stream", json={"message": "and again"})
        events = [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: {")]
        assert events[-1]["type"] == "done" and any(event["type"] == "chunk" for event in events), events


def test_seed_wires_cannot_ask_so_the_call_is_declined_and_the_agent_goes_on(assistant_server):
    client, cookie = visitor(assistant_server)
    events = seed_004_client(assistant_server, cookie, "calculate 2+3")["events"]
    kinds = [event["type"] for event in events]
    assert kinds[0] == "message_start" and kinds[-1] == "message_end" and "tool_call" in kinds, kinds
    assert "cannot ask the person" in json.dumps(next(event for event in events if event["type"] == "tool_result"))
    response = client.post("/api/get_chat_response_stream", json={"message": "calculate 2+3"})
    events = [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: {")]
    assert events[-1]["type"] == "done" and any(event["type"] == "tool_end" for event in events), events


@pytest.mark.parametrize("then", ["a new message", "a stop"])
async def test_a_question_left_unanswered_stays_with_the_answer_that_asked_it(make_settings, then):
    """A new message (or a stop) while the agent's question waits ends that answer: the question stays in it, as
    the person saw it, instead of an answer with nothing in it."""
    async with running(example(make_settings, "research")) as client:
        conversation_id = new_conversation_id()
        _, raw, _ = await chat(client, conversation_id, "research tide pools")
        (asked,) = parts(accepted(raw)["message"], "data-interrupt")
        if then == "a stop":
            stop = await client.post("/api/cancel_stream", json={"conversationId": conversation_id})
            assert stop.status_code == 200
        else:
            await chat(client, conversation_id, "never mind, tell me a joke")
        history = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"]
    assert parts(history[1], "data-interrupt") == [asked]
    assert history[1]["metadata"]["interrupted"] == ("cancelled" if then == "a stop" else "superseded")


async def test_the_agents_question_is_answered_after_a_reload(make_settings):
    async with running(example(make_settings, "research")) as client:
        conversation_id = new_conversation_id()
        _, raw, chunks = await chat(client, conversation_id, "research tide pools")
        message = accepted(raw)["message"]
        (asked,) = parts(message, "data-interrupt")
        assert asked["data"]["value"]["question"] == "Which aspect of tide pools should I look into?"
        assert chunks[-1]["type"] == "finish"
        # A reload: the history shows the question where the answer stopped.
        history = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"]
        assert parts(history[-1], "data-interrupt") == [asked]
        resume = {"interruptId": asked["data"]["id"], "value": "geology"}
        response = await client.post("/api/chat", json=chat_body(conversation_id, "", resume=resume))
        assert response.status_code == 200, response.text
        resumed = accepted(response.content)["message"]
        assert resumed["id"] == message["id"], "the answer that asked goes on"
        progress = parts(resumed, "data-progress")
        assert progress and progress[-1]["data"] == {
            "done": 2,
            "of": 2,
            "source": "Sandstone, granite and the shape of pools",
        }
        assert "Summarize what the sources say about geology" in texts(resumed)
        again = await client.post("/api/chat", json=chat_body(conversation_id, "", resume=resume))
        assert again.status_code == 409
        history = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"]
        assert len(history) == 2 and "Summarize what the sources say about geology" in texts(history[-1])
        # The question stays where it was asked, with the person's reply; what followed comes after it.
        kinds = [part["type"] for part in history[-1]["parts"]]
        (kept,) = parts(history[-1], "data-interrupt")
        assert kept == asked | {"data": asked["data"] | {"reply": "geology"}}
        assert kinds.index("data-interrupt") < kinds.index("text"), kinds
        # ... and so does the agent's progress, as the live message kept it (one part per id, its last value)
        assert parts(history[-1], "data-progress") == [parts(resumed, "data-progress")[-1]]
        assert kinds.index("data-interrupt") < kinds.index("data-progress") < kinds.index("text"), kinds


@pytest.mark.parametrize(("name", "suggests"), [(name, True) for name in ALL] + [("assistant", False)])
async def test_a_reload_resumes_the_answer_and_a_stop_keeps_what_it_said(make_settings, name, suggests):
    quiet = {} if suggests else {"profiles": quiet_demo()}
    with serving(example(make_settings, name, demo_token_delay_ms=10.0, **quiet)) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            await client.get("/api/conversations")
            cookie, conversation_id = f"{COOKIE}={client.cookies[COOKIE]}", new_conversation_id()
            response, chunks, shown = await stream_some(client, conversation_id, deltas=5)
            replayed = await asyncio.to_thread(resume_with_chat, base_url, cookie, conversation_id)
            (message,) = replayed["messages"]
            assert not replayed["errors"] and texts(message).endswith("300"), "the whole answer, from its start"
            await response.aclose()
            response, chunks, shown = await stream_some(client, conversation_id, deltas=5)
            stop = await client.post("/api/cancel_stream", json={"conversation_id": conversation_id})
            assert stop.status_code == 200
            await response.aclose()
            answer = await saved_answer(client, conversation_id)
            assert answer["metadata"]["interrupted"] == "cancelled" and texts(answer).startswith(shown)
            _, _, chunks = await chat(client, conversation_id, "go on")
            assert "I can see 2 earlier messages" in "".join(c.get("delta", "") for c in chunks)


async def test_threadline_mounts_into_a_litestar_app_of_your_own(make_settings):
    @get("/hello")
    async def hello() -> str:
        return "my own route"

    agent = load_source(f"{EXAMPLES / 'builtin.py'}:graph")
    app = Litestar(route_handlers=[hello], plugins=[Threadline(make_settings(), graph=agent)])
    async with AsyncTestClient(app=app, timeout=30) as client:
        assert (await client.get("/hello")).text == "my own route"
        _, raw, _ = await chat(client, new_conversation_id(), "what time is it in Asia/Tokyo?")
        assert parts(accepted(raw)["message"], "tool-current_time")[0]["state"] == "output-available"
        assert (await client.get("/")).status_code == 404, "the chat page is the standalone server's"


def serve_with(graph: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"CHAT_MODEL_PROVIDER": "demo", "THREADLINE_GRAPH": graph, "THREADLINE_DATA_DIR": str(tmp_path)}
    return subprocess.run(
        [sys.executable, "-m", "threadline", "serve"], env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    ("source", "said"),
    [
        (
            "graph = StateGraph(dict)\ngraph.add_node('a', lambda state: {})\ngraph.add_edge('__start__', 'a')",
            "the graph has no `messages` state key and no text input for the chat message",
        ),
        (  # a reducer that appends without merging by id would duplicate every edited or resumed message
            "import operator\nfrom typing import Annotated, TypedDict\n"
            "class State(TypedDict):\n    messages: Annotated[list, operator.add]\n"
            "graph = StateGraph(State)\ngraph.add_node('a', lambda state: {})\ngraph.add_edge('__start__', 'a')",
            "does not merge messages by id (BinaryOperatorAggregate: three updates, two of them to one id, kept 3",
        ),
        (None, "no such file"),
        (
            "def graph(context):\n    raise RuntimeError('no model for me')",
            "the factory raised RuntimeError: no model for me",
        ),
    ],
)
def test_a_graph_threadline_cannot_host_stops_start_up_with_one_line(tmp_path, source, said):
    path = tmp_path / "agent.py"
    if source is not None:
        path.write_text(f"from langgraph.graph import StateGraph\n{source}\n")
    result = serve_with(f"{path}:graph", tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("threadline: THREADLINE_GRAPH") and said in lines[0], result.stderr


def test_the_python_client_answers_the_agents_question_and_edits_an_approval(make_settings):
    with serving(example(make_settings, "research")) as base_url, Client(base_url) as client:
        asked = client.ask("research tide pools")
        assert asked.question is not None and asked.question["value"]["options"] == ["ecology", "geology", "safety"]
        answered = client.reply(asked, "ecology")
        assert answered.id == asked.id and answered.question is None
        progress = [part for part in answered.parts if isinstance(part, dict) and part["type"] == "data-progress"]
        assert [part["data"]["done"] for part in progress] == [2], "one part by its id, replaced as it goes"
        assert "about ecology" in answered.text
    with serving(example(make_settings, "assistant")) as base_url, Client(base_url) as client:
        waiting = client.ask("calculate 2+3")
        (call,) = waiting.tool_calls
        assert call.state == "approval-requested" and call.approval_reason.startswith("The calculator evaluates")
        done = client.approve(waiting, edits={call.tool_call_id: {"expression": "6*7"}})
        assert done.tool_calls[0].output.endswith("42")


OWN_TOOL = """
from langchain.agents import create_agent
from langchain_core.tools import tool


@tool
def shout(text: str) -> str:
    "Say it louder."
    return text.upper()


def graph(context):
    return create_agent(context.model, [shout, *context.tools])
"""


async def test_an_agents_own_tools_are_shown_as_it_calls_them(make_settings, tmp_path):
    path = tmp_path / "own_tool.py"
    path.write_text(OWN_TOOL)
    async with running(make_settings(graph=f"{path}:graph")) as client:
        _, raw, _ = await chat(client, new_conversation_id(), 'use the shout tool with {"text": "hello"}')
        (tool,) = parts(accepted(raw)["message"], "tool-shout")
        assert tool["state"] == "output-available" and tool["output"] == "HELLO"


WRITING_AGENT = """
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.config import get_stream_writer
from langgraph.graph import START, MessagesState, StateGraph


@tool
async def look_up(text: str) -> str:
    "Find it, saying where it was found."
    get_stream_writer()({"name": "source", "data": {"title": "The notes on " + text}})
    return "found " + text


def tool_graph(context):
    return create_agent(context.model, [look_up, *context.tools])


async def note(state):
    get_stream_writer()({"name": "source", "data": {"title": "The notes"}})
    return {"messages": [AIMessage("Noted.")]}


node_graph = StateGraph(MessagesState)
node_graph.add_node("note", note)
node_graph.add_edge(START, "note")
"""


@pytest.mark.parametrize(
    ("graph", "text", "result"),
    [
        ("tool_graph", 'use the look_up tool with {"text": "tides"}', "tool-output-available"),
        ("node_graph", "hi", "text-start"),
    ],
)
async def test_what_a_node_writes_before_it_returns_comes_before_what_it_returns(
    make_settings, tmp_path, graph, text, result
):
    path = tmp_path / "writing_agent.py"
    path.write_text(WRITING_AGENT)
    async with running(make_settings(graph=f"{path}:{graph}")) as client:
        _, raw, chunks = await chat(client, new_conversation_id(), text)
        kinds = [chunk["type"] for chunk in chunks]
        assert kinds.index("data-source") < kinds.index(result), kinds
        assert len(parts(accepted(raw)["message"], "data-source")) == 1


SYNC_NODE = """
from langgraph.graph import START, MessagesState, StateGraph


def graph(context):
    def answer(state):  # a synchronous node: LangGraph runs it, and its model's tokens, in a worker thread
        return {"messages": [context.model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    return builder
"""


async def test_a_synchronous_nodes_tokens_stream_and_are_kept(make_settings, tmp_path):
    path = tmp_path / "sync_node.py"
    path.write_text(SYNC_NODE)
    async with running(make_settings(graph=f"{path}:graph")) as client:
        conversation_id = new_conversation_id()
        _, raw, chunks = await chat(client, conversation_id, "count to 5")
        assert sum(chunk["type"] == "text-delta" for chunk in chunks) > 1, "streamed token by token"
        said = texts(accepted(raw)["message"])
        assert said and texts(await saved_answer(client, conversation_id)) == said


async def test_a_hosted_agents_own_checkpoints_are_kept_only_while_it_waits(make_settings, database_url):
    def agent_rows(conversation_id: str) -> dict[str, int]:
        with psycopg.connect(database_url) as conn:
            return {
                table: conn.execute(
                    f"SELECT count(*) FROM {table} WHERE thread_id LIKE %s AND checkpoint_ns <> ''",
                    (f"%:{conversation_id}",),
                ).fetchone()[0]
                for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
            }

    async def pruned(conversation_id: str) -> bool:
        """The old checkpoints go after the answer has ended, which may be just after its response did."""
        for _ in range(100):
            if agent_rows(conversation_id) == {"checkpoints": 0, "checkpoint_blobs": 0, "checkpoint_writes": 0}:
                return True
            await asyncio.sleep(0.05)
        return False

    async with running(example(make_settings, "research")) as client:
        conversation_id = new_conversation_id()
        await chat(client, conversation_id, "hello")
        await chat(client, conversation_id, "and again")
        assert await pruned(conversation_id)
        _, _, chunks = await chat(client, conversation_id, "research tide pools")
        assert agent_rows(conversation_id)["checkpoints"] > 0, "the run that waits keeps what it resumes from"
        (asked,) = [chunk for chunk in chunks if chunk["type"] == "data-interrupt"]
        resume = {"interruptId": asked["data"]["id"], "value": "safety"}
        response = await client.post("/api/chat", json=chat_body(conversation_id, "", resume=resume))
        assert "safety" in texts(accepted(response.content)["message"])
        assert await pruned(conversation_id)


async def test_a_summarizing_agent_keeps_every_turn_in_the_history_and_its_summary_out_of_the_answers(make_settings):
    """SummarizationMiddleware rewrites the agent's own messages (the agent's memory): the transcript the person
    scrolls keeps every turn as it streamed, its summary is no one's bubble, and its summary call is not text."""
    async with running(example(make_settings, "assistant", rate_limit="100/minute")) as client:
        conversation_id = new_conversation_id()
        said = []
        for turn in range(22):  # past `trigger=("messages", 40)`
            _, raw, _ = await chat(client, conversation_id, f"message {turn}")
            said.append(texts(accepted(raw)["message"]))
        history = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"]
    assert [texts(message) for message in history[0::2]] == [f"message {turn}" for turn in range(22)]
    assert [texts(message) for message in history[1::2]] == said
    seen = [int(re.search(r"I can see (\d+) earlier", text)[1]) for text in said]
    assert seen[:20] == list(range(20)), "up to the trigger, the agent sees every turn"
    assert seen[20] < 20, "then its memory is the summary and the latest turns"
    assert all("summar" not in text.lower() for text in said), said[21]


def test_a_langgraph_json_brings_its_graph_its_environment_and_its_folders(tmp_path, monkeypatch):
    """As LangGraph's CLI reads one: relative paths from the file's folder, a local dependency (and its src/)
    on the import path, its `env` file loaded where the process has no value of its own."""
    (tmp_path / "src" / "team_agent").mkdir(parents=True)
    (tmp_path / "src" / "team_agent" / "__init__.py").write_text("")
    (tmp_path / "src" / "team_agent" / "prompts.py").write_text("PROMPT = 'from src'\n")
    (tmp_path / "agent.py").write_text("from team_agent.prompts import PROMPT\ngraph = PROMPT\n")
    (tmp_path / ".env").write_text("TEAM_AGENT_KEY=from-env-file\nTEAM_AGENT_MODE=from-env-file\n")
    config = {"dependencies": ["."], "graphs": {"first": "./agent.py:graph", "second": "team_agent.prompts:PROMPT"}}
    (tmp_path / "langgraph.json").write_text(json.dumps(config | {"env": ".env"}))
    monkeypatch.setenv("TEAM_AGENT_MODE", "from-process")
    monkeypatch.delenv("TEAM_AGENT_KEY", raising=False)
    monkeypatch.setattr(sys, "path", list(sys.path))
    served = load_sources(str(tmp_path / "langgraph.json"))
    assert [(agent.id, agent.source) for agent in served] == [("first", "from src"), ("second", "from src")]
    assert [agent.source for agent in load_sources(f"{tmp_path / 'langgraph.json'}:second")] == ["from src"]
    assert os.environ["TEAM_AGENT_KEY"] == "from-env-file" and os.environ["TEAM_AGENT_MODE"] == "from-process"
    with pytest.raises(ValueError, match="has no graph 'third' \\(it has first, second\\)"):
        load_sources(f"{tmp_path / 'langgraph.json'}:third")


@pytest.mark.parametrize("starters", ["Say hi", [""], ["x" * 501], [3]])
def test_a_graphs_starters_are_a_list_of_prompts(tmp_path, starters):
    (tmp_path / "agent.py").write_text("graph = 'an agent'\n")
    config = {"graphs": {"agent": {"path": "./agent.py:graph", "starters": starters}}}
    (tmp_path / "langgraph.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="graph 'agent''s `starters` must be a list of prompts"):
        load_sources(str(tmp_path / "langgraph.json"))


def test_a_langgraph_json_env_is_the_agents_and_never_threadlines_settings(tmp_path, monkeypatch):
    """Under `serve --workers` or `--reload` each process reads its settings from the environment the first one
    had after loading the agent: a `CORS_ORIGINS` or `CHAT_RATE_LIMIT` in the agent's `.env` must not become
    threadline's there, as it does not in one process."""
    monkeypatch.setattr(os, "environ", {k: v for k, v in os.environ.items() if not k.startswith(("CHAT_", "CORS_"))})
    monkeypatch.setattr(sys, "path", list(sys.path))
    (tmp_path / "agent.py").write_text("graph = 'the agent'\n")
    (tmp_path / ".env").write_text("CORS_ORIGINS=http://evil.example\nCHAT_RATE_LIMIT=1/minute\nAGENT_KEY=k\n")
    (tmp_path / "langgraph.json").write_text(json.dumps({"graphs": {"a": "./agent.py:graph"}, "env": ".env"}))
    load_sources(str(tmp_path / "langgraph.json"))
    assert os.environ["AGENT_KEY"] == "k" and os.environ["CORS_ORIGINS"] == "http://evil.example", "the agent's own"
    worker = load_settings()  # what `app_from_environment` reads in each process `--workers` starts
    assert worker.server.cors_origins == () and worker.limits.rate_limit == DEFAULTS.limits.rate_limit
    load_sources(str(tmp_path / "langgraph.json"))  # a worker loads the agent again: still the agent's
    assert load_settings().server.cors_origins == ()


SPEAKERS = Path(__file__).resolve().parent / "agents" / "speakers" / "langgraph.json"


async def test_a_langgraph_json_serves_each_of_its_graphs_and_a_conversation_keeps_the_one_it_started_with(
    make_settings, caplog
):
    async with running(make_settings(graph=str(SPEAKERS))) as client:
        listed = (await client.get("/api/agents")).json()
        assert listed == [
            {
                "id": "writer",
                "name": "writer",
                "description": "Writes drafts",
                "starters": ["Draft a note to the team", "Write a haiku about rain"],
            },
            {"id": "critic", "name": "critic", "description": "", "starters": []},
        ]
        assert [r.getMessage() for r in caplog.records if "counter" in r.getMessage()] == [
            "graph 'counter' is not served: the graph has no `messages` state key and no text input for the chat "
            "message (its input: count); give it one string input, or a `messages` key (MessagesState or LangChain's "
            "AgentState have one)"
        ]
        first, second = new_conversation_id(), new_conversation_id()
        _, raw, _ = await chat(client, first, "hello")
        assert texts(accepted(raw)["message"]) == "writer here, after 1 messages", "the first graph by default"
        _, raw, _ = await chat(client, second, "hello", agent="critic")
        assert texts(accepted(raw)["message"]) == "critic here, after 1 messages"
        _, raw, _ = await chat(client, second, "again")
        assert texts(accepted(raw)["message"]) == "critic here, after 3 messages", "later messages keep it"
        refused = await client.post("/api/chat", json=chat_body(second, "you, writer", agent="writer"))
        assert refused.status_code == 409 and "critic" in refused.json()["error"]["message"]
        unknown = await client.post("/api/chat", json=chat_body(new_conversation_id(), "hi", agent="counter"))
        assert unknown.status_code == 400
        assert unknown.json()["error"]["details"][0]["field"] == "agent"
        listed_conversations = (await client.get("/api/conversations")).json()
        assert {row["id"]: row["agentId"] for row in listed_conversations} == {
            first: "writer",
            second: "critic",
        }
        history = (await client.get(f"/api/conversations/{second}")).json()["messages"]
        assert [texts(message) for message in history[1::2]] == [
            "critic here, after 1 messages",
            "critic here, after 3 messages",
        ]


async def test_a_conversation_whose_agent_a_redeploy_dropped_is_refused_naming_it(make_settings):
    conversation_id = new_conversation_id()
    async with running(make_settings(graph=str(SPEAKERS))) as client:
        await chat(client, conversation_id, "hello", agent="critic")
        identity = client.cookies["threadline_client"]
    async with running(make_settings(graph=f"{SPEAKERS}:writer")) as client:  # the critic is gone
        client.headers["x-threadline-client"] = identity
        refused = await client.post("/api/chat", json=chat_body(conversation_id, "still there?"))
        assert refused.status_code == 409, refused.text
        assert "agent 'critic' is no longer served" in refused.json()["error"]["message"]
        history = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"]
        assert [texts(message) for message in history] == ["hello", "critic here, after 1 messages"]
        _, raw, _ = await chat(client, new_conversation_id(), "hello")
        assert texts(accepted(raw)["message"]) == "writer here, after 1 messages"


def test_the_python_client_lists_the_agents_and_starts_a_conversation_with_one(make_settings):
    with serving(make_settings(graph=str(SPEAKERS))) as base_url, Client(base_url) as client:
        assert [agent["id"] for agent in client.agents()] == ["writer", "critic"]
        answer = client.ask("hello", agent="critic")
        assert answer.text == "critic here, after 1 messages"
        assert client.ask("again", answer.conversation_id).text == "critic here, after 3 messages"
        with pytest.raises(ThreadlineError) as refused:
            client.ask("hello", agent=AgentOptions("writer", input={"draft": "x"}))
        assert refused.value.status == 400 and "draft" in str(refused.value)


async def test_the_built_in_agent_is_the_one_agent_listed(make_settings):
    async with running(make_settings()) as client:
        assert (await client.get("/api/agents")).json() == [
            {"id": "threadline", "name": "threadline", "description": "threadline's built-in agent", "starters": []}
        ]
        _, raw, _ = await chat(client, new_conversation_id(), "hello", agent="threadline")
        assert texts(accepted(raw)["message"])
        refused = await client.post("/api/chat", json=chat_body(new_conversation_id(), "hi", agent="writer"))
        assert refused.status_code == 400


async def test_a_conversation_started_while_the_database_was_down_keeps_its_agent(database_url):
    """Kept in memory until PostgreSQL is back, then recorded with the agent it was started with."""
    pool = AsyncConnectionPool(database_url, open=False, kwargs={"autocommit": True, "row_factory": dict_row})
    await pool.open()
    try:
        await migrate(pool, Schema(TEST_SCHEMA))
        health = DatabaseHealth()
        conversations = PostgresConversations(pool, health, StorageLimits(), PooledPostgresSaver(pool).batches)
        health.failed("a test", OSError("down"))
        conversation_id = new_conversation_id()
        assert await conversations.touch(conversation_id, "u" + "2" * 32, "hello", agent_id="critic") is False
        health.down_until = 0.0  # back
        await conversations.save_pending()
        row = await conversations.get(conversation_id, "u" + "2" * 32)
        assert row is not None and row.agent_id == "critic"
    finally:
        await pool.close()
