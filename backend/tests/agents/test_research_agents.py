"""The research agents teams copy for serious work, served unchanged (sources/README.md says what a test had to
replace: their web search), their models answered by the OpenAI stand-in: agents whose every model call is hidden,
that work for a while before they speak, and that keep their messages where the graph's output does not show them."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from helpers import chat_body, new_conversation_id, running, saved_answer, serving, sse_chunks
from test_agents import accepted, parts, texts
from test_public_agents import SOURCES, converse, history_of, shown
from threadline.http.identity import COOKIE
from threadline_testing.ai_sdk import read_with_ai4
from threadline_testing.standins import Call, Reply

OPEN_DEEP_RESEARCH = str(SOURCES / "open_deep_research" / "src" / "open_deep_research" / "deep_researcher.py")


@pytest.fixture(autouse=True)
def installed(monkeypatch):
    """Each agent's package importable, as `pip install -e .` of its repository makes it (open_deep_research is
    served by its graph's path: the auth its langgraph.json names needs a Supabase project)."""
    monkeypatch.syspath_prepend(str(SOURCES / "open_deep_research" / "src"))


REPORT = "# Tide pools\n\nRocky pools the sea leaves at low tide, full of life."


def deep_researcher_script(call: Call) -> Reply | None:
    """open_deep_research: asks what is meant when told "clarify", else says what it will research, briefs its
    supervisor, who sends one researcher; the researcher searches (each page summarised), compresses what it
    found, and the report is written from it."""
    prompt = call.users[-1] if call.users else ""
    if call.schema == "ClarifyWithUser":
        if "clarify" in said_last(prompt):
            return structured(need_clarification=True, question="Which coast do you mean?", verification="")
        return structured(need_clarification=False, question="", verification="I will research tide pools.")
    if call.schema == "ResearchQuestion":
        return structured(research_brief="What lives in tide pools?")
    if call.schema == "Summary":
        return structured(summary="Tide pools hold anemones.", key_excerpts="anemones")
    if "ConductResearch" in call.tools:  # the supervisor
        if call.last_result is None:
            return Reply(tool=("ConductResearch", {"research_topic": "tide pool life"}))
        return Reply(tool=("ResearchComplete", {}))
    if "tavily_search" in call.tools:  # a researcher
        if call.last_result is None:
            return Reply(tool=("tavily_search", {"queries": ["tide pool life"]}))
        return Reply(text="I found enough.")
    if prompt.startswith("All above messages are about research"):  # compressing what the researcher found
        return Reply(text="Tide pools hold anemones and crabs.")
    if prompt.startswith("Based on all the research conducted"):
        return Reply(text=REPORT)
    return None


def said_last(prompt: str) -> str:
    """What the person said last, in the conversation a prompt quotes (LangChain's buffer string)."""
    return prompt.split("<Messages>")[-1].split("</Messages>")[0].rsplit("Human: ", 1)[-1]


def structured(**fields) -> Reply:
    return Reply(text=json.dumps(fields))


async def test_open_deep_research_hides_its_research_and_shows_what_it_says_and_its_report(make_settings, openai):
    """Every model call is tagged `langsmith:nostream`: its clarifying question, its verification, and the report
    (all written to `messages`) are shown whole as they land, its supervisor's and researchers' tool calls (kept in
    their own state) are not; the history is what was shown, turn after turn; `ai` 4 reads it too."""
    openai.script = deep_researcher_script
    async with running(make_settings(graph=f"{OPEN_DEEP_RESEARCH}:deep_researcher")) as client:
        conversation_id = new_conversation_id()
        live = await converse(client, conversation_id, ["tell me about tide pools, clarify", "the Pacific coast"])
        history = await history_of(client, conversation_id)
        body = chat_body(conversation_id, "and the Atlantic coast")
        response = await client.post("/api/chat?protocol=data-stream", json=body)
    assert texts(live[0]) == "Which coast do you mean?"
    assert texts(live[1]) == f"I will research tide pools.{REPORT}"
    kinds = [part["type"] for part in live[1]["parts"]]
    assert kinds.count("text") == 2 and not [kind for kind in kinds if kind.startswith("tool-")], kinds
    assert [shown(message) for message in history[1::2]] == [shown(message) for message in live]
    assert read_with_ai4(response.content)["message"]["content"] == f"I will research tide pools.{REPORT}"
    researched = [call for call in openai.calls if call.schema == "Summary"]
    assert len(researched) == 5 * 2, "each of its five pages summarised, in both researched answers"
    assert live[1]["metadata"]["model"] == "openai:gpt-4.1, openai:gpt-4.1-mini", "its own models (the mini summarises)"
    calls = 13  # clarify, brief, the supervisor's two, the researcher's two, five summaries, compress, report
    assert live[1]["metadata"]["usage"] == {
        "inputTokens": 11 * calls,
        "outputTokens": 7 * calls,
        "totalTokens": 18 * calls,
    }


