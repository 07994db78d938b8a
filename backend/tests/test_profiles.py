"""Model profiles: read from CHAT_PROFILES, listed without secrets, picked per conversation and remembered;
Anthropic through its real client library against a stand-in that speaks the Messages streaming format."""

from __future__ import annotations

import json

import pytest
from helpers import chat, chat_body, new_conversation_id, running, saved_answer, text_of
from threadline.http.identity import COOKIE
from threadline.settings import SettingsError, load_settings, replaced
from threadline.settings.profiles import DEMO_STARTERS, GENERAL_STARTERS
from threadline_testing import standins
from threadline_testing.ai_sdk import read_with_ai
from threadline_testing.sse import events_of

CLAUDE = {
    "id": "claude",
    "label": "Claude (stand-in)",
    "provider": "anthropic",
    "model": "claude-standin",
    "api_key": "${ANTHROPIC_TEST_KEY}",
    "system_prompt": "You are terse.",
    "temperature": 0.3,
    "max_tokens": 512,
}


def test_profiles_come_from_json_or_a_toml_file_with_keys_from_the_environment(tmp_path):
    env = {"ANTHROPIC_TEST_KEY": "sk-ant-secret"}
    demo = {"id": "demo", "provider": "demo", "model": "demo"}
    from_json = load_settings(env | {"CHAT_PROFILES": json.dumps([demo, CLAUDE])}).models.profiles
    toml = tmp_path / "profiles.toml"
    toml.write_text(
        '[[profiles]]\nid = "claude"\nprovider = "anthropic"\nmodel = "claude-standin"\n'
        'api_key = "${ANTHROPIC_TEST_KEY}"\ndefault = true\n\n'
        '[[profiles]]\nid = "demo"\nprovider = "demo"\nmodel = "demo"\n'
    )
    from_toml = load_settings(env | {"CHAT_PROFILES": str(toml)}).models.profiles
    assert [(profile.id, profile.default) for profile in from_json] == [("demo", True), ("claude", False)]
    assert from_json[1].api_key == "sk-ant-secret" and from_json[1].temperature == 0.3
    assert [(profile.id, profile.default) for profile in from_toml] == [("claude", True), ("demo", False)]
    assert from_toml[0].api_key == "sk-ant-secret"


@pytest.mark.parametrize(
    ("profiles", "message"),
    [
        ([{"id": "a", "provider": "anthropic", "model": ""}], "profile 'a': Model is required (model)"),
        ([{"id": "a", "provider": "", "model": "m"}], "profile 'a': Provider is required (provider)"),
        ([{"id": "a", "provider": "mystery", "model": "m"}], "profile 'a': provider must be one of anthropic"),
        ([{"id": "a", "provider": "custom", "model": "m"}], "profile 'a': a custom provider needs a base_url"),
        (
            [{"id": "a", "provider": "demo", "model": "m", "temprature": 1}],
            "profile 'a': Object contains unknown field",
        ),
        ([{"id": "a", "provider": "demo", "model": "m", "api_key": "${NOT_SET_ANYWHERE}"}], "${NOT_SET_ANYWHERE}"),
        ([], "must list at least one profile"),
    ],
)
def test_a_bad_profile_stops_start_up_with_one_line_naming_it(profiles, message):
    with pytest.raises(SettingsError, match=message.replace("(", r"\(").replace(")", r"\)").replace("$", r"\$")):
        load_settings({"CHAT_PROFILES": json.dumps(profiles)})


@pytest.fixture
def claude():
    standin = standins.start("anthropic")
    yield standin
    standin.stop()


def assert_read_by_ai(raw: bytes) -> None:
    """The real `ai` client reads the answer whole: its thinking, a tool round trip and the text."""
    read = read_with_ai(raw)
    kinds = [part["type"] for part in read["message"]["parts"]]
    assert not read["errors"] and "reasoning" in kinds and "tool-calculator" in kinds and kinds[-1] == "text"


def two_profiles(make_settings, claude, **changes):
    demo = {"id": "demo", "label": "Demo", "provider": "demo", "model": "demo", "default": True}
    profile = CLAUDE | {"base_url": claude.base_url, "api_key": "sk-ant-secret"} | changes
    env = {"CHAT_PROFILES": json.dumps([demo, profile])}
    return make_settings(profiles=load_settings(env).models.profiles)


