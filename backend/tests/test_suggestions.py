"""Suggested replies and actions on every wire, kept with the answer; POST /api/actions for server actions."""

from __future__ import annotations

import json

import app_actions
from helpers import chat, last_text, new_conversation_id, running, saved_answer, serving
from threadline.client import AsyncClient, Client, ThreadlineError
from threadline.http.identity import COOKIE
from threadline.settings import load_settings
from threadline_testing.ai_sdk import read_with_ai

DEMO = {"id": "demo", "label": "Demo", "provider": "demo", "model": "demo", "default": True}


def standin_profiles(standin_url: str, **standin: object) -> tuple:
    profile = {"id": "standin", "provider": "openai", "model": "gpt-standin", "base_url": standin_url}
    env = {"CHAT_PROFILES": json.dumps([DEMO, profile | {"api_key": "sk-test"} | standin])}
    return load_settings(env).models.profiles


async def test_the_demo_models_suggestions_on_every_wire_and_in_the_history(make_settings):
    conversation_id = new_conversation_id()
    async with running(make_settings()) as client:
        _, raw, chunks = await chat(client, conversation_id, "calculate 6*7")
        answer = await saved_answer(client, conversation_id)
        data_stream = await client.post(
            "/api/chat?protocol=data-stream",
            json={"id": conversation_id, "messages": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}]},
        )
    suggestions = next(chunk for chunk in chunks if chunk["type"] == "data-suggestions")
    assert "transient" not in suggestions and suggestions["id"] == "suggestions"
    assert [chunk["type"] for chunk in chunks][-2:] == ["data-suggestions", "finish"]
    values, actions = suggestions["data"]["values"], suggestions["data"]["actions"]
    assert values[0] == {"label": "Double it", "value": "calculate (6*7) * 2"}
    assert [(action["action"], action["handler"]) for action in actions] == [
        ("summarize_conversation", "server"),
        ("new_chat", "client"),
    ]
    assert answer["parts"][-1] == {"type": "data-suggestions", "id": "suggestions", "data": suggestions["data"]}
    parsed = read_with_ai(raw)
    assert parsed["errors"] == [] and parsed["message"]["parts"][-1]["data"] == suggestions["data"]
    annotation = next(line for line in data_stream.text.splitlines() if line.startswith('8:[{"suggestions"'))
    assert json.loads(annotation[2:])[0]["suggestions"]["values"][-1]["label"] == "Time in Tokyo"


async def test_invalid_suggestions_are_dropped_and_logged_and_a_profile_can_turn_them_off(
    make_settings, openai_settings, capfd
):
    from threadline_testing import standins

    standin = standins.start("openai")
    try:
        settings = make_settings(profiles=standin_profiles(standin.base_url, suggestions=True))
        async with running(settings) as client:
            _, _, chunks = await chat(client, None, "hello", profileId="standin")
        async with running(openai_settings()) as client:  # a paid provider suggests only when asked to
            _, _, plain = await chat(client, None, "hello")
    finally:
        standin.stop()
    data = next(chunk for chunk in chunks if chunk["type"] == "data-suggestions")["data"]
    assert data == {
        "values": [{"label": "Yes, proceed", "value": "yes"}],
        "actions": [
            {
                "label": "Summarize",
                "action": "summarize_conversation",
                "handler": "server",
                "style": "primary",
                "data": None,
            }
        ],
    }
    # The app configures logging itself (to stderr), replacing pytest's log capture.
    dropped = [line for line in capfd.readouterr().err.splitlines() if "threadline.agent.suggestions" in line]
    assert len(dropped) == 6, dropped
    assert any("launch_missiles" in message for message in dropped)
    assert any("'nope'" in message for message in dropped)
    assert not any(chunk["type"] == "data-suggestions" for chunk in plain)
    assert len(standin.requests) == 2, "one answer and one suggestion request; none for the plain profile"


async def test_server_actions_are_checked_owned_and_continue_or_answer(make_settings):
    conversation_id = new_conversation_id()
    settings = make_settings(actions=("app_actions:ACTIONS",), rate_limit="9/minute")  # the 10th request is refused
    async with running(settings) as client:
        await chat(client, conversation_id, "calculate 6*7")
        answer = await saved_answer(client, conversation_id)

        def act(action: str, data: dict | None = None, **extra):
            body = {"conversationId": conversation_id, "messageId": answer["id"], "action": action}
            return client.post("/api/actions", json=body | ({"data": data} if data is not None else {}) | extra)

        unknown = await act("launch_missiles")
        client_side = await act("copy_answer")
        bad_data = await act("apply_schema", {"schema_id": "one"})
        missing_message = await act("apply_schema", {"schema_id": 1}, messageId="nope")
        failing = await act("explode")
        applied = await act("apply_schema", {"schema_id": 123})
        summary = await act("summarize_conversation")
        history = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"]
        owner = client.cookies[COOKIE]
        client.cookies.clear()
        stranger = await act("apply_schema", {"schema_id": 1})
        client.cookies.set(COOKIE, owner, domain=client.base_url.host)
        limited = await act("summarize_conversation")
    assert unknown.status_code == client_side.status_code == bad_data.status_code == 400
    assert unknown.json()["error"]["code"] == client_side.json()["error"]["code"] == "UNKNOWN_ACTION"
    assert bad_data.json()["error"]["code"] == "VALIDATION_ERROR" and "'one' is not of type 'integer'" in bad_data.text
    assert missing_message.status_code == stranger.status_code == 404
    assert failing.status_code == 500 and "secret" not in failing.text
    assert applied.json() == {
        "action": "apply_schema",
        "result": {"schemaId": 123, "applied": True},
        "message": "Schema applied.",
    }
    call = app_actions.APPLIED[-1]
    assert (call.conversation_id, call.message_id) == (conversation_id, answer["id"]) and "42" in call.answer_text
    assert summary.status_code == 200 and summary.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert [message["role"] for message in history] == ["user", "assistant"] * 2
    assert last_text(history[2]) == "Summarize our conversation so far."
    assert last_text(history[3]) == "In short: you asked \u201ccalculate 6*7\u201d, and I answered each in turn."
    assert limited.status_code == 429, limited.text


