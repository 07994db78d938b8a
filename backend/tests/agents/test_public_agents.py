"""Public LangGraph agents nobody on this project wrote, served unchanged (sources/README.md says what a test
had to replace) through THREADLINE_GRAPH, their models answered by the provider stand-ins, read by the real
`ai` 7 and `ai` 4 clients: each answers, runs its tools, keeps its history as the person saw it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import psycopg
import pytest
from helpers import chat, chat_body, first_deltas, new_conversation_id, running, saved_answer, serving
from test_agents import accepted, parts, texts
from threadline.client import Client
from threadline.http.identity import COOKIE
from threadline_testing.ai_sdk import check_chunks, read_with_ai4
from threadline_testing.sse import parse_sse
from threadline_testing.standins import Call, Reply

SOURCES = Path(__file__).resolve().parent / "sources"


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
        graph=str(SOURCES / "react-agent" / "langgraph.json"),  # the template's own, as a new user points at it
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
        ({"max_search_results": "7"}, "Expected `int`, got `str` - at `max_search_results`"),
        ({"max_search_results": "9" * 70_000}, "the value is over 65,536 bytes as JSON"),
        ({"max_search_results": "\u0000"}, "the value contains a NUL character"),
    ],
)
async def test_a_request_sets_only_the_listed_keys_of_an_agents_context(make_settings, anthropic, context, said):
    settings = make_settings(
        graph=f"{SOURCES / 'react-agent' / 'langgraph.json'}:agent", request_context=("max_search_results",)
    )
    async with running(settings) as client:
        response = await client.post("/api/chat", json=chat_body(None, "hello", context=context))
    assert response.status_code == 400, response.text
    (detail,) = response.json()["error"]["details"]
    assert detail["field"] == "context" and said in detail["message"]


def shown(message: dict) -> list[tuple]:
    """What a person sees of a UI message: its id and, part by part, the kind, state and content."""
    seen = []
    for part in message["parts"]:
        kind = part["type"]
        if kind == "text":
            seen.append((kind, part["text"], part.get("providerMetadata")))
        elif kind.startswith("tool-"):
            said = (part["state"], part.get("input"), part.get("output"), part.get("errorText"))
            seen.append((kind, *said, part.get("callProviderMetadata")))
        elif kind.startswith("data-") and kind != "data-suggestions":
            seen.append((kind, part.get("data")))
    return [message["id"], *seen]


async def converse(client, conversation_id: str, texts_sent: list[str], **extra) -> list[dict]:
    """Each message's answer as the real `ai` 7 client assembled it, checked against its chunk schemas."""
    answers = []
    for text in texts_sent:
        _, raw, _ = await chat(client, conversation_id, text, **extra)
        answers.append(accepted(raw)["message"])
    return answers