async def test_profiles_are_listed_without_secrets(make_settings, claude):
    async with running(two_profiles(make_settings, claude)) as client:
        listed = (await client.get("/api/profiles")).json()
    assert listed == [
        {
            "id": "demo",
            "label": "Demo",
            "provider": "demo",
            "model": "demo",
            "default": True,
            "thinking": False,
            "inputs": ["image", "pdf", "text"],
            "starters": list(DEMO_STARTERS),  # the demo model's own commands
        },
        {
            "id": "claude",
            "label": "Claude (stand-in)",
            "provider": "anthropic",
            "model": "claude-standin",
            "default": False,
            "thinking": False,
            "inputs": ["image", "pdf", "text"],
            "starters": list(GENERAL_STARTERS),  # not the demo's test commands
        },
    ]
    assert "sk-ant" not in json.dumps(listed) and claude.base_url not in json.dumps(listed)


async def test_the_prompts_an_empty_conversation_offers_come_from_the_profile_or_chat_starters(make_settings, claude):
    settings = two_profiles(make_settings, claude, starters=["Review my pull request"])
    demo_env = {"CHAT_MODEL_PROVIDER": "demo"}
    configured = load_settings(
        demo_env | {"CHAT_STARTERS": '["Plan a sprint", " ", "Draft release notes"]'}
    ).agents.starters
    async with running(replaced(settings, starters=configured)) as client:
        demo, own = (await client.get("/api/profiles")).json()
    assert demo["starters"] == ["Plan a sprint", "Draft release notes"]
    assert own["starters"] == ["Review my pull request"], "a profile's own win"
    with pytest.raises(SettingsError, match="CHAT_STARTERS must be a JSON array of strings"):
        load_settings(demo_env | {"CHAT_STARTERS": "Plan a sprint, Draft release notes"})


async def test_a_conversation_keeps_the_profile_it_was_started_with(make_settings, claude):
    conversation_id = new_conversation_id()
    async with running(two_profiles(make_settings, claude)) as client:
        _, _, first = await chat(client, conversation_id, "hello", profileId="claude")
        _, _, second = await chat(client, conversation_id, "and again")
        _, _, other = await chat(client, new_conversation_id(), "hi")
        unknown = await client.post("/api/chat", json=chat_body(new_conversation_id(), "hi", profileId="gpt-9"))
        answer = await saved_answer(client, conversation_id)
        listed = (await client.get("/api/conversations")).json()
    start = first[0]["messageMetadata"]
    assert (start["model"], start["profile"]) == ("anthropic:claude-standin", "claude")
    assert text_of(first) == "Echo: hello (user messages seen: 1)"
    assert second[0]["messageMetadata"]["profile"] == "claude", "remembered without being named again"
    assert text_of(second) == "Echo: and again (user messages seen: 2)"
    assert other[0]["messageMetadata"]["model"] == "demo:demo", "a new conversation gets the default"
    assert unknown.status_code == 404
    assert unknown.json() == {"error": {"code": "NOT_FOUND", "message": "Profile not found"}}
    assert answer["metadata"]["profile"] == "claude" and answer["metadata"]["model"] == "anthropic:claude-standin"
    assert {row["id"]: row["profileId"] for row in listed}[conversation_id] == "claude"
    request = claude.requests[0]
    assert request["model"] == "claude-standin" and request["max_tokens"] == 512 and request["temperature"] == 0.3
    system = request["system"] if isinstance(request["system"], str) else request["system"][0]["text"]
    assert system == "You are terse.", "the profile's system prompt reaches the provider"
    assert [turn["role"] for turn in claude.requests[1]["messages"]] == ["user", "assistant", "user"]


async def test_anthropic_tool_use_and_usage(make_settings, claude):
    async with running(two_profiles(make_settings, claude)) as client:
        _, _, chunks = await chat(client, new_conversation_id(), "calculate 6*7", profileId="claude")
    types = [chunk["type"] for chunk in chunks]
    assert "tool-input-available" in types and "tool-output-available" in types
    call = next(chunk for chunk in chunks if chunk["type"] == "tool-input-available")
    assert call["toolName"] == "calculator" and call["input"] == {"expression": "6*7"}
    assert text_of(chunks) == "The tool said 42."
    assert chunks[-1]["messageMetadata"]["usage"] == {"inputTokens": 26, "outputTokens": 18, "totalTokens": 44}
    assert claude.requests[0]["tools"][0]["name"] in {"calculator", "current_time", "search_conversation"}


async def test_anthropic_thinking_streams_as_reasoning_and_its_signature_goes_back(make_settings, claude):
    settings = two_profiles(make_settings, claude, enable_thinking=True, thinking_budget=2048, max_tokens=None)
    async with running(settings) as client:
        _, _, chunks = await chat(
            client, new_conversation_id(), "calculate 6*7", profileId="claude", streamMode="events"
        )
    reasoning = "".join(chunk["delta"] for chunk in chunks if chunk["type"] == "reasoning-delta")
    assert reasoning.startswith("Let me think this through.")
    first, continuation = claude.requests
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048} and "temperature" not in first
    assert first["max_tokens"] == 4096 + 2048
    assistant = continuation["messages"][1]["content"]
    thinking = next(block for block in assistant if block["type"] == "thinking")
    assert thinking["signature"] == "sig-1", "the tool-use continuation carries the signed thinking back"


