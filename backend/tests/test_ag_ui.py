"""POST /api/ag-ui read by the real @ag-ui/client HttpAgent (its event verifier included): the same conversations
as /api/chat, the server's history in every run's snapshot, each answer's text, reasoning and tool calls as AG-UI
events, errors as RUN_ERROR with threadline's codes."""

from __future__ import annotations

import json

import httpx
from helpers import chat_body, new_conversation_id, running, serving
from test_agents import accepted, example, texts
from threadline.http.identity import COOKIE
from threadline.settings import load_settings
from threadline_testing.ai_sdk import run_ag_ui


def visitor(base_url: str) -> str:
    """A visitor's cookie, as a page that loaded first has one."""
    response = httpx.get(f"{base_url}/api/conversations")
    return f"{COOKIE}={response.cookies[COOKIE]}"


def contents(messages: list[dict]) -> list[tuple[str, str]]:
    return [(message["role"], message.get("content") or "") for message in messages]


def test_a_conversation_over_ag_ui_streams_each_answer_and_a_fresh_client_gets_it_all_in_order(make_settings):
    with serving(make_settings()) as base_url:
        cookie, thread = visitor(base_url), new_conversation_id()
        runs = [{"text": "count to 3"}, {"text": "calculate 6*7"}, {"text": "count to 2", "fresh": True}]
        first, second, third = run_ag_ui(base_url, cookie, thread, runs)["runs"]
    for run in (first, second, third):
        assert run.get("error") is None, run
        assert run["types"][:2] == ["RUN_STARTED", "MESSAGES_SNAPSHOT"] and run["types"][-1] == "RUN_FINISHED"
    assert contents(first["messages"])[-1] == ("assistant", "1 2 3")
    assert {"TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"} <= set(second["types"])
    answer, result = second["messages"][-2:]
    assert answer["toolCalls"][0]["function"]["name"] == "calculator" and result["role"] == "tool"
    assert contents(third["messages"]) == [
        ("user", "count to 3"),
        ("assistant", "1 2 3"),
        ("user", "calculate 6*7"),
        *contents(second["messages"][-2:]),
        ("user", "count to 2"),
        ("assistant", "1 2"),
    ], "a client that sent one message holds the whole conversation, in order"


def test_a_conversation_goes_on_from_use_chat_to_ag_ui_and_back_as_one_history(make_settings):
    with serving(make_settings()) as base_url:
        cookie, thread = visitor(base_url), new_conversation_id()
        with httpx.Client(base_url=base_url, headers={"cookie": cookie}, timeout=30) as client:
            started = client.post("/api/chat", json=chat_body(thread, "count to 2"))
            (run,) = run_ag_ui(base_url, cookie, thread, [{"text": "think about tide pools", "fresh": True}])["runs"]
            ended = client.post("/api/chat", json=chat_body(thread, "count to 4"))
            history = client.get(f"/api/conversations/{thread}").json()["messages"]
    assert run.get("error") is None, run
    assert [texts(message) for message in history[0::2]] == ["count to 2", "think about tide pools", "count to 4"]
    assert texts(history[1]) == texts(accepted(started.content)["message"]) == "1 2"
    assert texts(history[5]) == texts(accepted(ended.content)["message"])
    (reasoning, answer) = run["messages"][-2:]
    thought = "".join(part["text"] for part in history[3]["parts"] if part["type"] == "reasoning")
    assert reasoning["role"] == "reasoning" and reasoning["content"] == thought
    assert answer == {"id": history[3]["id"], "role": "assistant", "content": texts(history[3])}
    assert [message["id"] for message in run["messages"][:2]] == [history[0]["id"], history[1]["id"]]
    assert {"REASONING_START", "REASONING_MESSAGE_CONTENT", "REASONING_END"} <= set(run["types"])