async def history_of(client, conversation_id: str) -> list[dict]:
    return (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"]


def deep_script(call: Call) -> Reply | None:
    """deepagents' model: writes a file, delegates to its general-purpose sub-agent, which calls a tool."""
    last = call.users[-1]
    if call.last_result is not None:
        return Reply(text=f"Done: {call.last_result}")
    if last == "write the plan":
        return Reply(tool=("write_file", {"file_path": "/plan.md", "content": "# Plan\n- look at tide pools"}))
    if last == "read the plan":
        return Reply(tool=("read_file", {"file_path": "/plan.md"}))
    if last == "ask a helper" and "task" in call.tools:
        return Reply(tool=("task", {"description": "weather in Paris", "subagent_type": "general-purpose"}))
    if last == "weather in Paris":  # the sub-agent's own first call
        return Reply(tool=("get_weather", {"city": "Paris"}))
    return None


async def test_deepagents_plans_in_files_delegates_to_a_sub_agent_and_its_history_is_what_was_shown(
    make_settings, anthropic
):
    """`create_deep_agent` (its messages in a DeltaChannel, refused at start-up before): its file tools keep
    state across messages, and its sub-agent's steps, run inside the `task` tool, are neither shown nor kept:
    the task's result is."""
    anthropic.script = deep_script
    async with running(make_settings(graph="deep_agent:graph")) as client:
        conversation_id = new_conversation_id()
        live = await converse(client, conversation_id, ["hello", "write the plan", "read the plan", "ask a helper"])
        history = await history_of(client, conversation_id)
    assert [shown(message) for message in history[1::2]] == [shown(message) for message in live]
    assert "look at tide pools" in texts(live[2]), "the file written by one message is read by the next"
    (task,) = parts(live[3], "tool-task")
    assert task["state"] == "output-available" and "always sunny in Paris" in str(task["output"])
    assert not parts(live[3], "tool-get_weather"), "the sub-agent's own steps are the task's business"
    assert any(call.users[-1] == "weather in Paris" for call in anthropic.calls), "the sub-agent did run"
    calls = 4  # its own two (the task, the answer) and the sub-agent's two (the tool, its answer)
    assert live[3]["metadata"]["usage"] == {
        "inputTokens": 13 * calls,
        "outputTokens": 9 * calls,
        "totalTokens": 22 * calls,
    }
    assert history[7]["metadata"]["usage"] == live[3]["metadata"]["usage"]
    assert live[3]["metadata"]["model"].startswith("anthropic:claude-"), "the model it called, not the profile's"
    assert history[7]["metadata"]["model"] == live[3]["metadata"]["model"]


def quickstart_script(call: Call) -> Reply | None:
    """The quickstart's model: finds where the user is, asks for the weather there, answers as ResponseFormat."""
    if not call.users[-1].startswith("what is the weather"):
        return Reply(tool=("ResponseFormat", {"punny_response": f"You said {call.users[-1]!r}, how punny."}))
    if not call.results or call.results[-1] == "ResponseFormat":
        return Reply(tool=("get_user_location", {}))
    if call.results[-1] == "get_user_location":
        return Reply(tool=("get_weather_for_location", {"city": call.last_result}))
    return Reply(tool=("ResponseFormat", {"punny_response": "Sun-believable!", "weather_conditions": "sunny"}))


@pytest.mark.parametrize("stream_mode", ["messages", "events"])
async def test_the_langchain_quickstart_reads_its_user_id_and_answers_in_its_response_format(
    make_settings, anthropic, stream_mode
):
    """Its tool reads `runtime.context.user_id` (who asks); its ToolStrategy answer streams a valid tool sequence
    (input before output) and its structured_response reaches the client as a data part, turn after turn."""
    anthropic.script = quickstart_script
    async with running(make_settings(graph="quickstart:agent")) as client:
        conversation_id = new_conversation_id()
        said = ["what is the weather outside?", "thank you!"]
        live = await converse(client, conversation_id, said, streamMode=stream_mode)
        history = await history_of(client, conversation_id)
        response = await client.post("/api/chat?protocol=data-stream", json=chat_body(conversation_id, "bye"))
        assert read_with_ai4(response.content)["message"]["toolInvocations"][-1]["toolName"] == "ResponseFormat"
    (location,) = parts(live[0], "tool-get_user_location")
    assert location["state"] == "output-available" and location["output"] == "SF", "an anonymous visitor's id"
    (answer,) = parts(live[0], "tool-ResponseFormat")
    assert answer["state"] == "output-available" and answer["input"]["punny_response"] == "Sun-believable!"
    assert parts(live[0], "data-structured-response")[0]["data"] == {
        "punny_response": "Sun-believable!",
        "weather_conditions": "sunny",
    }
    assert (
        parts(live[1], "data-structured-response")[0]["data"]["punny_response"] == "You said 'thank you!', how punny."
    )
    assert [shown(m) for m in history[1::2]] == [shown(m) for m in live]


EMAIL = {
    "author": "Alice Smith <alice.smith@company.com>",
    "to": "Lance Martin <lance@company.com>",
    "subject": "Quick question about API documentation",
    "email_thread": "Hi Lance, I was reviewing the API documentation and noticed a few endpoints are missing. Alice",
}


def email_script(call: Call) -> Reply | None:
    """The email assistant's model: the router says respond (structured output), the agent drafts an e-mail,
    then says it is done."""
    if call.structured:
        return Reply(text=json.dumps({"reasoning": "Alice asks a direct question.", "classification": "respond"}))
    if not call.results:
        reply = {"to": "alice.smith@company.com", "subject": "Re: API documentation", "content": "I will add them."}
        return Reply(tool=("write_email", reply))
    return Reply(tool=("Done", {"done": True}))


async def test_the_email_assistant_takes_its_own_input_hides_its_router_and_asks_before_it_sends(make_settings, openai):
    """agents-from-scratch's HITL assistant starts from `{"email_input"}` (the chat body's `input`), routes with a
    structured-output call that is not answer text, writes itself a HumanMessage that is no one's bubble, and
    asks the person (Agent Inbox's format) before its e-mail goes out."""
    openai.script = email_script
    async with running(make_settings(graph="email_assistant.email_assistant_hitl:email_assistant")) as client:
        conversation_id = new_conversation_id()
        _, raw, _ = await chat(client, conversation_id, "Triage this e-mail", input={"email_input": EMAIL})
        asking = accepted(raw)["message"]
        assert "classification" not in texts(asking), "the router's JSON is the router's"
        (question,) = parts(asking, "data-interrupt")
        assert question["data"]["value"][0]["action_request"]["action"] == "write_email"
        waiting = await history_of(client, conversation_id)
        assert [m["role"] for m in waiting] == ["user", "assistant"] and texts(waiting[0]) == "Triage this e-mail"
        body = chat_body(conversation_id, "", resume={"interruptId": question["id"], "value": [{"type": "accept"}]})
        response = await client.post("/api/chat", json=body)
        history = await history_of(client, conversation_id)
    assert check_chunks(response.content) == {"5": [], "6": [], "7": []}
    chunks = parse_sse(response.content)  # the answer goes on: `useChat` applies these to the message that asked
    (call,) = parts(asking, "tool-write_email")
    (sent,) = [chunk for chunk in chunks if chunk["type"] == "tool-output-available"]
    assert sent["toolCallId"] == call["toolCallId"] and sent["output"].startswith("Email sent to alice.smith")
    assert chunks[0]["messageId"] == asking["id"] == history[1]["id"], "the answer that asked goes on"
    assert [m["role"] for m in history] == ["user", "assistant"], "its own 'Respond to the email' is not a bubble"
    (kept,) = parts(history[1], "tool-write_email")
    assert kept["state"] == "output-available" and kept["output"] == sent["output"]


async def test_an_answer_that_waits_counts_every_call_before_it_and_names_the_agents_model(make_settings, openai):
    """The router's hidden structured-output call and the drafting call, each once; the model the agent called,
    not the profile's demo model."""
    openai.script = email_script
    async with running(make_settings(graph="email_assistant.email_assistant_hitl:email_assistant")) as client:
        _, raw, _ = await chat(client, new_conversation_id(), "Triage this e-mail", input={"email_input": EMAIL})
    asking = accepted(raw)["message"]
    assert len(openai.calls) == 2, "the router's call and the draft's"
    assert asking["metadata"]["usage"] == {"inputTokens": 22, "outputTokens": 14, "totalTokens": 36}
    assert asking["metadata"]["model"].startswith("openai:"), asking["metadata"]


async def test_an_answer_that_went_on_after_a_pause_counts_the_calls_made_before_it_too(make_settings, openai):
    """The router's hidden call was made by the run that paused; the run that goes on counts it again (each of the
    stand-in's calls uses 11 + 7 tokens), live and in the history."""
    openai.script = email_script
    conversation_id = new_conversation_id()
    async with running(make_settings(graph="email_assistant.email_assistant_hitl:email_assistant")) as client:
        _, raw, _ = await chat(client, conversation_id, "Triage this e-mail", input={"email_input": EMAIL})
        (question,) = parts(accepted(raw)["message"], "data-interrupt")
        body = chat_body(conversation_id, "", resume={"interruptId": question["id"], "value": [{"type": "accept"}]})
        resumed = parse_sse((await client.post("/api/chat", json=body)).content)  # applied to the message that asked
        history = await history_of(client, conversation_id)
    calls = len(openai.calls)
    assert calls > 2, "calls were made after the pause too"
    every_call = {"inputTokens": 11 * calls, "outputTokens": 7 * calls, "totalTokens": 18 * calls}
    assert history[1]["metadata"]["usage"] == every_call
    (finished,) = [chunk for chunk in resumed if chunk["type"] == "finish"]
    assert finished["messageMetadata"]["usage"] == every_call


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ({"email": EMAIL}, "the agent's input has no email (it takes email_input)"),
        ({"email_input": "not an object"}, "email_input: 'not an object' is not of type 'object'"),
        ({"messages": []}, "`messages` comes from the chat"),
    ],
)
async def test_an_input_the_agent_does_not_take_is_refused_naming_it(make_settings, openai, value, said):
    async with running(make_settings(graph="email_assistant.email_assistant_hitl:email_assistant")) as client:
        response = await client.post("/api/chat", json=chat_body(None, "hello", input=value))
    assert response.status_code == 400, response.text
    (detail,) = response.json()["error"]["details"]
    assert detail["field"] == "input" and said in detail["message"]