def test_open_deep_research_shows_its_steps_and_a_reload_or_a_stop_keeps_what_it_said(make_settings, openai):
    """While it researches (its researcher compresses its notes slowly here), the answer's status names its steps;
    a reloaded page gets what it said so far, and a stop keeps it."""
    openai.script = slow_compression
    with serving(make_settings(graph=f"{OPEN_DEEP_RESEARCH}:deep_researcher")) as base_url:
        asyncio.run(research_then_stop(base_url))


def slow_compression(call: Call) -> Reply | None:
    """Its researcher's notes compressed word by word, 300 ms apart: research to reload or stop mid-way."""
    reply = deep_researcher_script(call)
    if reply is not None and call.users and call.users[-1].startswith("All above messages are about research"):
        return Reply(text=reply.text, pace=0.3)
    return reply


def researching(conversation_id: str) -> dict:
    """A message as the page sends it: in events mode, where the agent's steps are the answer's status."""
    return chat_body(conversation_id, "tide pools", streamMode="events")


async def until_researching(reading, step: str = "research supervisor") -> list[dict]:
    """The chunks up to the status that says its research began; `reading` is kept by the caller (a reader
    dropped would close the stream, and the answer with it)."""
    seen = []
    async for chunk in reading:
        seen.append(chunk)
        if chunk["type"] == "data-status" and step in chunk["data"]["text"]:
            return seen
    raise AssertionError(f"no research began: {seen}")


async def research_then_stop(base_url: str) -> None:
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
        await client.get("/api/conversations")
        conversation_id = new_conversation_id()
        request = client.build_request("POST", "/api/chat", json=researching(conversation_id))
        response = await client.send(request, stream=True)
        reading = sse_chunks(response)
        seen = await until_researching(reading)
        assert any(chunk.get("delta") == "I will research tide pools." for chunk in seen), seen
        cookie = f"{COOKIE}={client.cookies[COOKIE]}"
        async with httpx.AsyncClient(base_url=base_url, headers={"cookie": cookie}, timeout=30) as reloaded:
            replayed = await reloaded.get(f"/api/chat/{conversation_id}/stream")
        assert texts(accepted(replayed.content)["message"]) == f"I will research tide pools.{REPORT}"
        await response.aclose()
        request = client.build_request("POST", "/api/chat", json=researching(conversation_id))
        response = await client.send(request, stream=True)
        reading = sse_chunks(response)
        await until_researching(reading)
        stop = await client.post("/api/cancel_stream", json={"conversation_id": conversation_id})
        assert stop.status_code == 200
        await response.aclose()
        answer = await saved_answer(client, conversation_id)
        assert answer["metadata"]["interrupted"] == "cancelled" and texts(answer) == "I will research tide pools."


DATA_ENRICHMENT = str(SOURCES / "data-enrichment" / "langgraph.json")
COMPANY = {
    "type": "object",
    "properties": {"founded": {"type": "integer"}, "founder": {"type": "string"}},
    "required": ["founded", "founder"],
}


def enrichment_script(call: Call) -> Reply | None:
    """data-enrichment: searches for its topic, hands in what it found with its `Info` tool, and its checker (a
    structured-output call) finds it satisfactory."""
    if "InfoIsSatisfactory" in call.tools or call.structured:
        verdict = {"reason": ["Both fields are filled."], "is_satisfactory": True, "improvement_instructions": None}
        return Reply(tool=("InfoIsSatisfactory", verdict)) if call.tools else structured(**verdict)
    if "Info" not in call.tools:
        return None
    if call.last_result is None:
        return Reply(tool=("search", {"query": "LangChain founding"}))
    slowly = any("take your time" in said for said in call.users)  # a second to reload or stop in, after its search
    return Reply(tool=("Info", {"founded": 2022, "founder": "Harrison Chase"}), pace=1.0 if slowly else 0.0)


