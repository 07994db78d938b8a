"""Signed-in users (AUTH_ISSUER): bearer tokens from a local OpenID Connect provider (threadline_testing.oidc),
each user's conversations their own, and every forged, foreign or stale token refused with 401 before anything
is stored."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import time
import uuid
from contextlib import ExitStack

import httpx
import jwt
import psycopg
import pytest
import redis
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from helpers import chat_body, new_conversation_id, on_backend, running, serving, stream_some, text_of
from test_comparisons import TWO_DEMOS
from threadline.client import Client, ThreadlineError
from threadline.http.identity import COOKIE, HEADER
from threadline.settings import SettingsError, load_settings
from threadline_testing import oidc
from threadline_testing.processes import threadline_server
from threadline_testing.sse import aevents_of, events_of, parse_sse


@pytest.fixture(scope="module")
def provider():
    provider = oidc.start()
    yield provider
    provider.stop()


@pytest.fixture
def auth_settings(make_settings, provider):
    return lambda **extra: make_settings(auth_issuer=provider.issuer, auth_audience=oidc.AUDIENCE, **extra)


def someone(name: str) -> str:
    """A subject of its own per test: the tests share a database, and a user's conversations are theirs."""
    return f"{name}-{uuid.uuid4().hex[:8]}"


def signed_in(provider, name: str) -> dict[str, str]:
    return bearer(provider.token(someone(name)))


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def test_each_user_sees_only_their_own_conversations(auth_settings, provider):
    alice, bob = signed_in(provider, "alice"), signed_in(provider, "bob")
    async with running(auth_settings()) as client:
        conversation_id = new_conversation_id()
        answer = await client.post("/api/chat", json=chat_body(conversation_id, "hello"), headers=alice)
        assert answer.status_code == 200 and parse_sse(answer.content)[-1]["type"] == "finish"
        assert "set-cookie" not in answer.headers, "a signed-in user gets no anonymous identity"
        assert (await client.get(f"/api/conversations/{conversation_id}", headers=alice)).status_code == 200
        for other in (bob, {}):  # another user, and an anonymous visitor
            assert (await client.get(f"/api/conversations/{conversation_id}", headers=other)).status_code == 404
            taken = await client.post("/api/chat", json=chat_body(conversation_id, "mine now"), headers=other)
            assert taken.status_code == 200  # a conversation of their own under the same id, not alice's
        listed = (await client.get("/api/conversations", headers=alice)).json()
        assert [item["id"] for item in listed] == [conversation_id]
        history = (await client.get(f"/api/conversations/{conversation_id}", headers=alice)).json()["messages"]
        assert [message["parts"][0]["text"] for message in history if message["role"] == "user"] == ["hello"]