async def test_the_email_assistant_with_memory_keeps_what_it_learns_in_the_postgresql_store(
    make_settings, openai, database_url
):
    """The memory variant reads and writes LangGraph's store in its nodes (`store: BaseStore`): threadline gives
    every graph one, on PostgreSQL beside the conversations, so what it keeps outlives the process."""
    openai.script = email_script
    graph = "email_assistant.email_assistant_hitl_memory:email_assistant"
    async with running(make_settings(graph=graph)) as client:
        _, raw, _ = await chat(client, new_conversation_id(), "Triage this e-mail", input={"email_input": EMAIL})
        assert parts(accepted(raw)["message"], "data-interrupt"), "it asks before the e-mail goes out"
    with psycopg.connect(database_url) as connection:
        kept = connection.execute("SELECT prefix, key FROM store ORDER BY prefix").fetchall()
    assert ("email_assistant.triage_preferences", "user_preferences") in kept
    assert ("email_assistant.response_preferences", "user_preferences") in kept


async def test_an_exception_in_the_agents_own_code_is_an_agent_error_and_the_next_message_works(make_settings, openai):
    """Without its `email_input` the request is refused naming it; with an empty one the email assistant raises
    KeyError in its own node: AGENT_ERROR with the trace id to find it (not "the assistant is unavailable"), and
    the conversation goes on."""
    openai.script = email_script
    async with running(make_settings(graph="email_assistant.email_assistant_hitl:email_assistant")) as client:
        conversation_id = new_conversation_id()
        missing = await client.post("/api/chat", json=chat_body(conversation_id, "hello"))
        assert missing.status_code == 400 and "needs email_input" in missing.json()["error"]["message"]
        response = await client.post("/api/chat", json=chat_body(conversation_id, "hello", input={"email_input": {}}))
        assert response.status_code == 500
        error = response.json()["error"]
        assert error["code"] == "AGENT_ERROR" and "The agent failed while answering" in error["message"]
        trace_id = error["message"].split("trace id is ")[1].split(".")[0]
        trace = (await client.get(f"/api/trace/{trace_id}")).json()  # the id finds the failed answer's trace
        assert trace["status"] == "error" and trace["errorCode"] == "AGENT_ERROR", trace
        _, raw, _ = await chat(client, conversation_id, "Triage this e-mail", input={"email_input": EMAIL})
        assert parts(accepted(raw)["message"], "data-interrupt")


