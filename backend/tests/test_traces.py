"""Every answer's trace: stored and read back by id and by message, counted in /metrics, and sent to an
OpenTelemetry collector and a Langfuse host (local stand-ins receiving what the official SDKs send)."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import re

import httpx
import psycopg
from helpers import chat, chat_body, new_conversation_id, running, saved_answer, serving, sse_chunks
from prometheus_client.parser import text_string_to_metric_families
from threadline.http.identity import COOKIE
from threadline.observability.logs import ExporterThrottle
from threadline_testing import standins
from threadline_testing.collectors import start_collector
from threadline_testing.sse import events_of


def trace_id_of(chunks: list[dict]) -> str:
    start = chunks[0]
    assert start["type"] == "start"
    return start["messageMetadata"]["traceId"]


async def trace(client, trace_id: str) -> dict:
    response = await client.get(f"/api/trace/{trace_id}")
    assert response.status_code == 200, response.text
    return response.json()


async def test_a_text_answer_has_a_trace_found_by_id_and_by_message_and_only_by_its_owner(make_settings):
    conversation_id = new_conversation_id()
    async with running(make_settings()) as client:
        _, _, chunks = await chat(client, conversation_id, "count to 5")
        trace_id = trace_id_of(chunks)
        by_id = await trace(client, trace_id)
        answer = await saved_answer(client, conversation_id)
        by_message = (await client.get(f"/api/trace/by_message/{answer['id']}")).json()
        owner = client.cookies[COOKIE]
        client.cookies.clear()  # a visitor of their own
        other = await client.get(f"/api/trace/{trace_id}")
        other_by_message = await client.get(f"/api/trace/by_message/{answer['id']}")
        client.cookies.set(COOKIE, owner, domain=client.base_url.host)
        missing = await client.get(f"/api/trace/{'0' * 32}")
        bad = await client.get("/api/trace/not%20an%20id")
    finish = chunks[-1]
    assert re.fullmatch(r"[0-9a-f]{32}", trace_id)
    assert finish["messageMetadata"]["traceId"] == trace_id, "the finish metadata names the trace too"
    assert answer["metadata"]["traceId"] == trace_id, "and so does the stored answer"
    assert by_message == by_id
    assert by_id["status"] == "completed" and by_id["conversationId"] == conversation_id
    assert by_id["messageId"] == answer["id"] and by_id["model"] == "demo:demo"
    assert 0 < by_id["firstTokenMs"] <= by_id["totalMs"]
    assert by_id["usage"] == {key: value for key, value in finish["messageMetadata"]["usage"].items()}
    [model_call] = by_id["events"]
    assert model_call["type"] == "model_call" and model_call["inputMessages"] == 2
    assert model_call["output"] == "1 2 3 4 5" and model_call["usage"]["outputTokens"] > 0
    assert model_call["durationMs"] > 0 and model_call["at"] >= by_id["startedAt"]
    assert other.status_code == other_by_message.status_code == missing.status_code == 404
    assert other.json() == missing.json() == {"error": {"code": "NOT_FOUND", "message": "Trace not found"}}
    assert bad.status_code == 400


async def test_a_tool_answer_and_a_failed_tool_are_traced_with_server_arguments_result_and_duration(make_settings):
    async with running(make_settings()) as client:
        _, _, ok = await chat(client, new_conversation_id(), "calculate 12*7")
        _, _, failed = await chat(client, new_conversation_id(), "calculate 1/0")
        good, bad = await trace(client, trace_id_of(ok)), await trace(client, trace_id_of(failed))
    assert [event["type"] for event in good["events"]] == ["model_call", "tool_call", "model_call"]
    first_call, tool_call, second_call = good["events"]
    assert first_call["toolCalls"] == ["calculator"] and second_call["inputMessages"] == 4
    assert tool_call["tool"] == "calculator" and tool_call["server"] == "threadline"
    assert tool_call["arguments"] == {"expression": "12*7"} and tool_call["result"] == "84"
    assert tool_call["durationMs"] > 0 and "error" not in tool_call
    assert first_call["offsetMs"] < tool_call["offsetMs"] < second_call["offsetMs"], "events are in order"
    failed_call = next(event for event in bad["events"] if event["type"] == "tool_call")
    assert "division by zero" in failed_call["error"] and "result" not in failed_call
    assert bad["status"] == "completed", "a failed tool is part of an answer, not its failure"


async def test_long_payloads_are_capped_in_the_trace(make_settings):
    async with running(make_settings()) as client:
        _, _, chunks = await chat(client, new_conversation_id(), "calculate " + "+".join(["1"] * 3000))
        found = await trace(client, trace_id_of(chunks))
    tool_call = next(event for event in found["events"] if event["type"] == "tool_call")
    assert len(tool_call["arguments"]) < 4100 and tool_call["arguments"].endswith("characters, cut]")


async def test_a_model_error_and_a_timeout_are_traced_with_their_codes(openai_settings):
    # The broken stream gets the default idle timeout: on a loaded machine, seeing the connection drop can
    # take longer than the half second the stalled one is given.
    async with running(openai_settings()) as client:
        _, _, broken = await chat(client, new_conversation_id(), "break after 3")
        error = await trace(client, trace_id_of(broken))
    async with running(openai_settings(idle_timeout=0.5)) as client:
        _, _, stalled = await chat(client, new_conversation_id(), "stall after 3")
        timeout = await trace(client, trace_id_of(stalled))
    assert broken[-1]["type"] == "error" and stalled[-1]["type"] == "error"
    assert error["status"] == "error" and error["errorCode"] == "NETWORK_ERROR"
    assert error["events"][0]["type"] == "model_call" and error["events"][0]["error"]
    assert error["events"][-1]["type"] == "error" and error["events"][-1]["code"] == "NETWORK_ERROR"
    assert timeout["status"] == "timeout" and timeout["errorCode"] == "TIMEOUT"
    assert timeout["interrupted"] == "timeout" and timeout["model"] == "openai:gpt-standin"


async def test_a_cancelled_answer_is_running_while_it_streams_then_cancelled(make_settings):
    conversation_id = new_conversation_id()
    with serving(make_settings(demo_token_delay_ms=20.0)) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            request = client.build_request("POST", "/api/chat", json=chat_body(conversation_id, "count to 300"))
            response = await client.send(request, stream=True)
            chunks = sse_chunks(response)
            start = await anext(chunks)
            while (await anext(chunks))["type"] != "text-delta":
                pass
            message_id = start["messageId"]
            running_trace = (await client.get(f"/api/trace/by_message/{message_id}")).json()
            stop = await client.delete(f"/api/chat/{conversation_id}/stream")
            rest = [chunk async for chunk in chunks]
            await response.aclose()
            await saved_answer(client, conversation_id)
            ended = (await client.get(f"/api/trace/by_message/{message_id}")).json()
    assert stop.status_code == 200 and rest[-1]["messageMetadata"]["interrupted"] == "cancelled"
    assert running_trace["status"] == "running" and "endedAt" not in running_trace
    assert running_trace["traceId"] == ended["traceId"] == trace_id_of([start])
    assert ended["status"] == "cancelled" and ended["interrupted"] == "cancelled"
    assert ended["events"][0]["type"] == "model_call" and "CancelledError" in ended["events"][0]["error"]


async def test_the_trace_id_travels_on_the_ndjson_and_data_stream_wires(make_settings):
    async with running(make_settings()) as client:
        ndjson = await client.post(
            "/api/chat", json=chat_body(new_conversation_id(), "hi"), headers={"accept": "application/x-ndjson"}
        )
        data_stream = await client.post("/api/chat?protocol=data-stream", json=chat_body(new_conversation_id(), "hi"))
        lines = [json.loads(line) for line in ndjson.text.splitlines()]
        annotation = json.loads(data_stream.text.splitlines()[0].removeprefix("8:"))[0]
        for trace_id in (lines[0]["messageMetadata"]["traceId"], annotation["traceId"]):
            assert (await trace(client, trace_id))["status"] == "completed"
    assert lines[-1]["messageMetadata"]["traceId"] == lines[0]["messageMetadata"]["traceId"]


async def test_deleting_a_conversation_deletes_its_traces(make_settings):
    conversation_id = new_conversation_id()
    async with running(make_settings()) as client:
        _, _, chunks = await chat(client, conversation_id, "hello")
        trace_id = trace_id_of(chunks)
        await trace(client, trace_id)
        assert (await client.delete(f"/api/conversations/{conversation_id}")).status_code == 204
        gone = await client.get(f"/api/trace/{trace_id}")
    assert gone.status_code == 404


async def test_with_no_retention_a_trace_is_seen_live_but_not_kept(make_settings):
    async with running(make_settings(trace_retention_days=0)) as client:
        _, _, chunks = await chat(client, new_conversation_id(), "hello")
        for _ in range(100):  # the live trace is served until the answer's last writes are done
            response = await client.get(f"/api/trace/{trace_id_of(chunks)}")
            if response.status_code == 404:
                break
            assert response.json()["status"] == "completed"
            await asyncio.sleep(0.05)
    assert response.status_code == 404


def metric(text: str, name: str, **labels: str) -> float:
    """A sample's value in a scrape, read with prometheus_client's own parser; 0 when absent."""
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return float(sample.value)
    return 0.0


async def test_metrics_count_answers_tokens_tools_and_latency(make_settings, openai_settings):
    async def scrape(client, answers: float = 0) -> str:
        """A scrape counting at least `answers` answers: each is counted just after its last byte is sent."""
        for _ in range(100):
            response = await client.get("/metrics")
            assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
            if metric(response.text, "threadline_answer_seconds_count") >= answers:
                return response.text
            await asyncio.sleep(0.05)
        raise AssertionError(f"fewer than {answers} answers counted")

    async with running(make_settings()) as client:
        before = await scrape(client)
        _, _, one = await chat(client, new_conversation_id(), "calculate 2+2")
        _, _, two = await chat(client, new_conversation_id(), "calculate 1/0")
        after = await scrape(client, metric(before, "threadline_answer_seconds_count") + 2)
    async with running(openai_settings()) as client:
        before_error = await scrape(client)
        await chat(client, new_conversation_id(), "break after 2")
        after_error = await scrape(client, metric(before_error, "threadline_answer_seconds_count") + 1)

    def grew(name: str, **labels: str) -> float:
        return metric(after, name, **labels) - metric(before, name, **labels)

    assert grew("threadline_answers_total", outcome="completed", error_code="") == 2
    assert grew("threadline_tool_calls_total", tool="calculator", outcome="ok") == 1
    assert grew("threadline_tool_calls_total", tool="calculator", outcome="error") == 1
    tokens = sum(trace["messageMetadata"]["usage"]["outputTokens"] for trace in (one[-1], two[-1]))
    assert grew("threadline_tokens_total", direction="output") == tokens
    assert grew("threadline_first_token_seconds_count") == grew("threadline_answer_seconds_count") == 2
    assert metric(after, "threadline_answers_running") == 0
    errors = metric(after_error, "threadline_answers_total", outcome="error", error_code="NETWORK_ERROR")
    assert errors - metric(before_error, "threadline_answers_total", outcome="error", error_code="NETWORK_ERROR") == 1


async def test_the_answer_is_logged_with_its_latency(make_settings, caplog):
    caplog.set_level(logging.INFO, logger="threadline.observability.answers")
    async with running(make_settings()) as client:
        _, _, chunks = await chat(client, new_conversation_id(), "calculate 3*3")
    [line] = [record for record in caplog.records if record.name == "threadline.observability.answers"]
    assert line.trace_id == trace_id_of(chunks) and line.outcome == "completed" and line.tool_calls == 1
    assert 0 < line.first_token_ms <= line.total_ms and line.output_tokens > 0 and line.model == "demo:demo"


async def test_spans_reach_an_otlp_collector_under_the_callers_traceparent(make_settings):
    collector = start_collector()
    parent_trace, parent_span = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
    try:
        settings = make_settings(otlp_traces_endpoint=f"{collector.base_url}/v1/traces")
        async with running(settings) as client:
            response = await client.post(
                "/api/chat",
                json=chat_body(new_conversation_id(), "calculate 6*7"),
                headers={"traceparent": f"00-{parent_trace}-{parent_span}-01"},
            )
        chunks = list(events_of(response))
        spans = await asyncio.to_thread(
            collector.wait_for, lambda spans: any(span.name == "invoke_agent threadline" for span in spans)
        )
    finally:
        collector.stop()
    by_name = {span.name: span for span in spans}
    request, answer = by_name["POST /api/chat"], by_name["invoke_agent threadline"]
    assert request.trace_id == parent_trace and request.parent_span_id == parent_span, "traceparent is continued"
    assert answer.trace_id == parent_trace and answer.parent_span_id == request.span_id
    assert answer.attributes["threadline.trace_id"] == trace_id_of(chunks)
    assert answer.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert answer.attributes["gen_ai.usage.output_tokens"] == chunks[-1]["messageMetadata"]["usage"]["outputTokens"]
    model_calls = [span for span in spans if span.name == "chat demo:demo"]
    [tool] = [span for span in spans if span.name == "execute_tool calculator"]
    assert len(model_calls) == 2 and all(span.parent_span_id == answer.span_id for span in model_calls)
    assert model_calls[0].attributes["gen_ai.request.model"] == "demo:demo"
    assert model_calls[0].attributes["gen_ai.usage.input_tokens"] > 0
    assert (
        tool.attributes["gen_ai.tool.name"] == "calculator" and tool.attributes["threadline.mcp.server"] == "threadline"
    )
    assert answer.start_ns <= model_calls[0].start_ns < tool.start_ns < model_calls[1].start_ns <= answer.end_ns
    assert answer.resource["service.name"] == "threadline"
    assert not [span for span in spans if span.name.endswith((" http send", " http receive"))], "no span per chunk"


def generations(spans: list) -> list:
    return [span for span in spans if span.attributes.get("langfuse.observation.type") == "generation"]


async def test_each_answer_is_a_langfuse_trace_with_session_user_generations_and_tool_span(make_settings):
    host = start_collector()
    conversation_id = new_conversation_id()
    try:
        settings = make_settings(
            langfuse_public_key="pk-lf-test", langfuse_secret_key="sk-lf-test", langfuse_host=host.base_url
        )
        async with running(settings) as client:
            _, _, chunks = await chat(client, conversation_id, "calculate 6*7")
            client_id = client.cookies[COOKIE].split(".")[0]
        spans = await asyncio.to_thread(
            host.wait_for,
            lambda spans: sum(span.attributes.get("langfuse.observation.type") == "generation" for span in spans) >= 2,
        )
    finally:
        host.stop()
    method, path, headers = host.requests[0]
    assert (method, path) == ("POST", "/api/public/otel/v1/traces")
    assert headers["authorization"] == "Basic " + base64.b64encode(b"pk-lf-test:sk-lf-test").decode()
    assert {span.trace_id for span in spans} == {trace_id_of(chunks)}, "the Langfuse trace is the answer's trace"
    [root] = [span for span in spans if span.attributes.get("langfuse.internal.as_root")]
    assert root.attributes["session.id"] == conversation_id
    assert root.attributes["user.id"] == client_id
    usage = json.loads(generations(spans)[-1].attributes["langfuse.observation.usage_details"])
    assert usage["output"] > 0 and usage["input"] > 0
    assert "calculate 6*7" in generations(spans)[0].attributes["langfuse.observation.input"]
    [tool] = [span for span in spans if span.attributes.get("langfuse.observation.type") == "tool"]
    assert tool.name == "calculator" and "42" in tool.attributes["langfuse.observation.output"]


async def test_an_unreachable_collector_and_langfuse_host_do_not_touch_the_chat(make_settings):
    closed = f"http://127.0.0.1:{standins.free_port()}"
    settings = make_settings(
        otlp_traces_endpoint=f"{closed}/v1/traces",
        langfuse_public_key="pk-lf-test",
        langfuse_secret_key="sk-lf-test",
        langfuse_host=closed,
    )
    async with running(settings) as client:
        _, _, chunks = await chat(client, new_conversation_id(), "calculate 6*7")
        stored = await trace(client, trace_id_of(chunks))
    assert chunks[-1]["type"] == "finish" and stored["status"] == "completed"


def test_an_exporter_that_keeps_failing_is_logged_once_per_period():
    throttle = ExporterThrottle(every=600)

    def record(name: str) -> logging.LogRecord:
        return logging.LogRecord(name, logging.WARNING, "", 0, "Transient error %s, retrying", ("refused",), None)

    exporter = "opentelemetry.exporter.otlp.proto.http.trace_exporter"
    assert [throttle.filter(record(exporter)) for _ in range(3)] == [True, False, False]
    assert throttle.filter(record("langfuse")) and not throttle.filter(record("langfuse"))
    assert all(throttle.filter(record("threadline.answers.turn")) for _ in range(3)), "our own lines are never dropped"


async def test_a_nul_in_a_tool_call_is_stored_cleaned_and_the_trace_is_found(database_url):
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool
    from threadline.storage.migrations import migrate
    from threadline.storage.postgres.traces import PostgresTraces
    from threadline.storage.saver import PooledPostgresSaver
    from threadline.storage.schema import Schema
    from threadline.storage.trace_document import ToolCall, Trace
    from threadline_testing.database import TEST_SCHEMA

    at = "2026-01-01T00:00:00Z"
    nul = ToolCall(at=at, offset_ms=1, tool_call_id="c1", tool="calculator", arguments={"x": "a\x00b"})
    escaped = ToolCall(at=at, offset_ms=2, tool_call_id="c2", tool="echo", result="a\\u0000b")
    stored = Trace(
        trace_id="nul-trace",
        conversation_id="c",
        message_id="m",
        model="demo",
        status="completed",
        started_at="2026-01-01T00:00:00Z",
        events=[nul, escaped],
    )
    kwargs = {"autocommit": True, "row_factory": dict_row}
    async with AsyncConnectionPool(database_url, kwargs=kwargs, min_size=1, open=False) as pool:
        await migrate(pool, Schema(TEST_SCHEMA))
        traces = PostgresTraces(pool, PooledPostgresSaver(pool).batches)
        await traces.save("visitor", stored, "q")
        found = await traces.get("visitor", "nul-trace")
    assert found is not None
    assert found.events[0].arguments == {"x": "a\ufffdb"}, "the NUL is replaced, the rest is kept"
    assert found.events[1].result == "a\\u0000b", "an escaped backslash before u0000 is text, left as it is"


async def test_regenerating_keeps_the_traces_of_held_answers_and_a_few_replaced_ones(make_settings, database_url):
    from threadline.storage.traces import KEEP_REPLACED

    conversation_id = new_conversation_id()
    async with running(make_settings(rate_limit="100/minute")) as client:
        await chat(client, conversation_id, "first")
        await chat(client, conversation_id, "second")
        for _ in range(12):
            await chat(client, conversation_id, "again", trigger="regenerate-message")
        held = (await client.get(f"/api/conversations/{conversation_id}")).json()["messages"]
    with psycopg.connect(database_url) as conn:
        rows = conn.execute("SELECT message_id FROM traces WHERE conversation_id = %s", (conversation_id,)).fetchall()
    stored = {message_id for (message_id,) in rows}
    assert {message["id"] for message in held if message["role"] == "assistant"} <= stored
    assert len(rows) == 2 + KEEP_REPLACED, "12 regenerates leave 2 held answers and the newest replaced ones"
