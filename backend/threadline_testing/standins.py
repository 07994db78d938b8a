"""Local HTTP stand-ins for model providers, speaking each provider's real streaming wire format.

The providers' own client libraries (openai via langchain-openai, google-genai via
langchain-google-genai, anthropic via langchain-anthropic) talk to these over real HTTP, so a test
covers everything up to the socket.
Both follow one script, decided from the conversation they are sent:
- the last message is a tool result → answer with it;
- the user asks to "calculate X" (or to "loop", which always wants the tool) → call `calculator`;
- otherwise → "Echo: <text> (user messages seen: N)".
Faults on request, by the user's text: "fail 401" answers that HTTP status (with the provider's error
body); "busy N" answers 429 asking to retry after N seconds (OpenAI's); "break after N" streams N words and then
drops the connection; "cut after N" (OpenAI's) streams N words and ends the stream cleanly, with no finish reason;
"stall after N" streams N words and then sends nothing more; "stall in tool" starts a calculator call and then
sends nothing more;
"flaky" fails with HTTP 500 three times (more than the client library retries) and then answers;
"call a missing tool" and "call with broken arguments" make the model's mistakes (OpenAI stand-in).
Asked for suggestions (agent/suggestions.py), they answer SUGGESTED, valid and invalid ones mixed.
A model that thinks (Anthropic or Gemini asked to, an OpenAI-compatible model named "…reasoner") says
THOUGHT first, in the provider's own reasoning format.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from litestar import Litestar, Request, Response, post
from litestar.datastructures import ResponseHeader
from litestar.response import Stream
from threadline.agent.suggestions import REQUEST_HEADER
from threadline.agent.titles import TITLE_REQUEST

from threadline_testing.ports import free_port


@dataclass
class Reply:
    text: str = ""
    tool: tuple[str, dict[str, Any]] | None = None
    status: int = 200
    fault: str = ""
    raw_arguments: str | None = None  # sent instead of the tool's arguments as JSON
    # Seconds between the words of the text (before a tool call, in Anthropic's format): an answer a test can stop
    # or reload mid-way
    pace: float = 0.0
    retry_after: str | None = None  # with a 429: its Retry-After header
    # With `tool` too (OpenAI's format only), the text comes first, then the call.


# The reply to threadline's suggestion request: one valid suggestion of each kind among invalid ones.
SUGGESTED = {
    "suggested_values": [{"label": "Yes, proceed", "value": "yes"}, {"value": "no label"}, {"label": "", "value": "x"}],
    "suggested_actions": [
        {"label": "Launch", "action": "launch_missiles", "handler": "server", "style": "warning"},
        {"label": "Retry", "action": "retry_with_profile", "handler": "server", "data": {"profile": "nope"}},
        {"label": "Copy", "action": "copy_answer", "handler": "server"},
        {"label": "Loud", "action": "new_chat", "handler": "client", "style": "blinking"},
        {"label": "Summarize", "action": "summarize_conversation", "handler": "server", "style": "primary"},
    ],
}


TITLE = "A stand-in's title"  # the reply to threadline's title request (agent/titles.py)


def decide(user_texts: list[str], tool_result: str | None, has_tools: bool) -> Reply:
    if user_texts[-1].startswith(REQUEST_HEADER):
        return Reply(text=json.dumps(SUGGESTED))
    if user_texts[-1].startswith(TITLE_REQUEST):
        return Reply(text=f'"{TITLE}."')
    command = user_texts[-1].split()
    if len(command) == 2 and command[0] == "fail":
        return Reply(status=int(command[1]))
    if len(command) == 2 and command[0] == "busy":
        return Reply(status=429, retry_after=command[1])
    if command == ["call", "a", "missing", "tool"] and tool_result is None:
        return Reply(tool=("no_such_tool", {}))
    if command == ["call", "with", "broken", "arguments"] and tool_result is None:
        return Reply(tool=("calculator", {}), raw_arguments="not json at all")
    if command == ["stall", "in", "tool"]:
        return Reply(tool=("calculator", {"expression": "1+1"}), fault="stall")
    if len(command) == 3 and command[0] in ("break", "stall", "cut") and command[1] == "after":
        words = " ".join(f"word{i}" for i in range(int(command[2])))
        return Reply(text=words, fault=command[0])
    if tool_result is not None and "loop" not in user_texts[-1]:
        return Reply(text=f"The tool said {tool_result}.")
    last = user_texts[-1]
    if has_tools and "loop" in last:
        return Reply(tool=("calculator", {"expression": "1+1"}))
    if has_tools and last.lower().startswith("calculate "):
        return Reply(tool=("calculator", {"expression": last[len("calculate ") :]}))
    return Reply(text=f"Echo: {last} (user messages seen: {len(user_texts)})")


async def _fault(reply: Reply) -> None:
    if reply.fault == "stall":
        await asyncio.sleep(3600)
    raise ConnectionResetError("stand-in dropped the connection on purpose")


def _status_error(status: int, body: dict[str, Any], retry_after: str | None = None) -> Response:
    headers = {"retry-after": retry_after} if retry_after else None
    return Response(body, status_code=status, media_type="application/json", headers=headers)


def _words(text: str) -> list[str]:
    words = text.split(" ")
    return [word + (" " if i < len(words) - 1 else "") for i, word in enumerate(words)]


@dataclass
class Call:
    """What a scripted stand-in sees of one model call: the user turns, the tools offered, the system prompt,
    and the tool results so far (their names, in order) with the last one's text."""

    users: list[str]
    tools: list[str]
    system: str = ""
    results: list[str] = field(default_factory=list)  # the tools whose results the conversation holds
    last_result: str | None = None  # the last message's tool result, when it is one
    structured: bool = False  # the call asks for JSON of a schema (response_format)
    schema: str = ""  # that schema's name, where the request gives one (OpenAI's json_schema)