def team_script(call: Call) -> Reply | None:
    """The supervisor hands math to its math expert, who adds and reports back; the swarm's Alice hands a
    request for Bob to Bob, and Bob hands sums back to Alice."""
    last = call.results[-1] if call.results and call.last_result is not None else None
    if "transfer_to_math_expert" in call.tools:  # the supervisor
        return Reply(tool=("transfer_to_math_expert", {})) if last is None else Reply(text="The team says 7.")
    if "multiply" in call.tools:  # the math expert
        return Reply(text="3 + 4 = 7.") if last == "add" else Reply(tool=("add", {"a": 3, "b": 4}))
    if "transfer_to_bob" in call.tools:  # Alice
        if "Bob" in call.users[-1] and last is None:
            return Reply(tool=("transfer_to_bob", {}))
        return Reply(text="5 + 7 is 12.") if last == "add" else Reply(tool=("add", {"a": 5, "b": 7}))
    if "transfer_to_alice" in call.tools:  # Bob
        return Reply(text="Ahoy, Bob here!") if last == "transfer_to_bob" else Reply(tool=("transfer_to_alice", {}))
    return None


async def test_a_supervisors_team_hands_off_and_reports_back_as_the_person_saw_it(make_settings, openai):
    """langgraph-supervisor's README team: every handoff completes, the worker's tool call and the supervisor's
    answer stream, and the history after a reload is what streamed."""
    openai.script = team_script
    async with running(make_settings(graph="supervisor:app")) as client:
        conversation_id = new_conversation_id()
        live = await converse(client, conversation_id, ["what's 3 + 4?", "and again?"])
        history = await history_of(client, conversation_id)
    (handoff, *_) = parts(live[0], "tool-transfer_to_math_expert")
    assert handoff["state"] == "output-available", "a handoff is done, live"
    (added,) = parts(live[0], "tool-add")
    assert added["state"] == "output-available" and added["output"] == "7.0"
    assert texts(live[0]).endswith("The team says 7.")
    assert added["callProviderMetadata"] == {"threadline": {"agent": "math_expert"}}, "who called it"
    said_by = [part["providerMetadata"]["threadline"]["agent"] for part in parts(live[0], "text")]
    assert said_by == ["math_expert", "math_expert", "supervisor"]
    assert [shown(m) for m in history[1::2]] == [shown(m) for m in live]


