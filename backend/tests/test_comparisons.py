"""A/B comparisons (seed 002): one message answered by two profiles on two branches, a vote that makes the
chosen answer the conversation's continuation, and the counts operators read."""

from __future__ import annotations

import asyncio
import itertools
import json
import time

import httpx
import pytest
from helpers import chat, chat_body, new_conversation_id, running, serving, sse_chunks, text_of
from threadline.client import Client, ThreadlineError
from threadline.http.identity import COOKIE
from threadline.settings import SettingsError, load_settings
from threadline_testing import standins
from threadline_testing.ai_sdk import read_with_ai
from threadline_testing.database import conversation_footprint
from threadline_testing.processes import threadline_server
from threadline_testing.sse import parse_sse

DEMO = {"id": "demo", "label": "Demo", "provider": "demo", "model": "demo", "default": True}
PAIR = ["demo", "standin"]


@pytest.fixture
def standin():
    server = standins.start("openai")
    yield server
    server.stop()


@pytest.fixture
def ab_settings(make_settings, standin):
    def make(**extra):
        profile = {"id": "standin", "provider": "openai", "model": "gpt-standin", "base_url": standin.base_url}
        env = {"CHAT_PROFILES": json.dumps([DEMO, profile | {"api_key": "sk-test"}])}
        return make_settings(profiles=load_settings(env).models.profiles, **extra)

    return make


async def finished_comparison(client, comparison_id: str) -> dict:
    for _ in range(200):
        comparison = (await client.get(f"/api/comparisons/{comparison_id}")).json()
        if comparison["a"].get("text") is not None and comparison["b"].get("text") is not None:
            return comparison
        await asyncio.sleep(0.05)
    raise AssertionError(f"the comparison never finished: {comparison}")


async def last_answer(client, conversation_id: str) -> dict:
    messages = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"]
    return messages[-1]


def text_parts(message: dict) -> str:
    return "".join(part["text"] for part in message["parts"] if part["type"] == "text")