# A provider client made once (an agent module's `ChatOpenAI(...)`) outlives a test's event loop: a connection it
# kept open for the next test would belong to a closed loop.
ONE_REQUEST_PER_CONNECTION = [ResponseHeader(name="connection", value="close")]
FLAKY_FAILURES = 3
THOUGHT = "Let me think this through."


@dataclass
class StandIn:
    """A running stand-in server; `requests` holds every JSON body it received."""

    base_url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    server: uvicorn.Server | None = None
    flaky_failures: int = 0
    # A test's own script for an agent's calls (its tool names, the results so far): a Reply, or None for the
    # stand-ins' usual script.
    script: Callable[[Call], Reply | None] | None = None
    calls: list[Call] = field(default_factory=list)  # every call, as the script saw it

    def decide(
        self, user_texts: list[str], tool_result: str | None, has_tools: bool, call: Call | None = None
    ) -> Reply:
        if call is not None:
            self.calls.append(call)
            if self.script is not None and (scripted := self.script(call)) is not None:
                return scripted
        if user_texts[-1] == "flaky" and self.flaky_failures < FLAKY_FAILURES:
            self.flaky_failures += 1
            return Reply(status=500)
        return decide(user_texts, tool_result, has_tools)

    def stop(self) -> None:
        self.server.should_exit = True