async def test_a_swarm_keeps_its_active_agent_from_message_to_message(make_settings, openai):
    """langgraph-swarm's README pair: Alice hands the person to Bob; Bob is still the one answering the next
    message, and hands sums back to Alice."""
    openai.script = team_script
    async with running(make_settings(graph="swarm:app")) as client:
        conversation_id = new_conversation_id()
        live = await converse(client, conversation_id, ["i'd like to speak to Bob", "what's 5 + 7?"])
        history = await history_of(client, conversation_id)
    assert parts(live[0], "tool-transfer_to_bob")[0]["state"] == "output-available"
    assert texts(live[0]) == "Ahoy, Bob here!"
    assert parts(live[1], "tool-transfer_to_alice")[0]["state"] == "output-available", "Bob answered it first"
    assert parts(live[1], "tool-add")[0]["output"] == "12" and texts(live[1]) == "5 + 7 is 12."
    assert [shown(m) for m in history[1::2]] == [shown(m) for m in live]


COUNTING = " ".join(str(number) for number in range(1, 61))


def slowly(script):
    """`script`, but "count slowly" is answered word by word, 20 ms apart: an answer to reload or stop mid-way."""

    def answer(call: Call) -> Reply | None:
        if call.users[-1] == "count slowly" and call.last_result is None and not call.structured:
            return Reply(text=COUNTING, pace=0.02)
        return script(call)

    return answer


def write_script(call: Call) -> Reply | None:
    """agents-from-scratch's LangGraph 101 model (its tool is required): writes the e-mail it is asked for."""
    if call.last_result is None and "write_email" in call.tools:
        to = call.users[-1].removeprefix("e-mail ")
        return Reply(tool=("write_email", {"to": to, "subject": "Hello", "content": f"Hi {to}."}))
    return None


REACT_TEMPLATE = str(SOURCES / "react-agent" / "langgraph.json")


@pytest.mark.parametrize(
    ("graph", "provider", "script"),
    [
        (REACT_TEMPLATE, "anthropic", react_script),
        ("quickstart:agent", "anthropic", quickstart_script),
        ("deep_agent:graph", "anthropic", deep_script),
        ("supervisor:app", "openai", team_script),
        ("swarm:app", "openai", team_script),
        ("email_assistant.langgraph_101:app", "openai", write_script),
        (str(SOURCES / "deep_research" / "langgraph.json"), "anthropic", lambda call: None),
    ],
    ids=["react-template", "quickstart", "deepagents", "supervisor", "swarm", "langgraph-101", "deep-research"],
)
def test_a_public_agents_answer_resumes_after_a_reload_a_stop_keeps_what_it_said_and_ai4_reads_it(
    make_settings, request, graph, provider, script
):
    standin = request.getfixturevalue(provider)
    standin.script = slowly(script)
    with serving(make_settings(graph=graph)) as base_url:
        asyncio.run(reload_then_stop(base_url))


SLOW_EMAIL = EMAIL | {"subject": "count slowly"}


def slow_email_script(call: Call) -> Reply | None:
    """The email assistant's response agent says what it will do, word by word, before it calls `Done`."""
    if not call.structured and "count slowly" in call.users[-1] and not call.results:
        return Reply(text=COUNTING, tool=("Done", {"done": True}), pace=0.02)
    return email_script(call)


@pytest.mark.parametrize("variant", ["email_assistant_hitl", "email_assistant"])
def test_the_email_assistants_answer_resumes_after_a_reload_a_stop_keeps_what_it_said_and_ai4_reads_it(
    make_settings, openai, variant
):
    """Its own input on every message (`input.email_input`), as a `useChat` page sends it."""
    openai.script = slow_email_script
    graph = f"email_assistant.{variant}:email_assistant"
    with serving(make_settings(graph=graph)) as base_url:
        asyncio.run(reload_then_stop(base_url, input={"email_input": SLOW_EMAIL}))