async def test_two_answers_a_vote_and_the_chosen_one_goes_on(ab_settings, standin):
    conversation_id = new_conversation_id()
    async with running(ab_settings(admin_token="operator-secret")) as client:
        await chat(client, conversation_id, "hello")  # an earlier turn both branches see
        _, _, a_chunks = await chat(client, conversation_id, "compare this", compareProfiles=PAIR)
        comparison_id = a_chunks[0]["messageMetadata"]["comparisonId"]
        second = await client.get(f"/api/comparisons/{comparison_id}/stream")
        assert second.status_code == 200 and second.headers["content-type"].startswith("text/event-stream")
        read = read_with_ai(second.content)
        assert not read["errors"] and read["message"]["metadata"]["comparisonId"] == comparison_id
        assert (await client.get(f"/api/comparisons/{comparison_id}/stream")).status_code == 204, "read once"

        comparison = await finished_comparison(client, comparison_id)
        a_text, b_text = comparison["a"]["text"], comparison["b"]["text"]
        assert a_text == text_of(a_chunks) and b_text == text_of(parse_sse(second.content))
        assert b_text == "Echo: compare this (user messages seen: 2)", "B's branch holds the earlier turn, not A"
        assert a_text != b_text and (comparison["a"]["profile"], comparison["b"]["profile"]) == tuple(PAIR)
        assert comparison["a"]["model"] == "demo:demo" and comparison["preference"] is None

        refused = await client.post("/api/chat", json=chat_body(conversation_id, "and now?"))
        assert refused.status_code == 409 and refused.json()["error"]["code"] == "VOTE_REQUIRED"

        for preference, continuation in (("B", b_text), ("A", a_text), ("B", b_text)):  # a change of mind
            voted = await client.post(f"/api/comparisons/{comparison_id}/vote", json={"preference": preference})
            assert voted.json() == {"success": True, "preference": preference, "continuation": preference}
            answer = await last_answer(client, conversation_id)
            assert text_parts(answer) == continuation and answer["metadata"]["comparisonId"] == comparison_id

        standin.requests.clear()
        _, _, after = await chat(client, conversation_id, "go on", profileId="standin")
        sent = json.dumps(standin.requests[-1]["messages"])
        assert b_text in sent and a_text not in sent, "the model sees the chosen answer, not the other"
        assert text_of(after) == "Echo: go on (user messages seen: 3)"

        late = await client.post(f"/api/comparisons/{comparison_id}/vote", json={"preference": "tie"})
        assert late.json()["continuation"] == "B", "once the conversation moved on, a vote no longer changes it"
        record = (await client.get(f"/api/comparisons/{comparison_id}")).json()
        assert [vote["preference"] for vote in record["votes"]] == ["B", "A", "B", "tie"]
        assert record["preference"] == "tie" and record["votedAt"] == record["votes"][-1]["at"]

        assert (await client.get("/api/comparisons")).status_code == 401
        wrong = await client.get("/api/comparisons", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        admin = {"Authorization": "Bearer operator-secret"}
        counts = (await client.get("/api/comparisons", headers=admin)).json()
        mine = {"profile": "demo", "opponent": "standin", "wins": 0, "losses": 0, "ties": 1, "notVoted": 0}
        assert mine in counts
        from_b = (await client.get("/api/comparisons?profile=standin", headers=admin)).json()
        assert all(row["profile"] == "standin" for row in from_b) and from_b


async def test_comparisons_are_the_visitors_own_and_go_with_their_conversation(ab_settings):
    conversation_id = new_conversation_id()
    async with running(ab_settings(ab_profiles=("demo", "standin"))) as client:  # CHAT_AB_PROFILES
        _, _, chunks = await chat(client, conversation_id, "compare this")
        comparison_id = chunks[0]["messageMetadata"]["comparisonId"]
        await finished_comparison(client, comparison_id)
        owner = client.cookies[COOKIE]
        client.cookies.clear()
        for response in (
            await client.get(f"/api/comparisons/{comparison_id}"),
            await client.get(f"/api/comparisons/{comparison_id}/stream"),
            await client.post(f"/api/comparisons/{comparison_id}/vote", json={"preference": "A"}),
        ):
            assert response.status_code == 404 and response.json()["error"]["message"] == "Comparison not found"
        assert (await client.get("/api/comparisons")).status_code == 403, "no CHAT_ADMIN_TOKEN: no results"
        client.cookies.set(COOKIE, owner, domain=client.base_url.host)
        bad = await client.post(f"/api/comparisons/{comparison_id}/vote", json={"preference": "C"})
        assert bad.status_code == 400
        assert (await client.delete(f"/api/conversations/{conversation_id}")).status_code == 204
        assert (await client.get(f"/api/comparisons/{comparison_id}")).status_code == 404


async def test_unknown_or_repeated_profiles_are_refused(ab_settings):
    async with running(ab_settings()) as client:
        unknown = await client.post("/api/chat", json=chat_body(None, "hi", compareProfiles=["demo", "nope"]))
        same = await client.post("/api/chat", json=chat_body(None, "hi", compareProfiles=["demo", "demo"]))
    assert unknown.status_code == 404 and unknown.json()["error"]["message"] == "Profile not found"
    assert same.status_code == 400 and same.json()["error"]["details"][0]["field"] == "compareProfiles"
    with pytest.raises(SettingsError, match="CHAT_AB_PROFILES must name two different profiles"):
        load_settings({"CHAT_PROFILES": json.dumps([DEMO]), "CHAT_AB_PROFILES": "demo,other"})


async def first_of(chunks, kind: str) -> dict:
    async for chunk in chunks:
        if chunk["type"] == kind:
            return chunk
    raise AssertionError(f"no {kind} arrived")


async def text_until(chunks, words: str) -> str:
    text = ""
    async for chunk in chunks:
        text += chunk.get("delta", "") if chunk["type"] == "text-delta" else ""
        if words in text:
            return text
    raise AssertionError(f"the stream ended before {words!r}: {text!r}")


async def test_stopping_the_conversation_stops_both_answers(ab_settings):
    conversation_id = new_conversation_id()
    with serving(ab_settings(demo_token_delay_ms=30.0)) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            body = chat_body(conversation_id, "stall after 5", compareProfiles=PAIR)  # B stalls after five words
            async with client.stream("POST", "/api/chat", json=body) as first:
                chunks = sse_chunks(first)
                comparison_id = (await first_of(chunks, "start"))["messageMetadata"]["comparisonId"]
                await first_of(chunks, "text-delta")
                async with client.stream("GET", f"/api/comparisons/{comparison_id}/stream") as second:
                    await text_until(sse_chunks(second), "word4")  # B has stalled: only the stop can end it
                    stopped = await client.delete(f"/api/chat/{conversation_id}/stream")
            assert stopped.status_code == 200 and stopped.json()["cancelled"] is True
            comparison = await finished_comparison(client, comparison_id)
    assert comparison["a"]["finishReason"] == "other" and comparison["b"]["finishReason"] == "other"
    assert comparison["b"]["text"] == "word0 word1 word2 word3 word4"


def test_the_python_client_compares_and_votes(ab_settings):
    with serving(ab_settings()) as base_url, Client(base_url) as client:
        compared = client.compare("hello", "pyab1", profiles=("demo", "standin"))
        assert compared.a.metadata["comparisonId"] == compared.b.metadata["comparisonId"] == compared.comparison_id
        assert compared.b.text == "Echo: hello (user messages seen: 1)" and compared.a.text != compared.b.text
        with pytest.raises(ThreadlineError) as refused:
            client.ask("next", "pyab1")
        assert refused.value.code == "VOTE_REQUIRED"
        for _ in range(100):  # the record has both texts just after both streams ended
            try:
                assert client.vote(compared.comparison_id, "B")["continuation"] == "B"
                break
            except ThreadlineError as error:
                assert error.code == "CONFLICT"
                time.sleep(0.05)
        assert client.ask("next", "pyab1").text, "voted: the conversation goes on"
        history = json.dumps(client.load_conversation("pyab1"))
        assert compared.b.text in history and compared.a.text not in history


TWO_DEMOS = [DEMO, DEMO | {"id": "demo2", "label": "Demo 2", "default": False}]


def two_demos(make_settings, **extra):
    return make_settings(profiles=load_settings({"CHAT_PROFILES": json.dumps(TWO_DEMOS)}).models.profiles, **extra)


async def test_a_comparison_costs_its_two_answers_not_a_copy_of_the_conversation(make_settings, database_url):
    """Each compared turn, voted B, adds about what its own messages take: storage grows with the length of
    the conversation, not with its square, and no branch thread is left once both answers have ended."""
    conversation_id = new_conversation_id()
    sizes = []
    async with running(two_demos(make_settings)) as client:
        for turn in range(8):
            _, _, chunks = await chat(
                client, conversation_id, f"{turn} " + "x" * 4000, compareProfiles=["demo", "demo2"]
            )
            comparison_id = chunks[0]["messageMetadata"]["comparisonId"]
            await finished_comparison(client, comparison_id)
            voted = await client.post(f"/api/comparisons/{comparison_id}/vote", json={"preference": "B"})
            assert voted.json()["continuation"] == "B"
            sizes.append(await conversation_footprint(database_url, conversation_id))
        history = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"]
    assert len(history) == 16 and all(message["metadata"]["profile"] == "demo2" for message in history[1::2])
    assert {threads for _, threads in sizes} == {1}, "only the conversation's own thread: B's branch is gone"
    growth = [later - earlier for (earlier, _), (later, _) in itertools.pairwise(sizes)]
    early, late = sorted(growth[:3])[1], sorted(growth[-3:])[1]  # medians: a turn's settling may land late
    assert late < 1.5 * early, f"each turn adds about the same: {growth}"


async def test_votes_arriving_at_once_in_two_processes_are_all_kept_and_the_last_one_decides(database_url, tmp_path):
    env = {"CHAT_PROFILES": json.dumps(TWO_DEMOS), "CHAT_RATE_LIMIT": "1000/minute"}
    with (
        threadline_server(database_url, tmp_path, **env) as first,
        threadline_server(database_url, tmp_path, **env) as second,
    ):
        conversation_id = new_conversation_id()
        async with httpx.AsyncClient(base_url=first, timeout=30) as a:
            a.headers["x-threadline-client"] = (await a.get("/health")).headers["x-threadline-client"]
            _, _, chunks = await chat(a, conversation_id, "compare", compareProfiles=["demo", "demo2"])
            comparison_id = chunks[0]["messageMetadata"]["comparisonId"]
            await finished_comparison(a, comparison_id)
            async with httpx.AsyncClient(base_url=second, timeout=30, headers=a.headers) as b:
                preferences = ["A", "B", "tie", "B"] * 4
                votes = [
                    (a, b)[n % 2].post(f"/api/comparisons/{comparison_id}/vote", json={"preference": preference})
                    for n, preference in enumerate(preferences)
                ]
                responses = await asyncio.gather(*votes)
            record = (await a.get(f"/api/comparisons/{comparison_id}")).json()
            answer = await last_answer(a, conversation_id)
    assert {response.status_code for response in responses} == {200}
    assert sorted(vote["preference"] for vote in record["votes"]) == sorted(preferences), "no vote is lost"
    assert record["preference"] == record["votes"][-1]["preference"]
    chosen = "b" if record["preference"] == "B" else "a"
    assert answer["id"] == record[chosen]["messageId"], "the conversation goes on with the preferred answer"