def _openai_app(standin: StandIn) -> Litestar:
    @post("/v1/chat/completions", status_code=200)
    async def completions(request: Request) -> Stream | Response:
        body = await request.json()
        standin.requests.append(body)
        messages = body["messages"]
        users = [
            m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
            for m in messages
            if m["role"] == "user"
        ]
        tool_result = messages[-1]["content"] if messages[-1]["role"] == "tool" else None
        names = {call["id"]: call["function"]["name"] for m in messages for call in m.get("tool_calls") or ()}
        call = Call(
            users=users,
            tools=[tool["function"]["name"] for tool in body.get("tools") or ()],
            system=" ".join(str(m["content"]) for m in messages if m["role"] == "system"),
            results=[names.get(m.get("tool_call_id"), "") for m in messages if m["role"] == "tool"],
            last_result=tool_result if isinstance(tool_result, str) else None,
            structured=isinstance(body.get("response_format"), dict),
            schema=(body.get("response_format") or {}).get("json_schema", {}).get("name", ""),
        )
        reply = standin.decide(users, tool_result, bool(body.get("tools")), call)
        if reply.status != 200:
            return _status_error(
                reply.status,
                {
                    "error": {
                        "message": f"stand-in status {reply.status}",
                        "type": "standin_error",
                        "code": str(reply.status),
                    }
                },
                reply.retry_after,
            )

        if not body.get("stream") and not reply.tool:  # a call without streaming: one completion, as JSON
            message = {"role": "assistant", "content": reply.text}
            return Response(
                {
                    "id": "chatcmpl-standin",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body["model"],
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
                }
            )

        def chunk(delta: dict[str, Any], finish: str | None = None, usage: dict | None = None) -> bytes:
            payload = {
                "id": "chatcmpl-standin",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            if usage:
                payload["choices"], payload["usage"] = [], usage
            return b"data: " + json.dumps(payload).encode() + b"\n\n"

        async def stream():
            yield chunk({"role": "assistant", "content": ""})
            if "reasoner" in body["model"]:  # vLLM and DeepSeek send `reasoning_content`, OpenRouter `reasoning`
                field = "reasoning" if "/" in body["model"] else "reasoning_content"
                for word in _words(THOUGHT):
                    yield chunk({field: word})
            if reply.tool:
                for word in _words(reply.text) if reply.text else ():  # what the model says before its call
                    yield chunk({"content": word})
                    await asyncio.sleep(reply.pace)
                name, args = reply.tool
                arguments = reply.raw_arguments or json.dumps(args)
                yield chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": f"call_{len(standin.requests)}",
                                "type": "function",
                                "function": {"name": name, "arguments": arguments[:5]},
                            }
                        ]
                    }
                )
                if reply.fault:
                    await _fault(reply)
                yield chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments[5:]}}]})
                yield chunk({}, finish="tool_calls")
            else:
                for word in _words(reply.text):
                    yield chunk({"content": word})
                    await asyncio.sleep(reply.pace)
                if reply.fault == "cut":
                    return
                if reply.fault:
                    await _fault(reply)
                yield chunk({}, finish="stop")
            yield chunk({}, usage={"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18})
            yield b"data: [DONE]\n\n"

        return Stream(stream(), media_type="text/event-stream")

    return Litestar([completions, _responses_route(standin)], response_headers=ONE_REQUEST_PER_CONNECTION)


def _input_text(content: str | list[dict[str, Any]]) -> str:
    return content if isinstance(content, str) else "".join(str(block.get("text", "")) for block in content)


def _responses_route(standin: StandIn) -> Any:
    """OpenAI's Responses API (`ChatOpenAI(use_responses_api=True)`, `openai:gpt-5…` in deepagents), streamed as its
    typed server-sent events: the response's id comes in `response.created`, the text and a function call as items."""

    @post("/v1/responses", status_code=200)
    async def responses(request: Request) -> Stream:
        body = await request.json()
        standin.requests.append(body)
        items = body["input"] if isinstance(body["input"], list) else [{"role": "user", "content": body["input"]}]
        users = [_input_text(item["content"]) for item in items if item.get("role") == "user"]
        names = {item["call_id"]: item["name"] for item in items if item.get("type") == "function_call"}
        outputs = [item for item in items if item.get("type") == "function_call_output"]
        last_result = str(items[-1]["output"]) if items[-1].get("type") == "function_call_output" else None
        call = Call(
            users=users,
            tools=[tool["name"] for tool in body.get("tools") or ()],
            system=" ".join(_input_text(i["content"]) for i in items if i.get("role") in ("system", "developer")),
            results=[names.get(item["call_id"], "") for item in outputs],
            last_result=last_result,
        )
        reply = standin.decide(users, last_result, bool(body.get("tools")), call)
        number = len(standin.requests)
        response = {"id": f"resp_{number}", "object": "response", "created_at": int(time.time())}
        response["model"] = body["model"]

        def event(kind: str, **payload: Any) -> bytes:
            return f"event: {kind}\ndata: {json.dumps({'type': kind, **payload})}\n\n".encode()

        async def stream():
            yield event("response.created", response={**response, "status": "in_progress", "output": []})
            text_item = {"id": f"msg_{number}", "type": "message", "role": "assistant"}
            yield event("response.output_item.added", output_index=0, item={**text_item, "content": []})
            for word in _words(reply.text) if reply.text else ():
                yield event("response.output_text.delta", item_id=text_item["id"], output_index=0, delta=word)
                await asyncio.sleep(reply.pace)
            text = {"type": "output_text", "text": reply.text, "annotations": []}
            output = [{**text_item, "status": "completed", "content": [text]}]
            yield event("response.output_item.done", output_index=0, item=output[0])
            if reply.tool:
                name, args = reply.tool
                arguments = json.dumps(args)
                fc = {"id": f"fc_{number}", "type": "function_call", "call_id": f"call_{number}", "name": name}
                yield event("response.output_item.added", output_index=1, item={**fc, "arguments": ""})
                for piece in (arguments[:5], arguments[5:]):
                    yield event("response.function_call_arguments.delta", item_id=fc["id"], output_index=1, delta=piece)
                output.append({**fc, "arguments": arguments, "status": "completed"})
                yield event("response.output_item.done", output_index=1, item=output[1])
            usage = {"input_tokens": 11, "output_tokens": 7, "total_tokens": 18}
            completed = {**response, "status": "completed", "output": output, "usage": usage}
            yield event("response.completed", response=completed)

        return Stream(stream(), media_type="text/event-stream")

    return responses


def _text_blocks(content: str | list[dict[str, Any]], kind: str = "text") -> str:
    if isinstance(content, str):
        return content if kind == "text" else ""
    return "".join(block.get("text", "") for block in content if block.get("type") == kind)


def _anthropic_app(standin: StandIn) -> Litestar:
    """The Messages API's streaming events; a request asking for `thinking` gets a signed thinking block first."""

    @post("/v1/messages", status_code=200)
    async def messages(request: Request) -> Stream | Response:
        body = await request.json()
        standin.requests.append(body)
        turns = body["messages"]
        last = turns[-1]["content"]
        results = [block for block in last if block.get("type") == "tool_result"] if isinstance(last, list) else []
        tool_result = None
        if results:
            content = results[-1]["content"]
            tool_result = content if isinstance(content, str) else _text_blocks(content)
        users = [_text_blocks(turn["content"]) for turn in turns if turn["role"] == "user"]
        users = [text for text in users if text] or [""]
        names = {
            block["id"]: block["name"]
            for turn in turns
            if isinstance(turn["content"], list)
            for block in turn["content"]
            if block.get("type") == "tool_use"
        }
        call = Call(
            users=users,
            tools=[tool["name"] for tool in body.get("tools") or ()],
            system=body["system"] if isinstance(body.get("system"), str) else _text_blocks(body.get("system") or []),
            results=[
                names.get(block["tool_use_id"], "")
                for turn in turns
                if isinstance(turn["content"], list)
                for block in turn["content"]
                if block.get("type") == "tool_result"
            ],
            last_result=tool_result,
            structured="output_format" in body or "output_config" in body,
        )
        reply = standin.decide(users, tool_result, bool(body.get("tools")), call)
        if reply.status != 200:
            kinds = {401: "authentication_error", 429: "rate_limit_error", 529: "overloaded_error"}
            error = {"type": kinds.get(reply.status, "api_error"), "message": f"stand-in status {reply.status}"}
            return _status_error(reply.status, {"type": "error", "error": error})

        def event(name: str, payload: dict[str, Any]) -> bytes:
            return f"event: {name}\ndata: {json.dumps({'type': name, **payload})}\n\n".encode()

        async def stream():
            message = {"id": f"msg_{len(standin.requests)}", "type": "message", "role": "assistant"}
            message |= {"model": body["model"], "content": [], "stop_reason": None, "stop_sequence": None}
            yield event("message_start", {"message": message | {"usage": {"input_tokens": 13, "output_tokens": 1}}})
            index = 0
            if body.get("thinking", {}).get("type") == "enabled":
                yield event(
                    "content_block_start",
                    {"index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
                )
                for word in _words(THOUGHT):
                    yield event(
                        "content_block_delta", {"index": 0, "delta": {"type": "thinking_delta", "thinking": word}}
                    )
                signature = {"type": "signature_delta", "signature": f"sig-{len(standin.requests)}"}
                yield event("content_block_delta", {"index": 0, "delta": signature})
                yield event("content_block_stop", {"index": 0})
                index = 1
            if reply.tool:
                await asyncio.sleep(reply.pace)  # the model thinks before it calls
                name, args = reply.tool
                block = {"type": "tool_use", "id": f"toolu_{len(standin.requests)}", "name": name, "input": {}}
                yield event("content_block_start", {"index": index, "content_block": block})
                arguments = json.dumps(args)
                for part in (arguments[:5], arguments[5:]):
                    delta = {"type": "input_json_delta", "partial_json": part}
                    yield event("content_block_delta", {"index": index, "delta": delta})
                    if reply.fault:
                        await _fault(reply)
                stop = "tool_use"
            else:
                yield event("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}})
                for word in _words(reply.text):
                    delta = {"type": "text_delta", "text": word}
                    yield event("content_block_delta", {"index": index, "delta": delta})
                    await asyncio.sleep(reply.pace)
                if reply.fault:
                    await _fault(reply)
                stop = "end_turn"
            yield event("content_block_stop", {"index": index})
            usage = {"input_tokens": 13, "output_tokens": 9}  # message_delta's counts are cumulative
            yield event("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None}, "usage": usage})
            yield event("message_stop", {})

        return Stream(stream(), media_type="text/event-stream")

    return Litestar([messages], response_headers=ONE_REQUEST_PER_CONNECTION)


def _gemini_app(standin: StandIn) -> Litestar:
    @post("/v1beta/models/{model_action:str}", status_code=200)
    async def generate(request: Request) -> Stream | Response:
        body = await request.json()
        standin.requests.append(body)
        contents = body["contents"]
        users = [part["text"] for c in contents if c["role"] == "user" for part in c["parts"] if "text" in part]
        last_parts = contents[-1]["parts"]
        tool_result = next(
            (json.dumps(p["functionResponse"]["response"]) for p in last_parts if "functionResponse" in p), None
        )
        reply = standin.decide(users, tool_result, bool(body.get("tools")))
        if reply.status != 200:
            return _status_error(
                reply.status,
                {
                    "error": {
                        "code": reply.status,
                        "status": "STANDIN_ERROR",
                        "message": f"stand-in status {reply.status}",
                    }
                },
            )

        def chunk(parts: list[dict[str, Any]], finish: str | None = None) -> bytes:
            candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
            payload: dict[str, Any] = {"candidates": [candidate], "modelVersion": "gemini-standin"}
            if finish:
                candidate["finishReason"] = finish
                payload["usageMetadata"] = {"promptTokenCount": 11, "candidatesTokenCount": 7, "totalTokenCount": 18}
            return b"data: " + json.dumps(payload).encode() + b"\r\n\r\n"

        async def stream():
            thinking = body.get("generationConfig", {}).get("thinkingConfig", {})
            if thinking.get("includeThoughts") or thinking.get("include_thoughts"):  # proto JSON takes either
                yield chunk([{"text": THOUGHT, "thought": True}])  # a thought summary
            if reply.tool:
                name, args = reply.tool
                yield chunk([{"functionCall": {"name": name, "args": args}}], finish="STOP")
            else:
                words = _words(reply.text)
                for word in words[:-1]:
                    yield chunk([{"text": word}])
                if reply.fault:
                    await _fault(reply)
                yield chunk([{"text": words[-1]}], finish="STOP")

        return Stream(stream(), media_type="text/event-stream")

    return Litestar([generate], response_headers=ONE_REQUEST_PER_CONNECTION)


def serve_in_thread(app: Litestar, name: str) -> tuple[str, uvicorn.Server]:
    """Serve `app` on a free loopback port in a thread; returns its base URL and the server (to stop)."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{name} stand-in did not start")
        time.sleep(0.02)
    return f"http://127.0.0.1:{port}", server


def start(provider: str) -> StandIn:
    """Serve the stand-in for `provider` ("openai", "gemini" or "anthropic") on a free loopback port, in a thread."""
    standin = StandIn(base_url="")
    app = {"openai": _openai_app, "gemini": _gemini_app, "anthropic": _anthropic_app}[provider](standin)
    base_url, standin.server = serve_in_thread(app, provider)
    standin.base_url = base_url + ("/v1" if provider == "openai" else "")
    return standin