async def reload_then_stop(base_url: str, **extra) -> None:
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
        await client.get("/api/conversations")
        cookie, conversation_id = f"{COOKIE}={client.cookies[COOKIE]}", new_conversation_id()
        response = await count_slowly(client, conversation_id, **extra)
        _, _reading = await first_deltas(response, 3)  # kept: a dropped reader would close the stream
        async with httpx.AsyncClient(base_url=base_url, headers={"cookie": cookie}, timeout=30) as reloaded:
            replayed = await reloaded.get(f"/api/chat/{conversation_id}/stream")  # what useChat asks after a reload
        assert replayed.status_code == 200
        assert texts(accepted(replayed.content)["message"]) == COUNTING, "the whole answer, from its start"
        await response.aclose()
        response = await count_slowly(client, conversation_id, **extra)
        shown, _reading = await first_deltas(response, 3)
        stop = await client.post("/api/cancel_stream", json={"conversation_id": conversation_id})
        assert stop.status_code == 200
        await response.aclose()
        answer = await saved_answer(client, conversation_id)
        assert answer["metadata"]["interrupted"] == "cancelled" and texts(answer).startswith(shown)
        assert len(texts(answer)) < len(COUNTING)
        body = chat_body(conversation_id, "count slowly", **extra)
        response = await client.post("/api/chat?protocol=data-stream", json=body)
        assert read_with_ai4(response.content)["message"]["content"] == COUNTING, "the third answer, read by ai 4"


async def count_slowly(client: httpx.AsyncClient, conversation_id: str, **extra) -> httpx.Response:
    request = client.build_request("POST", "/api/chat", json=chat_body(conversation_id, "count slowly", **extra))
    response = await client.send(request, stream=True)
    assert response.status_code == 200
    return response


def research_script(call: Call) -> Reply | None:
    """deepagents' deep-research example: the orchestrator delegates to its research sub-agent, which searches and
    reports; the orchestrator answers from the report."""
    if "task" in call.tools:  # the orchestrator
        if call.last_result is None:
            return Reply(tool=("task", {"description": "tide pools", "subagent_type": "research-agent"}))
        return Reply(text=f"Report: {call.last_result}")
    if "tavily_search" in call.tools:  # its research sub-agent
        if call.last_result is None:
            return Reply(tool=("tavily_search", {"query": call.users[-1]}))
        return Reply(text="Tide pools are rocky pools left at low tide.")
    return None


async def test_deepagents_deep_research_delegates_to_its_researcher_from_its_own_langgraph_json(
    make_settings, anthropic
):
    """deepagents' `examples/deep_research`, served from its own langgraph.json: its researcher sub-agent searches
    inside the `task` tool (not shown), the report it writes is the task's output, every call is counted."""
    anthropic.script = research_script
    graph = str(SOURCES / "deep_research" / "langgraph.json")
    async with running(make_settings(graph=graph)) as client:
        conversation_id = new_conversation_id()
        (live,) = await converse(client, conversation_id, ["research tide pools"])
        history = await history_of(client, conversation_id)
    (task,) = parts(live, "tool-task")
    assert task["state"] == "output-available" and "Tide pools are rocky pools" in str(task["output"])
    assert not parts(live, "tool-tavily_search"), "the researcher's search is the task's business"
    assert texts(live).startswith("Report: Tide pools are rocky pools")
    assert live["metadata"]["usage"]["inputTokens"] == 13 * 4, "its two calls and its researcher's two"
    assert live["metadata"]["model"] == "anthropic:claude-sonnet-4-5-20250929"
    assert [shown(m) for m in history[1::2]] == [shown(live)]


def test_the_python_client_says_which_agent_of_a_team_did_what(make_settings, openai):
    openai.script = team_script
    with serving(make_settings(graph="supervisor:app")) as base_url, Client(base_url) as client:
        answer = client.ask("what's 3 + 4?")
    assert [(call.tool_name, call.agent) for call in answer.tool_calls] == [
        ("transfer_to_math_expert", "supervisor"),
        ("add", "math_expert"),
        ("transfer_back_to_supervisor", "math_expert"),
    ]
    said = [
        (part["text"], part.get("agent")) for part in answer.parts if isinstance(part, dict) and part["type"] == "text"
    ]
    assert said[-1] == ("The team says 7.", "supervisor") and said[0] == ("3 + 4 = 7.", "math_expert")