async def test_anthropic_errors_are_classified(make_settings, claude):
    async with running(two_profiles(make_settings, claude)) as client:
        refused = await client.post("/api/chat", json=chat_body(new_conversation_id(), "fail 401", profileId="claude"))
        busy = await client.post("/api/chat", json=chat_body(new_conversation_id(), "fail 429", profileId="claude"))
    assert refused.status_code == 500 and refused.json()["error"]["code"] == "UNAUTHORIZED"
    assert busy.json()["error"]["code"] == "RATE_LIMITED"


async def test_a_restart_keeps_the_conversations_profile(make_settings, claude):
    conversation_id = new_conversation_id()
    settings = two_profiles(make_settings, claude)
    async with running(settings) as client:
        await chat(client, conversation_id, "hello", profileId="claude")
        identity = client.cookies[COOKIE]
    async with running(settings) as client:
        client.cookies.set(COOKIE, identity, domain=client.base_url.host)
        _, _, after = await chat(client, conversation_id, "still there?")
    assert after[0]["messageMetadata"]["profile"] == "claude"
    assert text_of(after) == "Echo: still there? (user messages seen: 2)"


@pytest.mark.parametrize(("message", "code"), [("fail 529", "AI_SERVICE_UNAVAILABLE"), ("break after 3", None)])
async def test_anthropic_overloaded_and_a_broken_stream(make_settings, claude, message, code):
    async with running(two_profiles(make_settings, claude)) as client:
        response = await client.post("/api/chat", json=chat_body(new_conversation_id(), message, profileId="claude"))
    if code is not None:  # refused before anything was shown: an HTTP error
        assert response.status_code == 500 and response.json()["error"]["code"] == code
    else:  # broken after three words: they stay, and the stream ends with an error chunk
        chunks = list(events_of(response))
        assert text_of(chunks).startswith("word0 word1 word2") and chunks[-1]["type"] == "error"


async def test_gemini_thinking_streams_as_reasoning_with_its_budget(make_settings):
    gemini = standins.start("gemini")
    profile = {"id": "flash", "provider": "google", "model": "gemini-standin", "base_url": gemini.base_url}
    profile |= {"api_key": "test-key", "enable_thinking": True, "thinking_budget": 1024, "temperature": 0.2}
    try:
        settings = make_settings(profiles=load_settings({"CHAT_PROFILES": json.dumps([profile])}).models.profiles)
        async with running(settings) as client:
            _, raw, chunks = await chat(client, new_conversation_id(), "calculate 6*7")
    finally:
        gemini.stop()
    assert_read_by_ai(raw)
    types = [chunk["type"] for chunk in chunks]
    assert types.index("reasoning-start") < types.index("tool-input-available"), "thinking comes first"
    reasoning = "".join(chunk["delta"] for chunk in chunks if chunk["type"] == "reasoning-delta")
    assert reasoning.startswith("Let me think this through.") and "42" in text_of(chunks)
    config = gemini.requests[0]["generationConfig"]
    assert config["thinkingConfig"] == {"thinking_budget": 1024, "include_thoughts": True}  # as the SDK sends it
    assert config["temperature"] == 0.2


@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ("custom", "standin-reasoner"),  # vLLM, DeepSeek
        ("openrouter", "vendor/standin-reasoner"),
        ("openai", "standin-reasoner"),  # CHAT_MODEL_PROVIDER=openai with OPENAI_BASE_URL at such a server
    ],
)
async def test_openai_compatible_reasoning_streams_and_stays_out_of_the_next_request(make_settings, provider, model):
    server = standins.start("openai")
    profile = {"id": "r1", "provider": provider, "model": model, "base_url": server.base_url}
    try:
        settings = make_settings(profiles=load_settings({"CHAT_PROFILES": json.dumps([profile])}).models.profiles)
        async with running(settings) as client:
            conversation_id = new_conversation_id()
            _, raw, chunks = await chat(client, conversation_id, "calculate 6*7")
            history = (await client.get(f"/api/conversations/{conversation_id}")).json()
    finally:
        server.stop()
    assert_read_by_ai(raw)
    reasoning = "".join(chunk["delta"] for chunk in chunks if chunk["type"] == "reasoning-delta")
    assert reasoning.startswith("Let me think this through.") and text_of(chunks) == "The tool said 42."
    stored = [part for part in history["messages"][1]["parts"] if part["type"] == "reasoning"]
    assert stored and stored[0]["text"] == "Let me think this through."
    continuation = server.requests[1]["messages"]
    assert all("reasoning" not in json.dumps(message) for message in continuation), "reasoning is not sent back"