async def test_what_a_run_cannot_be_is_a_json_400_before_any_event(make_settings):
    base = {"threadId": new_conversation_id(), "runId": "r1", "tools": [], "context": []}
    user = {"id": "m1", "role": "user", "content": "hello"}
    async with running(make_settings()) as client:
        refused = {
            "no messages": await client.post("/api/ag-ui", json=base | {"messages": []}),
            "last not the user's": await client.post(
                "/api/ag-ui", json=base | {"messages": [user, {"id": "a1", "role": "assistant", "content": "hi"}]}
            ),
            "a bad thread id": await client.post("/api/ag-ui", json=base | {"threadId": "a b", "messages": [user]}),
            "an image": await client.post(
                "/api/ag-ui",
                json=base | {"messages": [user | {"content": [{"type": "image", "source": {"type": "url"}}]}]},
            ),
            "a browser tool named as the agent's own": await client.post(
                "/api/ag-ui", json=base | {"messages": [user], "tools": [{"name": "calculator", "description": "y"}]}
            ),
            "a tool message answering no call": await client.post(
                "/api/ag-ui", json=base | {"messages": [user, {"id": "t1", "role": "tool", "content": "x"}]}
            ),
            "not JSON": await client.post("/api/ag-ui", content=b"{", headers={"content-type": "application/json"}),
            "no such agent": await client.post(
                "/api/ag-ui", json=base | {"messages": [user], "forwardedProps": {"agent": "nobody"}}
            ),
            "not an agent's id": await client.post(
                "/api/ag-ui", json=base | {"messages": [user], "forwardedProps": {"agent": "a\u0000b"}}
            ),
        }
        history = (await client.get(f"/api/conversations/{base['threadId']}")).status_code
    for why, response in refused.items():
        assert response.status_code == 400, (why, response.text)
        assert response.json()["error"]["code"] == "VALIDATION_ERROR", (why, response.text)
    assert history == 404, "nothing was kept"


async def test_a_run_over_a_megabyte_is_refused_before_it_is_read_and_nothing_is_kept(make_settings):
    """HttpAgent sends every message it holds: a body over 1 MB is a 413 JSON error, measured before decoding."""
    thread, old = new_conversation_id(), {"id": "a0", "role": "assistant", "content": "x" * 1_100_000}
    run = {"threadId": thread, "runId": "r1", "messages": [old, {"id": "m1", "role": "user", "content": "hello"}]}
    async with running(make_settings()) as client:
        refused = await client.post("/api/ag-ui", json=run)
        history = await client.get(f"/api/conversations/{thread}")
    assert refused.status_code == 413 and refused.json()["error"]["code"] == "PAYLOAD_TOO_LARGE", refused.text
    assert history.status_code == 404


def test_another_visitors_thread_id_is_a_conversation_of_their_own_and_leaves_the_owners_as_it_was(make_settings):
    """As on /api/chat: conversations are each visitor's, so the same id sent by someone else starts theirs, and
    their snapshot holds nothing of the owner's."""
    with serving(make_settings()) as base_url:
        owner, other, thread = visitor(base_url), visitor(base_url), new_conversation_id()
        (mine,) = run_ag_ui(base_url, owner, thread, [{"text": "count to 2"}])["runs"]
        (theirs,) = run_ag_ui(base_url, other, thread, [{"text": "count to 5"}])["runs"]
        with httpx.Client(base_url=base_url, headers={"cookie": owner}, timeout=30) as client:
            history = client.get(f"/api/conversations/{thread}").json()["messages"]
    assert mine.get("error") is None and theirs.get("error") is None
    assert contents(theirs["messages"]) == [("user", "count to 5"), ("assistant", "1 2 3 4 5")]
    assert [texts(message) for message in history] == ["count to 2", "1 2"]


def test_a_failed_answer_is_a_run_error_with_threadlines_code(openai_settings):
    with serving(openai_settings()) as base_url:
        (run,) = run_ag_ui(base_url, visitor(base_url), new_conversation_id(), [{"text": "fail 401"}])["runs"]
    (error,) = [event for event in run["events"] if event["type"] == "RUN_ERROR"]
    assert error["code"] == "UNAUTHORIZED" and run["types"][0] == "RUN_STARTED", run["types"]