@pytest.mark.parametrize("then", ["waits", "a new message"])
async def test_the_email_assistants_draft_is_kept_while_it_asks_and_after_a_new_message(make_settings, openai, then):
    """The draft the email assistant's response agent (a subgraph) made before asking is in the history while the
    question waits, and stays with that answer when a new message leaves the question unanswered."""
    openai.script = email_script
    async with running(make_settings(graph="email_assistant.email_assistant_hitl:email_assistant")) as client:
        conversation_id = new_conversation_id()
        _, raw, _ = await chat(client, conversation_id, "Triage this e-mail", input={"email_input": EMAIL})
        asking = accepted(raw)["message"]
        if then == "a new message":
            await chat(client, conversation_id, "Triage this one instead", input={"email_input": EMAIL})
        history = await history_of(client, conversation_id)
    (draft,) = parts(history[1], "tool-write_email")
    assert draft["input"] == parts(asking, "tool-write_email")[0]["input"]
    assert parts(history[1], "data-interrupt") == parts(asking, "data-interrupt")
    assert [m["role"] for m in history] == ["user", "assistant"] * (2 if then == "a new message" else 1)


async def test_the_email_assistants_question_reaches_an_ai4_client_with_its_draft(make_settings, openai):
    openai.script = email_script
    async with running(make_settings(graph="email_assistant.email_assistant_hitl:email_assistant")) as client:
        body = chat_body(new_conversation_id(), "Triage this e-mail", input={"email_input": EMAIL})
        response = await client.post("/api/chat?protocol=data-stream", json=body)
    read = read_with_ai4(response.content)
    (draft,) = read["message"]["toolInvocations"]
    assert draft["toolName"] == "write_email" and draft["args"]["to"] == "alice.smith@company.com"
    data = [item for line in response.text.splitlines() if line.startswith("2:") for item in json.loads(line[2:])]
    (question,) = [item for item in data if "action_request" in json.dumps(item)]
    assert "write_email" in json.dumps(question), "the question goes out as a `2` data part"


async def test_the_email_assistant_without_hitl_answers_and_its_history_is_what_was_shown(make_settings, openai):
    """agents-from-scratch's first assistant (no human in the loop): its router hidden, its e-mail written and
    `Done` called, shown and kept as they streamed, message after message; `ai` 4 reads it."""
    openai.script = email_script
    async with running(make_settings(graph="email_assistant.email_assistant:email_assistant")) as client:
        conversation_id = new_conversation_id()
        said = ["Triage this e-mail", "And this one"]
        live = await converse(client, conversation_id, said, input={"email_input": EMAIL})
        history = await history_of(client, conversation_id)
        body = chat_body(conversation_id, "And a third", input={"email_input": EMAIL})
        response = await client.post("/api/chat?protocol=data-stream", json=body)
    (sent,) = parts(live[0], "tool-write_email")
    assert sent["state"] == "output-available" and sent["output"].startswith("Email sent to alice.smith")
    assert "classification" not in texts(live[0]), "the router's JSON is the router's"
    assert [shown(message) for message in history[1::2]] == [shown(message) for message in live]
    assert [texts(message) for message in history[0::2]] == said
    (done,) = parts(live[0], "tool-Done")
    assert done["state"] == "input-available", "its `Done` ends the answer, never run (and never 'declined')"
    assert "interrupted" not in history[1]["metadata"], "the next message does not mark it superseded"
    read = read_with_ai4(response.content)["message"]
    assert [call["toolName"] for call in read["toolInvocations"]] == ["write_email", "Done"]


async def test_langgraph_101_sends_its_email_and_its_history_is_what_was_shown(make_settings, openai):
    """The course's first graph: its run ends on its tool's result (written as a plain dict), shown and kept."""
    openai.script = write_script
    async with running(make_settings(graph="email_assistant.langgraph_101:app")) as client:
        conversation_id = new_conversation_id()
        live = await converse(client, conversation_id, ["e-mail bob@example.com", "e-mail ann@example.com"])
        history = await history_of(client, conversation_id)
        response = await client.post("/api/chat?protocol=data-stream", json=chat_body(conversation_id, "e-mail cy"))
    (sent,) = parts(live[1], "tool-write_email")
    assert sent["state"] == "output-available" and sent["output"].startswith("Email sent to ann@example.com")
    assert [shown(message) for message in history[1::2]] == [shown(message) for message in live]
    assert read_with_ai4(response.content)["message"]["toolInvocations"][0]["args"]["to"] == "cy"