async def test_data_enrichment_shows_its_search_and_answers_with_the_info_it_found(make_settings, anthropic):
    """Its output schema lets only `info` through: the answer still shows its search and its `Info` hand-in (what
    it did, in `messages`), the info is the answer's text and structured response, and the history is what was
    shown; its `extraction_schema` comes from the body's `input`, each message a new topic."""
    anthropic.script = enrichment_script
    async with running(make_settings(graph=DATA_ENRICHMENT)) as client:
        conversation_id = new_conversation_id()
        refused = await client.post("/api/chat", json=chat_body(None, "LangChain"))
        extraction = {"extraction_schema": COMPANY}
        live = await converse(client, conversation_id, ["LangChain", "LangGraph"], input=extraction)
        history = await history_of(client, conversation_id)
        body = chat_body(conversation_id, "LangSmith", input=extraction)
        response = await client.post("/api/chat?protocol=data-stream", json=body)
    assert refused.status_code == 400 and "extraction_schema" in refused.json()["error"]["message"]
    (search,) = parts(live[0], "tool-search")
    assert search["state"] == "output-available" and "What page 1 says" in json.dumps(search["output"])
    (info,) = parts(live[0], "tool-Info")
    assert info["input"] == {"founded": 2022, "founder": "Harrison Chase"} and info["state"] == "output-available"
    (found,) = parts(live[1], "data-structured-response")
    assert found["data"] == {"info": {"founded": 2022, "founder": "Harrison Chase"}}
    assert [shown(message) for message in history[1::2]] == [shown(message) for message in live]
    assert [texts(message) for message in history[0::2]] == ["LangChain", "LangGraph"]
    read = read_with_ai4(response.content)["message"]
    assert [call["toolName"] for call in read["toolInvocations"]] == ["search", "Info"]


def test_data_enrichment_keeps_its_running_answer_through_a_reload_and_a_stop(make_settings, anthropic):
    anthropic.script = enrichment_script
    with serving(make_settings(graph=DATA_ENRICHMENT)) as base_url:
        asyncio.run(search_then_stop(base_url))


async def search_then_stop(base_url: str) -> None:
    """A reloaded page follows the answer from its search to the info it hands in; a stop after its search ends it
    as stopped with the search it showed."""
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
        await client.get("/api/conversations")
        conversation_id, cookie = new_conversation_id(), f"{COOKIE}={client.cookies[COOKIE]}"
        extraction = {"extraction_schema": COMPANY}
        for turn in ("reload", "stop"):
            body = chat_body(conversation_id, f"LangChain, take your time ({turn})", input=extraction)
            response = await client.send(client.build_request("POST", "/api/chat", json=body), stream=True)
            reading = sse_chunks(response)
            async for chunk in reading:  # until its search's result is shown
                if chunk["type"] == "tool-output-available":
                    break
            if turn == "reload":
                async with httpx.AsyncClient(base_url=base_url, headers={"cookie": cookie}, timeout=30) as reloaded:
                    replayed = accepted((await reloaded.get(f"/api/chat/{conversation_id}/stream")).content)
                assert [part["type"] for part in replayed["message"]["parts"] if "toolCallId" in part] == [
                    "tool-search",
                    "tool-Info",
                ]
                (found,) = parts(replayed["message"], "data-structured-response")
                assert found["data"] == {"info": {"founded": 2022, "founder": "Harrison Chase"}}
            else:
                stop = await client.post("/api/cancel_stream", json={"conversation_id": conversation_id})
                assert stop.status_code == 200
            await response.aclose()
        answer = await saved_answer(client, conversation_id)
        assert answer["metadata"]["interrupted"] == "cancelled"
        (search,) = parts(answer, "tool-search")
        assert search["state"] == "output-available" and not parts(answer, "tool-Info")


