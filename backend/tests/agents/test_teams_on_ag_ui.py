"""A team's answer over AG-UI, read by the real @ag-ui/client: one assistant message per speaker, named, live where
the agents' runs name them as they start (create_agent's `lc_agent_name`) and in every run's snapshot, under the
same ids, so the next run's snapshot changes nothing the client already holds."""

from __future__ import annotations

import json
import sys

import httpx
from helpers import chat_body, new_conversation_id, serving
from test_public_agents import team_script
from threadline.client import Client
from threadline.http.identity import COOKIE
from threadline_testing.ai_sdk import check_chunks, read_with_ai, run_ag_ui
from threadline_testing.standins import Call, Reply

NAMED_TEAM = """
from langchain.agents import create_agent
from langchain_openai import ChatOpenAI
from langgraph.graph import START, MessagesState, StateGraph

model = ChatOpenAI(model="gpt-4o-mini")
team = StateGraph(MessagesState)
team.add_node("writer", create_agent(model, system_prompt="You write the draft.", name="writer"))
team.add_node("critic", create_agent(model, system_prompt="You review the draft.", name="critic"))
team.add_edge(START, "writer")
team.add_edge("writer", "critic")
graph = team.compile()
"""


def writer_then_critic(call: Call) -> Reply | None:
    return Reply(text="Roses are red, the draft is done.") if "write" in call.system else Reply(text="It scans well.")


def visitor(base_url: str) -> str:
    return f"{COOKIE}={httpx.get(f'{base_url}/api/conversations').cookies[COOKIE]}"


def assistants(messages: list[dict]) -> list[tuple[str, str | None, str]]:
    return [(m["id"], m.get("name"), m.get("content") or "") for m in messages if m["role"] == "assistant"]


def named_team(tmp_path) -> str:
    (tmp_path / "team.py").write_text(NAMED_TEAM)
    (tmp_path / "langgraph.json").write_text(json.dumps({"graphs": {"team": "./team.py:graph"}}))
    return str(tmp_path / "langgraph.json")


def test_a_named_teams_speakers_are_messages_of_their_own_live_and_in_the_snapshot(make_settings, openai, tmp_path):
    openai.script = writer_then_critic
    with serving(make_settings(graph=named_team(tmp_path))) as base_url:
        thread = new_conversation_id()
        runs = [{"text": "a poem, please"}, {"text": "and again?", "fresh": True}]
        live, later = run_ag_ui(base_url, visitor(base_url), thread, runs)["runs"]
    assert live.get("error") is None and later.get("error") is None, (live, later)
    starts = [event for event in live["events"] if event["type"] == "TEXT_MESSAGE_START"]
    answer_id = starts[0]["messageId"]
    assert [(event["messageId"], event.get("name")) for event in starts] == [
        (answer_id, "writer"),
        (f"{answer_id}-2", "critic"),
    ], "each speaker's text is a message of its own, named as it starts"
    said = [(answer_id, "writer", "Roses are red, the draft is done."), (f"{answer_id}-2", "critic", "It scans well.")]
    assert assistants(live["messages"]) == said
    snapshot = next(event for event in later["events"] if event["type"] == "MESSAGES_SNAPSHOT")["messages"]
    assert assistants(snapshot)[:2] == said, "the snapshot holds the same messages under the same ids"


def test_a_supervisors_team_is_one_message_per_speaker_in_the_snapshot(make_settings, openai, monkeypatch):
    """langgraph-supervisor's workers (create_react_agent) are named only once their message is whole: live, the
    answer streams as the messages whose speaker was known as they started; the snapshot names every speaker."""
    openai.script = team_script
    # Its module makes its model when imported: imported again here, it reaches this module's stand-in (another
    # test module's import is put back afterwards).
    monkeypatch.delitem(sys.modules, "supervisor", raising=False)
    with serving(make_settings(graph="supervisor:app")) as base_url:
        thread = new_conversation_id()
        runs = [{"text": "what's 3 + 4?"}, {"text": "and again?", "fresh": True}]
        live, later = run_ag_ui(base_url, visitor(base_url), thread, runs)["runs"]
    assert live.get("error") is None and later.get("error") is None, (live, later)
    snapshot = next(event for event in later["events"] if event["type"] == "MESSAGES_SNAPSHOT")["messages"]
    answer_id = snapshot[1]["id"]
    named = [(m["id"], m.get("name"), [c["function"]["name"] for c in m.get("toolCalls", [])]) for m in snapshot[1:]]
    assert [item for item in named if item[1]] == [
        (answer_id, "supervisor", ["transfer_to_math_expert"]),
        (f"{answer_id}-2", "math_expert", ["add", "transfer_back_to_supervisor"]),
        (f"{answer_id}-3", "supervisor", []),
    ]
    live_ids = {m["id"] for m in live["messages"] if m["role"] == "assistant"}
    assert live_ids <= {m["id"] for m in snapshot}, "live messages keep their ids in the snapshot"
    assert snapshot[-2]["content"] == "The team says 7." and snapshot[-1]["content"] == "and again?"


def test_use_chat_and_python_know_a_named_speaker_as_its_text_starts(make_settings, openai, tmp_path):
    """The same speaker, on the UI Message Stream's `text-start` (its `providerMetadata`, which every `ai` major
    accepts) as on `text-end`."""
    openai.script = writer_then_critic
    with serving(make_settings(graph=named_team(tmp_path))) as base_url, Client(base_url) as client:
        raw = httpx.post(f"{base_url}/api/chat", json=chat_body(new_conversation_id(), "a poem"), timeout=30).content
        answer = client.ask("a poem")
    assert check_chunks(raw) == {"5": [], "6": [], "7": []}
    starts = [json.loads(line[6:]) for line in raw.decode().splitlines() if '"type":"text-start"' in line]
    assert [start["providerMetadata"]["threadline"]["agent"] for start in starts] == ["writer", "critic"]
    texts = [part for part in read_with_ai(raw)["message"]["parts"] if part["type"] == "text"]
    assert [part["providerMetadata"]["threadline"]["agent"] for part in texts] == ["writer", "critic"]
    assert [part.get("agent") for part in answer.parts if isinstance(part, dict) and part["type"] == "text"][:2] == [
        "writer",
        "critic",
    ]
