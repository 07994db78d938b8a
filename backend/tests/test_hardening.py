"""What a hostile probe found: input PostgreSQL cannot store, ids with a trailing newline, storage that grew with
the square of a conversation, limits per visitor, and requests refused without leaving anything behind."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import time

import httpx
import psycopg
import pytest
from helpers import chat, chat_body, new_conversation_id, running, serving, stream_some
from threadline.http.client_address import ClientAddress
from threadline.settings.mcp_servers import McpServerConfig
from threadline.storage.fallback import SaveRetries
from threadline.storage.threads import thread_of
from threadline_testing.database import thread_footprint
from threadline_testing.ports import free_port

POISON = {"messages": [{"role": "user", "parts": [{"type": "text", "text": "x\u0000"}]}]}


async def test_a_nul_character_is_refused_and_persistence_stays_healthy_across_a_restart(make_settings):
    settings = make_settings()
    kept = new_conversation_id()
    async with running(settings) as client:
        poisoned = await client.post("/api/chat", json={**POISON, "id": new_conversation_id()})
        surrogate = await client.post(
            "/api/chat",
            content=b'{"messages":[{"role":"user","parts":[{"type":"text","text":"x\\ud800"}]}]}',
            headers={"content-type": "application/json"},
        )
        await chat(client, kept, "an ordinary message")
        health = (await client.get("/health")).json()
        identity = client.cookies["threadline_client"]
    async with running(settings) as client:  # a new process: only the database remembers
        client.headers["x-threadline-client"] = identity
        after_restart = await client.get(f"/api/conversations/{kept}")
    assert poisoned.status_code == 400 and "NUL" in poisoned.json()["error"]["message"]
    assert surrogate.status_code == 400 and "surrogate" in surrogate.json()["error"]["message"]
    assert health["status"] == "ok" and health["unsavedConversations"] == 0
    assert after_restart.status_code == 200 and len(after_restart.json()["messages"]) == 2


@pytest.fixture
async def refusing_database(database_url):
    """PostgreSQL itself refusing some values, through CHECK constraints: a data error, not an outage."""
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        yield conn
        await conn.execute("ALTER TABLE conversations DROP CONSTRAINT IF EXISTS no_forbidden_titles")
        await conn.execute("ALTER TABLE checkpoints DROP CONSTRAINT IF EXISTS no_poisoned_threads")


async def test_a_value_postgres_refuses_affects_one_conversation_and_never_pauses_the_database(
    make_settings, refusing_database
):
    poisoned, clean = f"poison-{new_conversation_id()}", new_conversation_id()
    async with running(make_settings()) as client:
        await chat(client, "warm-up", "hello")  # creates the tables' rows before the constraints apply
        await refusing_database.execute(
            "ALTER TABLE conversations ADD CONSTRAINT no_forbidden_titles "
            "CHECK (title NOT LIKE '%forbidden-title%') NOT VALID"
        )
        await refusing_database.execute(
            "ALTER TABLE checkpoints ADD CONSTRAINT no_poisoned_threads "
            "CHECK (thread_id NOT LIKE '%:poison-%') NOT VALID"
        )
        refused = await client.post("/api/chat", json=chat_body(new_conversation_id(), "forbidden-title here"))
        _, _, answered = await chat(client, poisoned, "my checkpoints cannot be stored")
        _, _, continued = await chat(client, poisoned, "and again")
        _, _, other = await chat(client, clean, "mine can")
        health = (await client.get("/health")).json()
        client_id = client.cookies["threadline_client"].split(".")[0]
    rows = await (
        await refusing_database.execute(
            "SELECT thread_id FROM checkpoints WHERE thread_id IN (%s, %s)",
            (thread_of(client_id, poisoned), thread_of(client_id, clean)),
        )
    ).fetchall()
    assert refused.status_code == 400 and refused.json()["error"]["message"] == (
        "Invalid request: this message cannot be stored."
    )
    assert answered[-1]["type"] == "finish" and "seen" not in json.dumps(answered)
    assert "2 earlier messages" not in json.dumps(continued) and continued[-1]["type"] == "finish"
    assert not [chunk for chunk in other if chunk["type"] == "data-warning"], "the database was never paused"
    assert health["status"] == "ok" and health["unsavedConversations"] == 0, health
    assert {row[0] for row in rows} == {thread_of(client_id, clean)}


def test_a_conversation_postgres_keeps_refusing_is_retried_with_back_off_then_quarantined():
    retries = SaveRetries(first_delay=0.0, attempts=3)
    error = psycopg.errors.CheckViolation("refused")
    assert retries.due("a")
    retries.failed("a", "a write", error)
    retries.failed("a", "a write", error)
    assert retries.refused("a") and retries.due("a") and not retries.quarantined
    retries.failed("a", "a write", error)
    assert retries.quarantined == {"a"} and not retries.due("a"), "given up on: never retried again"
    slow = SaveRetries(first_delay=60.0)
    slow.failed("b", "a write", error)
    assert not slow.due("b") and slow.due("c"), "one conversation's back-off holds up no other"


async def test_ids_with_a_trailing_newline_are_refused_everywhere(make_settings):
    async with running(make_settings()) as client:
        body = await client.post("/api/chat", json=chat_body("x\n", "hello"))
        message_id = await client.post(
            "/api/chat",
            json={
                "id": new_conversation_id(),
                "messages": [{"id": "m1\n", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
            },
        )
        path = await client.get("/api/conversations/x%0A")
        stop = await client.post("/api/cancel_stream", json={"conversationId": "x\n"})
        listed = (await client.get("/api/conversations")).json()
    for response in (body, message_id, path, stop):
        assert response.status_code == 400, response.text
        assert response.json()["error"]["code"] == "VALIDATION_ERROR"
    assert listed == []


async def test_stored_bytes_per_turn_stay_flat_as_a_conversation_grows(make_settings, database_url):
    conversation_id = new_conversation_id()
    sizes = []
    async with running(make_settings(rate_limit="1000/minute")) as client:
        client_id = (await client.get("/health")).headers["x-threadline-client"].split(".")[0]
        for turn in range(1, 31):
            await chat(client, conversation_id, f"turn {turn} " + "x" * 2000)
            if turn % 10 == 0:
                await asyncio.sleep(0.2)  # the answer prunes its old checkpoints once it has ended
                sizes.append((await thread_footprint(database_url, thread_of(client_id, conversation_id)))[1])
    growth = [later - earlier for earlier, later in itertools.pairwise(sizes)]
    assert growth[1] < growth[0] * 1.3, f"bytes stored after 10, 20, 30 turns: {sizes}"
    assert sizes[0] < 10 * 4000, "about one copy of each message, not one per checkpoint"


async def test_an_answer_leaves_only_its_latest_checkpoint_and_the_blobs_that_one_reads(make_settings, database_url):
    conversation_id = new_conversation_id()
    async with running(make_settings()) as client:
        client_id = (await client.get("/health")).headers["x-threadline-client"].split(".")[0]
        for turn in ("one", "two", "what is 2+3?"):
            await chat(client, conversation_id, turn)
        await asyncio.sleep(0.2)  # the answer prunes its old checkpoints once it has ended
        history = (await client.get(f"/api/conversations/{conversation_id}")).json()
    async with await psycopg.AsyncConnection.connect(database_url) as conn:
        checkpoints = await (
            await conn.execute(
                "SELECT checkpoint_id, checkpoint -> 'channel_versions' FROM checkpoints WHERE thread_id = %s",
                (thread_of(client_id, conversation_id),),
            )
        ).fetchall()
        blobs = await (
            await conn.execute(
                "SELECT channel, version FROM checkpoint_blobs WHERE thread_id = %s",
                (thread_of(client_id, conversation_id),),
            )
        ).fetchall()
        writes = await (
            await conn.execute(
                "SELECT DISTINCT checkpoint_id FROM checkpoint_writes WHERE thread_id = %s",
                (thread_of(client_id, conversation_id),),
            )
        ).fetchall()
    assert len(checkpoints) == 1, checkpoints
    latest_id, versions = checkpoints[0]
    assert blobs and all(versions[channel] == version for channel, version in blobs), (versions, blobs)
    assert {row[0] for row in writes} <= {latest_id}
    assert [message["role"] for message in history["messages"]] == ["user", "assistant"] * 3


async def test_storage_limits_per_conversation_and_per_visitor(make_settings):
    first, second = new_conversation_id(), new_conversation_id()
    async with running(make_settings(max_turns_per_conversation=3, max_conversations_per_visitor=2)) as client:
        await chat(client, first, "one")
        await chat(client, first, "two")
        regenerated = await client.post("/api/chat", json=chat_body(first, "two", trigger="regenerate-message"))
        question_id = (await client.get(f"/api/conversations/{first}")).json()["messages"][0]["id"]
        edited = await client.post("/api/chat", json=chat_body(first, "one, edited", messageId=question_id))
        full = await client.post("/api/chat", json=chat_body(first, "three"))
        await chat(client, second, "another")
        too_many = await client.post("/api/chat", json=chat_body(new_conversation_id(), "and another"))
        await client.delete(f"/api/conversations/{second}")
        room_again = await client.post("/api/chat", json=chat_body(new_conversation_id(), "after a delete"))
    assert regenerated.status_code == 200, "the third turn: a regeneration counts as one"
    assert edited.status_code == 413 and edited.json()["error"]["code"] == "CONVERSATION_FULL", "edits count too"
    assert full.status_code == 413 and full.json()["error"]["code"] == "CONVERSATION_FULL"
    assert "limit of 3 messages" in full.json()["error"]["message"]
    assert too_many.status_code == 413 and too_many.json()["error"]["code"] == "TOO_MANY_CONVERSATIONS"
    assert room_again.status_code == 200


async def test_a_request_refused_as_busy_leaves_no_conversation_behind(make_settings):
    with serving(make_settings(demo_token_delay_ms=20.0, answers_per_visitor=1)) as base_url:
        client = httpx.AsyncClient(base_url=base_url, timeout=30)
        streaming, refused_id = new_conversation_id(), new_conversation_id()
        response, _chunks, _ = await stream_some(client, streaming, deltas=1)
        busy = await client.post("/api/chat", json=chat_body(refused_id, "hello"))
        listed = [row["id"] for row in (await client.get("/api/conversations")).json()]
        await client.post("/api/cancel_stream", json={"conversationId": streaming})
        await response.aclose()
    assert busy.status_code == 409
    assert listed == [streaming], "the refused request created no conversation"


async def test_a_stop_sent_right_after_a_submit_stops_the_answer(make_settings):
    with serving(make_settings(demo_token_delay_ms=20.0)) as base_url:
        client = httpx.AsyncClient(base_url=base_url, timeout=30)
        await client.get("/health")
        conversation_id = new_conversation_id()
        started = asyncio.create_task(client.post("/api/chat", json=chat_body(conversation_id, "count to 300")))
        for _ in range(200):  # as soon as the server knows of the answer, even before its conversation is recorded
            stop = await client.post("/api/cancel_stream", json={"conversationId": conversation_id})
            if stop.status_code != 404:
                break
        answer = await started
    assert stop.status_code == 200, stop.text
    assert '"interrupted":"cancelled"' in answer.text, "the stop reached the answer instead of it running to the end"


async def test_health_names_tool_servers_without_their_credentials(make_settings, caplog):
    url = f"http://user:hunter2@127.0.0.1:{free_port()}/mcp?key=s3cret"
    settings = make_settings(mcp_servers=(McpServerConfig(name="private", transport="streamable-http", url=url),))
    async with running(settings) as client:
        health = await client.get("/health")
    logged = "\n".join(record.getMessage() for record in caplog.records if "private" in record.getMessage())
    assert health.json()["toolServers"]["private"] == {"status": "down", "tools": []}
    assert "hunter2" not in health.text and "s3cret" not in health.text
    assert "MCP server private is down" in logged and "hunter2" not in logged and "s3cret" not in logged


@pytest.mark.parametrize(
    "forwarded, key",
    [
        ("::ffff:198.51.100.7", "198.51.100.7"),
        ("198.51.100.7%1", "198.51.100.7"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"),
        ("203.0.113.50:1234", "203.0.113.50"),  # with a port, as some load balancers send it
        ("[2001:db8:1:2::1]:1234", "2001:db8:1:2::/64"),
        ("[2001:db8:1:2::1]", "2001:db8:1:2::/64"),
        ("198.051.100.007", "127.0.0.1"),  # not an address (leading zeros): the peer's key
        ("not-an-address", "127.0.0.1"),
    ],
)
def test_one_rate_limit_key_per_client_however_its_address_is_written(forwarded, key):
    scope = {"type": "http", "client": ("127.0.0.1", 40000), "headers": [(b"x-forwarded-for", forwarded.encode())]}
    assert ClientAddress(["127.0.0.1/32"]).of(scope) == key
    assert ClientAddress([]).of({**scope, "client": ("::ffff:127.0.0.1", 1)}) == "127.0.0.1"


async def test_every_endpoint_has_a_generous_rate_limit(make_settings):
    async with running(make_settings(api_rate_limit="5/minute")) as client:
        statuses = [(await client.get("/api/conversations")).status_code for _ in range(6)]
        limited = await client.get("/health")
    assert statuses == [200] * 5 + [429]
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
    assert limited.json()["error"]["code"] == "RATE_LIMITED"


async def test_malformed_requests_are_400_not_500(make_settings):
    deep = b"[" * 5000 + b"]" * 5000
    json_headers = {"content-type": "application/json"}
    async with running(make_settings()) as client:
        answers = {
            "invalid utf-8": await client.post(
                "/api/chat",
                headers=json_headers,
                content=b'{"messages":[{"role":"user","parts":[{"type":"text","text":"\xff\xfe"}]}]}',
            ),
            "deep json": await client.post("/api/chat", headers=json_headers, content=deep),
            "nul path": await client.get("/%00"),
        }
        rpc = await client.post("/mcp/rpc", headers=json_headers, content=deep)
        token = await client.get("/health", headers={"x-threadline-client": b"ab\xe9.c\xffd"})
    for what, response in answers.items():
        assert response.status_code == 400, (what, response.text)
        assert response.json()["error"]["code"] == "VALIDATION_ERROR"
    assert rpc.status_code == 401, "the token is checked before anything is said about the body"
    assert token.status_code == 200 and token.headers["x-threadline-client"].isascii(), "a new identity"


def _raw_exchange(base_url: str, payload: bytes, wait: float) -> tuple[bytes, float]:
    """Send `payload` on a raw connection, then read until the server answers or closes; (reply, seconds)."""
    host, port = base_url.removeprefix("http://").split(":")
    started = time.monotonic()
    with socket.create_connection((host, int(port)), timeout=wait) as connection:
        connection.sendall(payload)
        reply = b""
        try:
            while chunk := connection.recv(4096):
                reply += chunk
        except (TimeoutError, ConnectionResetError):
            pass
    return reply, time.monotonic() - started


async def test_slow_or_silent_clients_are_cut_off(make_settings):
    with serving(make_settings(header_timeout=0.5, body_timeout=0.5)) as base_url:
        silent = await asyncio.to_thread(_raw_exchange, base_url, b"", 10)
        partial_headers = await asyncio.to_thread(_raw_exchange, base_url, b"GET /health HTTP/1.1\r\nHost: x\r\n", 10)
        partial_body = await asyncio.to_thread(
            _raw_exchange,
            base_url,
            (
                b"POST /api/chat HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
                b'{"messages":'
            ),
            10,
        )
    assert silent == (b"", pytest.approx(0.5, abs=1.5))
    assert partial_headers[0] == b"" and partial_headers[1] < 2
    assert partial_body[0].startswith(b"HTTP/1.1 408") and b"REQUEST_TIMEOUT" in partial_body[0]
    assert partial_body[1] < 2


async def test_every_response_carries_the_security_headers(make_settings, tmp_path):
    (tmp_path / "page").mkdir()
    (tmp_path / "page" / "index.html").write_text("<!doctype html><title>page</title>")
    settings = make_settings(frontend_dir=tmp_path / "page", cors_origins=("http://localhost:3000",))
    async with running(settings) as client:
        responses = [
            await client.get("/"),
            await client.get("/api/conversations"),
            await client.get("/api/conversations/missing"),
        ]
    for response in responses:
        policy = response.headers["content-security-policy"]
        assert "default-src 'self'" in policy and "img-src 'self' data:" in policy
        assert "frame-ancestors 'none'" in policy and "connect-src 'self' http://localhost:3000" in policy
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "strict-origin-when-cross-origin"


async def test_the_pages_assets_are_compressed_cached_for_good_and_set_no_cookie(make_settings, tmp_path):
    script = "export const words = '" + "threadline " * 5_000 + "';\n"
    (tmp_path / "page" / "assets").mkdir(parents=True)
    (tmp_path / "page" / "index.html").write_text("<!doctype html><title>page</title>")
    (tmp_path / "page" / "assets" / "index-Ab12Cd.js").write_text(script)
    async with running(make_settings(frontend_dir=tmp_path / "page")) as client:
        client.cookies.clear()
        gzipped = await client.get("/assets/index-Ab12Cd.js", headers={"accept-encoding": "gzip, br"})
        plain = await client.get("/assets/index-Ab12Cd.js", headers={"accept-encoding": "identity"})
        missing = await client.get("/assets/nothing.js")
        escape = await client.get("/assets/..%2Findex.html")
    assert gzipped.status_code == 200 and gzipped.headers["content-encoding"] == "gzip"
    assert int(gzipped.headers["content-length"]) < len(script) / 20 and gzipped.text == script
    assert gzipped.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert gzipped.headers["content-type"].startswith("text/javascript")
    assert "content-encoding" not in plain.headers and plain.text == script
    for response in (gzipped, plain):
        assert "set-cookie" not in response.headers and "x-threadline-client" not in response.headers
    assert missing.status_code == 404 and escape.status_code in (400, 404)


async def test_a_request_over_the_connection_limit_is_a_json_503_with_the_usual_headers(make_settings):
    """The limit counts requests at work: two answers streaming fill a limit of two, and a third request is refused."""
    with serving(make_settings(max_connections=2, demo_token_delay_ms=20.0)) as base_url:
        async with (
            httpx.AsyncClient(base_url=base_url, timeout=30) as one,
            httpx.AsyncClient(base_url=base_url, timeout=30) as two,
        ):
            first, _chunks, _ = await stream_some(one, new_conversation_id(), deltas=2)
            second, _more, _ = await stream_some(two, new_conversation_id(), deltas=2)
            async with httpx.AsyncClient(base_url=base_url, timeout=30) as other:
                refused = await other.get("/api/conversations")
            await first.aclose()
            await second.aclose()
    assert refused.status_code == 503 and refused.headers["content-type"].startswith("application/json")
    assert refused.json()["error"]["code"] == "OVER_CAPACITY" and refused.headers["retry-after"] == "1"
    assert refused.headers["x-content-type-options"] == "nosniff" and "content-security-policy" in refused.headers


async def test_idle_kept_alive_connections_make_room_instead_of_refusing_new_requests(make_settings):
    """uvicorn counts idle kept-alive connections against the limit and refused every new request while they were
    open; here the idle ones are closed to make room, and only requests beyond the limit at work are refused."""
    with serving(make_settings(max_connections=3)) as base_url:
        idle = [httpx.AsyncClient(base_url=base_url, timeout=30) for _ in range(3)]
        for client in idle:
            assert (await client.get("/health/live")).status_code == 200  # its connection kept alive, idle
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as newcomer:
            answered = [(await newcomer.get("/health/live")).status_code for _ in range(3)]
        again = [(await client.get("/health/live")).status_code for client in idle]  # a closed one reconnects
        for client in idle:
            await client.aclose()
    assert answered == [200, 200, 200] and again == [200, 200, 200]