LOCAL_DEEP_RESEARCHER = str(SOURCES / "local-deep-researcher" / "langgraph.json")


@pytest.fixture
def lmstudio(openai, monkeypatch):
    """local-deep-researcher's models as its README runs them on LM Studio, here the OpenAI stand-in."""
    monkeypatch.setenv("LLM_PROVIDER", "lmstudio")
    monkeypatch.setenv("LMSTUDIO_BASE_URL", openai.base_url)
    monkeypatch.setenv("MAX_WEB_RESEARCH_LOOPS", "1")
    openai.script = local_researcher_script
    return openai


def local_researcher_script(call: Call) -> Reply | None:
    """local-deep-researcher: every call answered in prose (slowly when told to take its time). Its JSON mode lives in
    its LM Studio model's `_generate`, which a streamed call (any server streaming its messages, LangGraph's too)
    does not go through: its query and its follow-up fall back to "Tell me more about …", as they would there."""
    asked = " ".join(call.users)
    return Reply(text="Tide pools hold anemones.", pace=0.3 if "take your time" in asked else 0.0)


async def test_local_deep_researcher_answers_with_its_summary_and_shows_its_steps(make_settings, lmstudio):
    """A graph without `messages` (its input `research_topic`, its output `running_summary`): each message is a new
    topic, the summary with its sources is the answer's text and structured response, its model calls (JSON mode,
    then prose) are its work, its nodes are the answer's status; the history is what was shown; `ai` 4 reads it."""
    async with running(make_settings(graph=LOCAL_DEEP_RESEARCHER)) as client:
        conversation_id = new_conversation_id()
        live = await converse(client, conversation_id, ["tide pools", "kelp forests"], streamMode="events")
        history = await history_of(client, conversation_id)
        body = chat_body(conversation_id, "coral reefs")
        response = await client.post("/api/chat?protocol=data-stream", json=body)
    summary = texts(live[0])
    assert summary.startswith("## Summary\nTide pools hold anemones.") and "### Sources:" in summary
    assert "* Result 1 for Tell me more about tide pools : https://example.org/1" in summary
    (output,) = parts(live[0], "data-structured-response")
    assert output["data"] == {"running_summary": summary}
    assert [shown(message) for message in history[1::2]] == [shown(message) for message in live]
    assert [texts(message) for message in history[0::2]] == ["tide pools", "kelp forests"]
    assert read_with_ai4(response.content)["message"]["content"] == summary.replace("tide pools", "coral reefs")
    assert live[0]["metadata"]["model"] == "openai:llama3.2", "its own model, on its provider"


def test_local_deep_researcher_keeps_its_running_answer_through_a_reload_and_a_stop(make_settings, lmstudio):
    with serving(make_settings(graph=LOCAL_DEEP_RESEARCHER)) as base_url:
        asyncio.run(summarise_then_stop(base_url))


async def summarise_then_stop(base_url: str) -> None:
    """A reloaded page follows the answer to its summary; a stop while it summarises ends it as stopped."""
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
        await client.get("/api/conversations")
        conversation_id, cookie = new_conversation_id(), f"{COOKIE}={client.cookies[COOKIE]}"
        body = chat_body(conversation_id, "tide pools, take your time", streamMode="events")
        response = await client.send(client.build_request("POST", "/api/chat", json=body), stream=True)
        reading = sse_chunks(response)
        await until_researching(reading, "summarize sources")
        async with httpx.AsyncClient(base_url=base_url, headers={"cookie": cookie}, timeout=30) as reloaded:
            replayed = await reloaded.get(f"/api/chat/{conversation_id}/stream")
        assert texts(accepted(replayed.content)["message"]).startswith("## Summary\nTide pools hold anemones")
        await response.aclose()
        response = await client.send(client.build_request("POST", "/api/chat", json=body), stream=True)
        reading = sse_chunks(response)
        await until_researching(reading, "summarize sources")
        stop = await client.post("/api/cancel_stream", json={"conversation_id": conversation_id})
        assert stop.status_code == 200
        await response.aclose()
        answer = await saved_answer(client, conversation_id)
        assert answer["metadata"]["interrupted"] == "cancelled" and texts(answer) == ""