def test_an_agents_question_ends_the_run_as_an_interrupt_that_the_next_run_answers_or_declines(make_settings):
    """The agent's `interrupt()` question is the run's outcome (`interrupt`, with its id and what it asks); the next
    run's `resume` answers it and the answer that asked goes on; cancelled with a new message, it is declined (as a
    new message on /api/chat declines it) and the new message is answered."""
    with serving(example(make_settings, "research")) as base_url:
        cookie = visitor(base_url)
        runs = [{"text": "research tide pools"}, {"resolve": "geology"}]
        asking, answered = run_ag_ui(base_url, cookie, new_conversation_id(), runs)["runs"]
        runs = [{"text": "research tide pools"}, {"cancel": True, "text": "count to 2"}]
        _, declined = run_ag_ui(base_url, cookie, new_conversation_id(), runs)["runs"]
    finished = asking["events"][-1]
    (question,) = finished["outcome"]["interrupts"]
    assert finished["outcome"]["type"] == "interrupt" and question["reason"] == "input_required"
    assert "Which aspect of tide pools should I look into?" in question["message"]
    assert answered.get("error") is None and "outcome" not in answered["events"][-1], answered["types"]
    assert answered["messages"][-1]["role"] == "assistant" and "about geology" in answered["messages"][-1]["content"]
    assert declined.get("error") is None and contents(declined["messages"])[-2:] == [
        ("user", "count to 2"),
        ("assistant", "1 2"),
    ]


def careful(make_settings):
    """The demo model on a profile whose calculator calls wait for the person's approval."""
    profile = {"id": "careful", "provider": "demo", "model": "demo", "require_approval": ["calc*"], "default": True}
    return make_settings(profiles=load_settings({"CHAT_PROFILES": json.dumps([profile])}).models.profiles)


def test_a_call_that_waits_for_approval_is_an_interrupt_the_next_run_approves_or_declines(make_settings):
    with serving(careful(make_settings)) as base_url:
        cookie = visitor(base_url)
        asking, approved = run_ag_ui(
            base_url, cookie, new_conversation_id(), [{"text": "calculate 6*7"}, {"resolve": {"approved": True}}]
        )["runs"]
        _, declined = run_ag_ui(
            base_url,
            cookie,
            new_conversation_id(),
            [{"text": "calculate 6*7"}, {"resolve": {"approved": False, "reason": "not now"}}],
        )["runs"]
    (waits,) = asking["events"][-1]["outcome"]["interrupts"]
    call = asking["messages"][-1]["toolCalls"][0]
    assert waits["reason"] == "tool_approval" and waits["toolCallId"] == call["id"]
    assert approved.get("error") is None, approved
    (result,) = [event for event in approved["events"] if event["type"] == "TOOL_CALL_RESULT"]
    assert result["toolCallId"] == call["id"] and result["content"] == "42"
    (refusal,) = [event for event in declined["events"] if event["type"] == "TOOL_CALL_RESULT"]
    assert "declined" in refusal["content"] and "not now" in refusal["content"]


async def test_a_resume_for_nothing_that_waits_is_refused_and_runs_nothing(make_settings):
    run = {"threadId": new_conversation_id(), "runId": "r1", "messages": [{"id": "m1", "role": "user", "content": "x"}]}
    async with running(make_settings()) as client:
        unknown = await client.post("/api/ag-ui", json=run | {"resume": [{"interruptId": "no", "status": "resolved"}]})
        assert (await client.post("/api/ag-ui", json=run)).status_code == 200
        forged = await client.post("/api/ag-ui", json=run | {"resume": [{"interruptId": "no", "status": "resolved"}]})
        history = (await client.get(f"/api/conversations/{run['threadId']}")).json()["messages"]
    assert unknown.status_code == 404, "no such conversation"
    assert forged.status_code == 409 and forged.json()["error"]["code"] == "CONFLICT", forged.text
    assert [message["role"] for message in history] == ["user", "assistant"], "nothing ran"