async def test_retry_with_profile_writes_the_last_answer_again_and_detach_is_read_by_resuming(make_settings):
    from threadline_testing import standins

    standin = standins.start("openai")
    conversation_id = new_conversation_id()
    try:
        async with running(make_settings(profiles=standin_profiles(standin.base_url))) as client:
            await chat(client, conversation_id, "first question")
            first = await saved_answer(client, conversation_id)
            await chat(client, conversation_id, "second question")
            second = await saved_answer(client, conversation_id)
            retry = {"action": "retry_with_profile", "data": {"profile": "standin"}, "conversationId": conversation_id}
            older = await client.post("/api/actions", json=retry | {"messageId": first["id"]})
            detached = await client.post("/api/actions", json=retry | {"messageId": second["id"], "detach": True})
            resumed = await client.get(f"/api/chat/{conversation_id}/stream")
            history = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"]
    finally:
        standin.stop()
    assert older.status_code == 409 and older.json()["error"]["code"] == "CONFLICT"
    continued = detached.json()
    assert detached.status_code == 202 and continued["userMessageId"] is None and continued["messageId"]
    assert resumed.status_code in (200, 204)  # 204 when the answer already ended: the history has it
    assert [message["role"] for message in history] == ["user", "assistant"] * 2
    assert history[3]["id"] == continued["messageId"] and history[3]["metadata"]["profile"] == "standin"
    assert last_text(history[3]) == "Echo: second question (user messages seen: 2)"


def test_the_python_client_presses_a_suggested_action(make_settings):
    with serving(make_settings()) as base_url, Client(base_url) as client:
        answer = client.ask("hello")
        summary = client.run_action(answer, "summarize_conversation")
        try:
            client.run_action(answer, "launch_missiles")
        except ThreadlineError as error:
            refused = error
    assert answer.suggestions["values"][0] == {"label": "Count to 5", "value": "count to 5"}
    assert summary.text.startswith("In short: you asked \u201chello\u201d")
    assert summary.conversation_id == answer.conversation_id and summary.suggestions is not None
    assert refused.status == 400 and refused.code == "UNKNOWN_ACTION"


async def test_the_async_client_gets_an_actions_result(make_settings):
    with serving(make_settings(actions=("app_actions:ACTIONS",))) as base_url:
        async with AsyncClient(base_url) as client:
            answer = await client.ask("hello")
            done = await client.run_action(answer, "apply_schema", {"schema_id": 7})
            summary = await client.run_action(answer, "summarize_conversation")
    assert done == {"action": "apply_schema", "result": {"schemaId": 7, "applied": True}, "message": "Schema applied."}
    assert summary.text.startswith("In short:")


async def test_a_server_action_runs_only_as_its_answer_suggested_it(make_settings):
    """The demo answer suggests `retry_with_profile {"profile": "demo3"}`: other data, or an action it did not
    suggest, is refused; a free-form action (app_actions' apply_schema) takes any data its schema accepts."""
    demos = [DEMO | {"id": name, "default": name == "demo"} for name in ("demo", "demo2", "demo3")]
    profiles = load_settings({"CHAT_PROFILES": json.dumps(demos)}).models.profiles
    conversation_id = new_conversation_id()
    async with running(make_settings(profiles=profiles, actions=("app_actions:ACTIONS",))) as client:
        await chat(client, conversation_id, "hello")
        answer = await saved_answer(client, conversation_id)
        suggested = answer["parts"][-1]["data"]["actions"]
        body = {"conversationId": conversation_id, "messageId": answer["id"], "action": "retry_with_profile"}
        other_data = await client.post("/api/actions", json=body | {"data": {"profile": "demo2"}})
        free_form = await client.post("/api/actions", json=body | {"action": "apply_schema", "data": {"schema_id": 9}})
        as_suggested = await client.post("/api/actions", json=body | {"data": {"profile": "demo3"}})
    assert {"action": "retry_with_profile", "data": {"profile": "demo3"}} in [
        {"action": action["action"], "data": action.get("data")} for action in suggested
    ]
    assert other_data.status_code == 400 and other_data.json()["error"]["code"] == "NOT_SUGGESTED"
    assert free_form.status_code == 200 and free_form.json()["result"]["schemaId"] == 9
    assert as_suggested.status_code == 200 and as_suggested.headers["x-vercel-ai-ui-message-stream"] == "v1"