def unsigned(payload: dict, header: dict) -> str:
    def part(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    return f"{part(header)}.{part(payload)}."


def forged_tokens(provider) -> dict[str, str]:
    now = time.time()
    claims = {"iss": provider.issuer, "sub": "mallory", "aud": oidc.AUDIENCE, "iat": now, "exp": now + 300}
    rsa_key = provider.keys[0]
    public_pem = rsa_key.private.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    stranger = oidc.new_key("RS256")
    return {
        "another key": jwt.encode(claims, stranger.private, algorithm="RS256", headers={"kid": rsa_key.kid}),
        "alg none": unsigned(claims, {"alg": "none", "kid": rsa_key.kid}),
        "alg a list": unsigned(claims, {"alg": ["RS256"], "kid": rsa_key.kid}),
        "kid a list": unsigned(claims, {"alg": "RS256", "kid": [rsa_key.kid]}),
        "HS256 with the public key": _hs256(claims, public_pem, rsa_key.kid),
        "wrong issuer": provider.token("mallory", iss="https://evil.example"),
        "wrong audience": provider.token("mallory", aud="https://another.api"),
        "expired": provider.token("mallory", exp=now - 120),
        "not yet valid": provider.token("mallory", nbf=now + 600),
        "no subject": jwt.encode(
            {k: v for k, v in claims.items() if k != "sub"}, rsa_key.private, "RS256", headers={"kid": rsa_key.kid}
        ),
        "not a JWT": "hello",
    }


def _hs256(claims: dict, secret: bytes, kid: str) -> str:
    """HS256 signed with the provider's public key, which PyJWT itself refuses to do: signed by hand."""

    def part(value: bytes) -> str:
        return base64.urlsafe_b64encode(value).decode().rstrip("=")

    signing_input = f"{part(json.dumps({'alg': 'HS256', 'kid': kid}).encode())}.{part(json.dumps(claims).encode())}"
    signature = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{part(signature)}"


async def test_forged_foreign_and_stale_tokens_are_refused_and_nothing_is_stored(auth_settings, provider):
    async with running(auth_settings()) as client:
        for why, token in forged_tokens(provider).items():
            conversation_id = new_conversation_id()
            response = await client.post("/api/chat", json=chat_body(conversation_id, "hello"), headers=bearer(token))
            assert response.status_code == 401, (why, response.text)
            assert response.json()["error"]["code"] == "UNAUTHORIZED", why
            assert response.headers["www-authenticate"].startswith('Bearer error="invalid_token"'), why
            assert "set-cookie" not in response.headers, why
            assert "Traceback" not in response.text
            mallory = bearer(provider.token("mallory"))
            stored = await client.get(f"/api/conversations/{conversation_id}", headers=mallory)
            assert stored.status_code == 404, f"{why}: nothing was stored"


async def test_an_unknown_key_id_fetches_the_keys_once_however_many_ask(auth_settings, provider):
    async with running(auth_settings()) as client:
        assert (await client.get("/api/conversations", headers=signed_in(provider, "alice"))).status_code == 200
        fetched = provider.key_fetches
        stranger = oidc.new_key("RS256")
        token = provider.token("mallory", key=stranger)
        answers = await asyncio.gather(*(client.get("/api/conversations", headers=bearer(token)) for _ in range(30)))
        assert {response.status_code for response in answers} == {401}
        assert provider.key_fetches - fetched <= 1, "no refresh storm"
        for _ in range(20):  # a known key never fetches
            await client.get("/api/conversations", headers=signed_in(provider, "alice"))
        assert provider.key_fetches - fetched <= 1


async def test_a_rotated_key_is_fetched_and_accepted(auth_settings, provider, monkeypatch):
    monkeypatch.setattr("threadline.http.bearer.REFRESH_EVERY", 0.0)
    async with running(auth_settings()) as client:
        assert (await client.get("/api/conversations", headers=signed_in(provider, "alice"))).status_code == 200
        fresh = provider.rotate()
        token = provider.token(someone("alice"), key=fresh)
        rotated = await client.get("/api/conversations", headers=bearer(token))
        assert rotated.status_code == 200
        es256 = provider.keys[1]
        assert es256.algorithm == "ES256"
        assert (
            await client.get("/api/conversations", headers=bearer(provider.token(someone("bob"), key=es256)))
        ).status_code == 200


async def test_anonymous_visitors_can_be_turned_away(auth_settings, provider):
    async with running(auth_settings(auth_anonymous="deny", admin_token="operators-token")) as client:
        refused = await client.post("/api/chat", json=chat_body(None, "hello"))
        assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
        assert (await client.get("/health")).status_code == 200
        allowed = await client.post("/api/chat", json=chat_body(None, "hello"), headers=signed_in(provider, "alice"))
        assert allowed.status_code == 200
        operators = await client.get("/api/comparisons", headers=bearer("operators-token"))
        assert operators.status_code == 200, "CHAT_ADMIN_TOKEN still works for scripts"


async def test_without_an_issuer_a_bearer_header_changes_nothing(make_settings, provider):
    async with running(make_settings()) as client:
        response = await client.post("/api/chat", json=chat_body(None, "hello"), headers=bearer("not checked"))
        assert response.status_code == 200 and "set-cookie" in response.headers


def test_the_python_client_asks_as_the_signed_in_user(auth_settings, provider):
    with serving(auth_settings()) as base_url:
        with Client(base_url, bearer=provider.token(someone("alice"))) as alice:
            answer = alice.ask("hello")
            assert "I can see 0 earlier messages" in answer.text
            assert len(alice.list_conversations()) == 1
        with Client(base_url) as visitor, Client(base_url, bearer=provider.token(someone("bob"))) as bob:
            assert bob.list_conversations() == []
            conversation_id = visitor.ask("before signing in").conversation_id
            assert bob.claim(visitor.token) == {"conversations": [conversation_id], "skipped": []}
            assert [item["conversation_id"] for item in bob.list_conversations()] == [conversation_id]
            assert visitor.list_conversations() == []
        with Client(base_url, bearer="forged") as mallory, pytest.raises(ThreadlineError) as refused:
            mallory.ask("hello")
        assert refused.value.status == 401 and refused.value.code == "UNAUTHORIZED"


async def test_a_signed_in_users_chat_limit_is_their_own_not_their_addresss(auth_settings, provider):
    async with running(auth_settings(rate_limit="2/minute")) as client:
        alice, bob = signed_in(provider, "alice"), signed_in(provider, "bob")
        for _ in range(2):
            assert (await client.post("/api/chat", json=chat_body(None, "hello"), headers=alice)).status_code == 200
        limited = await client.post("/api/chat", json=chat_body(None, "hello"), headers=alice)
        assert limited.status_code == 429 and limited.json()["error"]["code"] == "RATE_LIMITED"
        # Bob and an anonymous visitor share alice's address, not her allowance.
        assert (await client.post("/api/chat", json=chat_body(None, "hello"), headers=bob)).status_code == 200
        assert (await client.post("/api/chat", json=chat_body(None, "hello"))).status_code == 200


async def test_operators_are_those_with_the_admin_role_or_the_admin_token(auth_settings, provider):
    settings = auth_settings(auth_admin_role="ops", auth_roles_claim="realm_access.roles", admin_token="ops-token")
    operator = bearer(provider.token(someone("olive"), realm_access={"roles": ["ops", "user"]}))
    async with running(settings) as client:
        for path in ("/api/comparisons", "/metrics"):
            assert (await client.get(path, headers=operator)).status_code == 200, path
            assert (await client.get(path, headers=bearer("ops-token"))).status_code == 200, path
            forbidden = await client.get(path, headers=signed_in(provider, "alice"))
            assert forbidden.status_code == 403 and forbidden.json()["error"]["code"] == "FORBIDDEN", path
            assert (await client.get(path)).status_code == 401, path
    async with running(auth_settings(auth_admin_role="ops", metrics_public=True)) as client:
        assert (await client.get("/metrics")).status_code == 200, "METRICS_PUBLIC keeps it open to scrapers"


async def test_metrics_are_the_operators_once_there_is_an_operators_token(make_settings):
    """Open with no operators at all; with CHAT_ADMIN_TOKEN alone it was still open to anyone (only AUTH_ADMIN_ROLE
    guarded it): now the token is needed, unless METRICS_PUBLIC."""
    async with running(make_settings()) as client:
        assert (await client.get("/metrics")).status_code == 200, "nobody is an operator: nothing to guard it with"
    async with running(make_settings(admin_token="ops-token")) as client:
        assert (await client.get("/metrics")).status_code == 401
        assert (await client.get("/metrics", headers=bearer("ops-token"))).status_code == 200
    async with running(make_settings(admin_token="ops-token", metrics_public=True)) as client:
        assert (await client.get("/metrics")).status_code == 200


async def anonymous_conversation(client, text: str) -> tuple[str, str]:
    """A conversation of a fresh anonymous visitor; returns (its id, the visitor's token)."""
    conversation_id = new_conversation_id()
    response = await client.post("/api/chat", json=chat_body(conversation_id, text), headers={HEADER: ""})
    assert response.status_code == 200
    return conversation_id, response.headers[HEADER]


async def rated_answer(client, conversation_id: str, headers: dict) -> str:
    messages = (await client.get(f"/api/conversations/{conversation_id}", headers=headers)).json()["messages"]
    message_id = messages[-1]["id"]
    rated = await client.put(f"/api/messages/{message_id}/feedback", json={"rating": "up"}, headers=headers)
    assert rated.status_code == 200
    return message_id


@pytest.mark.parametrize("backend", ["postgres", "memory"])
async def test_a_visitor_who_signs_in_claims_their_anonymous_conversations(auth_settings, provider, backend):
    settings = on_backend(auth_settings, backend)
    alice, bob = signed_in(provider, "alice"), signed_in(provider, "bob")
    async with running(settings) as client:
        client.cookies.clear()
        first, token = await anonymous_conversation(client, "before signing in")
        visitor = {HEADER: token}
        message_id = await rated_answer(client, first, visitor)
        second = new_conversation_id()
        assert (await client.post("/api/chat", json=chat_body(second, "mine"), headers=visitor)).status_code == 200
        assert (await client.post("/api/chat", json=chat_body(second, "hers"), headers=alice)).status_code == 200

        claimed = await client.post("/api/account/claim", json={"anonymousToken": token}, headers=alice)
        assert claimed.status_code == 200, claimed.text
        assert claimed.json() == {"conversations": [first], "skipped": [second]}, "alice already had that id"
        assert HEADER not in claimed.headers and "set-cookie" not in claimed.headers, "skipped: the identity stays"

        mine = {item["id"] for item in (await client.get("/api/conversations", headers=alice)).json()}
        assert mine == {first, second}
        history = (await client.get(f"/api/conversations/{first}", headers=alice)).json()["messages"]
        assert history[0]["parts"][0]["text"] == "before signing in"
        assert history[-1]["metadata"]["feedback"]["rating"] == "up", "the rating came along"
        assert (await client.get(f"/api/trace/by_message/{message_id}", headers=alice)).status_code == 200
        _, body, _ = await chat_as(client, first, "and now?", alice)
        assert "I can see 1 earlier message" in body, "the conversation goes on where the visitor left it"

        # The old anonymous identity owns nothing of it any more, on any route.
        assert [item["id"] for item in (await client.get("/api/conversations", headers=visitor)).json()] == [second]
        assert (await client.get(f"/api/conversations/{first}", headers=visitor)).status_code == 404
        assert (await client.get(f"/api/trace/by_message/{message_id}", headers=visitor)).status_code == 404
        assert (await client.delete(f"/api/messages/{message_id}/feedback", headers=visitor)).status_code == 404
        _, body, _ = await chat_as(client, first, "still there?", visitor)
        assert "I can see 0 earlier messages" in body, "a new conversation of its own, not alice's"

        # Another account cannot take it; a forged token, or no sign-in, claims nothing.
        taken = await client.post("/api/account/claim", json={"anonymousToken": token}, headers=bob)
        assert taken.status_code == 403 and taken.json()["error"]["code"] == "FORBIDDEN"
        forged = await client.post("/api/account/claim", json={"anonymousToken": f"{token[:-2]}xx"}, headers=bob)
        assert forged.status_code == 403
        anonymous = await client.post("/api/account/claim", json={"anonymousToken": token}, headers=visitor)
        assert anonymous.status_code == 401
        assert (await client.get("/api/conversations", headers=bob)).json() == []
        again = await client.post("/api/account/claim", json={}, headers=alice | visitor)  # the header proves it
        assert again.json() == {"conversations": [], "skipped": [second, first]}, "nothing new, nothing lost"


async def chat_as(client, conversation_id: str, text: str, headers: dict):
    response = await client.post("/api/chat", json=chat_body(conversation_id, text), headers=headers)
    assert response.status_code == 200, response.text
    return response, text_of(parse_sse(response.content)), parse_sse(response.content)


async def test_what_agents_remember_of_the_visitor_moves_with_the_claim(auth_settings, provider, database_url):
    """The store's namespaces that name the visitor (`("memories", user_id)`, as the agents guide recommends) become
    the user's; an item the user already has under that name stays theirs."""
    alice = signed_in(provider, "alice")
    async with running(auth_settings()) as client:
        client.cookies.clear()
        first, token = await anonymous_conversation(client, "remember me")
        async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
            row = await (await conn.execute("SELECT client_id FROM conversations WHERE id = %s", (first,))).fetchone()
            anonymous = row[0]
            keys = [f"likes-{first}", f"name-{first}"]
            for key in keys:
                await conn.execute(
                    "INSERT INTO store (prefix, key, value) VALUES (%s, %s, %s)",
                    (f"memories.{anonymous}", key, '{"said": "tea"}'),
                )
            claimed = await client.post("/api/account/claim", json={"anonymousToken": token}, headers=alice)
            assert claimed.status_code == 200, claimed.text
            moved = await (
                await conn.execute("SELECT prefix, key FROM store WHERE key = ANY(%s) ORDER BY key", (keys,))
            ).fetchall()
    assert [key for _, key in moved] == keys
    assert all(prefix.startswith("memories.") and anonymous not in prefix for prefix, _ in moved), moved


async def test_a_claim_waits_for_the_visitors_running_answer(auth_settings, provider):
    """An answer still streaming for the anonymous identity would write to a thread that moved: refused."""
    alice = signed_in(provider, "alice")
    with serving(auth_settings(demo_token_delay_ms=20.0)) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as visitor:
            conversation_id = new_conversation_id()
            response, _chunks, _ = await stream_some(visitor, conversation_id, deltas=1)
            token = response.headers[HEADER]
            busy = await visitor.post("/api/account/claim", json={"anonymousToken": token}, headers=alice)
            await visitor.post("/api/cancel_stream", json={"conversationId": conversation_id})
            await response.aclose()
            claimed = await visitor.post("/api/account/claim", json={"anonymousToken": token}, headers=alice)
    assert busy.status_code == 409 and busy.json()["error"]["code"] == "CONFLICT"
    assert claimed.status_code == 200 and claimed.json()["conversations"] == [conversation_id]
    fresh = claimed.headers[HEADER]  # nothing was skipped: a fresh identity for after signing out
    assert fresh != token and claimed.headers["set-cookie"].startswith(f"{COOKIE}={fresh};")


async def test_a_claim_racing_the_start_of_an_answer_never_splits_the_conversation(auth_settings, provider):
    """The probe's race: a message sent 0-45 ms after the claim. Whoever wins, the conversation and its answer
    end up whole with one identity: the user's (the claim came first), or the visitor's (the claim was refused
    or ended before the conversation was written)."""
    alice = signed_in(provider, someone("racer"))
    with serving(auth_settings(rate_limit="1000/minute")) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            for trial in range(40):
                token = (await client.get("/health", headers={HEADER: ""})).headers[HEADER]
                visitor, conversation_id = {HEADER: token}, new_conversation_id()
                claim = asyncio.create_task(
                    client.post("/api/account/claim", json={"anonymousToken": token}, headers=alice)
                )
                await asyncio.sleep(trial % 20 * 0.0005)
                sent = await client.post("/api/chat", json=chat_body(conversation_id, "hello"), headers=visitor)
                claimed = await claim
                assert claimed.status_code in (200, 409) and sent.status_code in (200, 409), (trial, claimed.text)
                holders = []
                for who in (alice, visitor):
                    found = await client.get(f"/api/conversations/{conversation_id}", headers=who)
                    if found.status_code == 200:
                        holders.append([message["role"] for message in found.json()["messages"]])
                expected = [["user", "assistant"]] if sent.status_code == 200 else []
                assert holders == expected, (trial, claimed.json(), holders)


async def test_a_role_has_a_chat_limit_of_its_own(auth_settings, provider):
    settings = auth_settings(rate_limit="1/minute", role_rate_limits=(("pro", "3/minute"), ("trial", "2/minute")))
    pro = bearer(provider.token(someone("pat"), roles=["trial", "pro"]))  # the first listed role wins
    plain = signed_in(provider, "alice")
    async with running(settings) as client:

        async def statuses(headers: dict, times: int) -> list[int]:
            sent = [await client.post("/api/chat", json=chat_body(None, "hi"), headers=headers) for _ in range(times)]
            return [response.status_code for response in sent]

        assert await statuses(pro, 4) == [200, 200, 200, 429]
        assert await statuses(plain, 2) == [200, 429], "a user without a listed role has CHAT_RATE_LIMIT"


def test_role_limits_are_read_and_checked():
    demo = {"CHAT_MODEL_PROVIDER": "demo"}
    assert load_settings(demo | {"AUTH_ROLE_RATE_LIMITS": "pro=100/minute, trial=5/hour"}).limits.role_rate_limits == (
        ("pro", "100/minute"),
        ("trial", "5/hour"),
    )
    for wrong in ("pro", "pro=lots", "=5/hour"):
        with pytest.raises(SettingsError, match="AUTH_ROLE_RATE_LIMITS"):
            load_settings(demo | {"AUTH_ROLE_RATE_LIMITS": wrong})


async def test_the_page_learns_how_to_sign_in_even_when_anonymous_visitors_are_turned_away(auth_settings, provider):
    async with running(auth_settings(auth_client_id="page", auth_anonymous="deny")) as client:
        config = await client.get("/api/auth/config")
        assert config.status_code == 200
        assert config.json() == {
            "anonymous": False,
            "issuer": provider.issuer,
            "clientId": "page",
            "scopes": "openid profile email offline_access",
            "audience": oidc.AUDIENCE,
        }
        page = await client.get("/api/conversations")
        assert page.status_code == 401
        assert f"connect-src 'self' {provider.issuer};" in config.headers["content-security-policy"]
    async with running(auth_settings()) as client:  # no client id: the page stays anonymous
        assert (await client.get("/api/auth/config")).json() == {"anonymous": True}


def stream_request(client: httpx.AsyncClient, text: str, headers: dict) -> httpx.Request:
    return client.build_request(
        "POST", "/api/chat/stream", json={"message": text}, headers={"accept": "text/event-stream"} | headers
    )


async def test_seed_004s_limits_hold_per_user_across_two_processes_sharing_redis(database_url, tmp_path, provider):
    """20 requests a minute and one stream at a time, per signed-in user, whichever process each request reaches."""
    redis.Redis(host="127.0.0.1", port=6379, socket_connect_timeout=1).ping()  # .ci/run starts it; tasks.py too
    env = {
        "AUTH_ISSUER": provider.issuer,
        "AUTH_AUDIENCE": oidc.AUDIENCE,
        "RATE_LIMIT_STORAGE": "redis://127.0.0.1:6379/0",
        "CHAT_RATE_LIMIT": "1000/minute",
        "CHAT_DEMO_TOKEN_DELAY_MS": "5",
    }
    alice, bob = signed_in(provider, "alice"), signed_in(provider, "bob")
    with ExitStack() as servers:
        bases = [servers.enter_context(threadline_server(database_url, tmp_path, **env)) for _ in range(2)]
        async with httpx.AsyncClient(base_url=bases[0]) as one, httpx.AsyncClient(base_url=bases[1]) as two:
            streaming = await one.send(stream_request(one, "count to 300", alice), stream=True)
            assert streaming.status_code == 200
            events = aevents_of(streaming)  # kept: a dropped iterator would close the stream
            conversation_id = (await anext(events))["conversationId"]  # alice's answer runs in the first process
            elsewhere = await two.send(stream_request(two, "hello", alice))
            assert elsewhere.status_code == 429 and "one at a time" in elsewhere.json()["error"]["message"]
            assert (await two.send(stream_request(two, "hello", bob))).status_code == 200, "bob is not alice"
            await streaming.aclose()
            for _ in range(100):  # the closed stream stops alice's answer, which lets go of her one stream
                if (await two.get(f"/api/chat/{conversation_id}/stream", headers=alice)).status_code == 204:
                    break
                await asyncio.sleep(0.1)
            statuses = [  # one-token answers: what is counted is the requests
                (await (one, two)[n % 2].send(stream_request((one, two)[n % 2], "count to 1", alice))).status_code
                for n in range(19)
            ]
    assert statuses == [200] * 18 + [429], "20 a minute for alice, the two rejected or running ones included"


async def test_another_user_reaches_none_of_a_users_conversation_on_any_route(auth_settings, provider):
    """Bob holds a valid token and all of alice's ids: every route answers him as if they did not exist, and
    alice's conversation is as she left it."""
    two_demos = load_settings({"CHAT_PROFILES": json.dumps(TWO_DEMOS)}).models.profiles
    alice, bob = signed_in(provider, "alice"), signed_in(provider, "bob")
    async with running(auth_settings(profiles=two_demos)) as client:
        conversation_id = new_conversation_id()
        await chat_as(client, conversation_id, "hello", alice)
        answer = (await client.get(f"/api/conversations/{conversation_id}", headers=alice)).json()["messages"][-1]
        body = chat_body(conversation_id, "compare", compareProfiles=["demo", "demo2"])
        compared = parse_sse((await client.post("/api/chat", json=body, headers=alice)).content)
        comparison_id = compared[0]["messageMetadata"]["comparisonId"]
        trace_id = answer["metadata"]["traceId"]
        started = await client.post("/api/chat/stream", json={"message": "hi"}, headers=alice)
        seed_004_id = next(events_of(started))["conversationId"]
        attempts = {
            "read": client.get(f"/api/conversations/{conversation_id}", headers=bob),
            "resume": client.get(f"/api/chat/{conversation_id}/stream", headers=bob),
            "stop": client.post("/api/cancel_stream", json={"conversationId": conversation_id}, headers=bob),
            "stop by path": client.delete(f"/api/chat/{conversation_id}/stream", headers=bob),
            "rate": client.put(f"/api/messages/{answer['id']}/feedback", json={"rating": "down"}, headers=bob),
            "trace": client.get(f"/api/trace/{trace_id}", headers=bob),
            "comparison": client.get(f"/api/comparisons/{comparison_id}", headers=bob),
            "vote": client.post(f"/api/comparisons/{comparison_id}/vote", json={"preference": "B"}, headers=bob),
            "action": client.post(
                "/api/actions",
                json={"conversationId": conversation_id, "messageId": answer["id"], "action": "summarize_conversation"},
                headers=bob,
            ),
            "seed 002": client.post("/api/load_conversation", json={"conversation_id": conversation_id}, headers=bob),
            "seed 004 continue": client.post(
                "/api/chat/stream", json={"message": "hi", "conversationId": seed_004_id}, headers=bob
            ),
            "delete": client.delete(f"/api/conversations/{conversation_id}", headers=bob),
        }
        for what, attempt in attempts.items():
            response = await attempt
            assert response.status_code == 404, (what, response.status_code, response.text)
        kept = (await client.get(f"/api/conversations/{conversation_id}", headers=alice)).json()["messages"]
        assert [message["role"] for message in kept] == ["user", "assistant", "user", "assistant"]
        assert "feedback" not in kept[1]["metadata"], "bob's rating did not land"
        assert (await client.get(f"/api/comparisons/{comparison_id}", headers=alice)).json()["preference"] is None


async def test_the_builtin_tools_act_as_the_signed_in_user(auth_settings, provider):
    """The built-in MCP server's token for an answer names its principal: a tool lists the user's own."""
    alice, bob = signed_in(provider, "alice"), signed_in(provider, "bob")
    async with running(auth_settings()) as client:
        await chat_as(client, new_conversation_id(), "alice's secret plan", alice)
        await chat_as(client, new_conversation_id(), "bob's holiday", bob)
        _, _, chunks = await chat_as(client, new_conversation_id(), "list my conversations", alice)
        listed = json.dumps([chunk for chunk in chunks if chunk["type"] == "tool-output-available"])
        assert "alice's secret plan" in listed and "bob's holiday" not in listed, listed


@pytest.mark.parametrize("backend", ["postgres", "memory"])
async def test_claimed_conversations_bring_their_files(auth_settings, provider, backend):
    settings = on_backend(auth_settings, backend)
    alice = signed_in(provider, "alice")
    async with running(settings) as client:
        token = (await client.get("/health", headers={HEADER: ""})).headers[HEADER]
        conversation_id = new_conversation_id()
        body = chat_body(conversation_id, "see")
        body["messages"][0]["parts"].append({"type": "file", "mediaType": "text/plain", "url": "data:,hello%20there"})
        assert (await client.post("/api/chat", json=body, headers={HEADER: token})).status_code == 200
        history = (await client.get(f"/api/conversations/{conversation_id}", headers={HEADER: token})).json()
        url = history["messages"][0]["parts"][0]["url"]
        assert (
            await client.post("/api/account/claim", json={"anonymousToken": token}, headers=alice)
        ).status_code == 200
        assert (await client.get(url, headers=alice)).content == b"hello there"
        assert (await client.get(url, headers={HEADER: token})).status_code == 404
        await client.delete(f"/api/conversations/{conversation_id}", headers=alice)
        assert (await client.get(url, headers=alice)).status_code == 404


@pytest.mark.parametrize("backend", ["postgres", "memory"])
async def test_a_claim_keeps_to_the_file_quota(auth_settings, provider, backend):
    settings = on_backend(auth_settings, backend, file_quota_bytes=3_000)
    alice = signed_in(provider, someone("quota"))
    async with running(settings) as client:
        own = await client.post("/api/files", content=b"a" * 2_000, headers=alice | {"content-type": "text/plain"})
        assert own.status_code == 201
        token = (await client.get("/health", headers={HEADER: ""})).headers[HEADER]
        conversation_id = new_conversation_id()
        body = chat_body(conversation_id, "see")
        body["messages"][0]["parts"].append({"type": "file", "mediaType": "text/plain", "url": "data:," + "b" * 2_000})
        assert (await client.post("/api/chat", json=body, headers={HEADER: token})).status_code == 200
        refused = await client.post("/api/account/claim", json={"anonymousToken": token}, headers=alice)
        assert refused.status_code == 413 and refused.json()["error"]["code"] == "STORAGE_FULL", refused.text
        still = await client.get(f"/api/conversations/{conversation_id}", headers={HEADER: token})
        assert still.status_code == 200, "a refused claim moves nothing"
        assert (await client.get(f"/api/conversations/{conversation_id}", headers=alice)).status_code == 404
