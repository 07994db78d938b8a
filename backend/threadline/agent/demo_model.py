"""An offline, scripted chat model: streams token by token and calls tools when asked.

It exists so that threadline runs, demos and tests with no API key and no network. It is honest
about itself: its answers say it is the demo model, and the server names it in the log and metadata.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    message_chunk_to_message,
)
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from threadline.agent.actions import SUMMARIZE_REQUEST
from threadline.agent.suggestions import REQUEST_HEADER
from threadline.agent.titles import TITLE_REQUEST
from threadline.storage.conversation_list import title_from

_TOKEN = re.compile(r"\s*\S+")
_ARITHMETIC = re.compile(r"(?:calculate|compute|what is|what's)\s+([-+*/%^().\d\s]*\d[-+*/%^().\d\s]*)", re.I)
_TIME_ZONE = re.compile(r"\b([A-Z][A-Za-z_]+/[A-Za-z_]+(?:/[A-Za-z_]+)?)\b")
_THINK = re.compile(r"^\s*think about (.+)", re.I | re.S)
_COUNT = re.compile(r"\bcount to (\d{1,5})\b", re.I)
_MARKDOWN = re.compile(r"\bshow (?:me )?markdown\b", re.I)
# What the page draws: GitHub's tables, task lists and strikethrough, and highlighted code.
MARKDOWN_SAMPLE = """Here is **Markdown** as the page draws it.

| Planet | Moons | Rings |
|---|---:|:---:|
| Earth | 1 | no |
| Saturn | 146 | yes |

- [x] a task that is done
- [ ] a task that is ~~not~~ still open

```python
def greet(name: str) -> str:
    return f"Hello, {name}!"  # a comment
```

Inline `code` and a [link](https://example.com)."""
_USE_TOOL = re.compile(r"\buse the ([\w.-]+) tool(?: with (\{.*\}))?", re.I | re.S)
_SEARCH = re.compile(r"\bsearch (?:this conversation|earlier messages) for (.+)", re.I | re.S)
_LIST = re.compile(r"\b(?:list|show) my conversations\b", re.I)
_DELETE = re.compile(r"\bdelete (?:the )?conversations? ([\w-]+(?:\s*(?:,|\band\b)\s*[\w-]+)*)", re.I)


def _prompt_and_files(message: HumanMessage) -> tuple[str, str]:
    """The message's own text, and a sentence naming what was attached to it (agent/attachments.py's blocks)."""
    if isinstance(message.content, str):
        return message.text, ""
    blocks = [block for block in message.content if isinstance(block, dict)]
    described = [_described(block) for block in blocks[1:]]
    sentence = f"You attached {'; '.join(described)}. " if described else ""
    return (blocks[0].get("text", "") if blocks else ""), sentence


def _described(block: dict[str, Any]) -> str:
    if block.get("type") == "text":
        name, _, content = str(block.get("text", "")).removeprefix("Attached file ").partition(":\n")
        first_line = content.strip().splitlines()[0][:80] if content.strip() else ""
        return f"{name} (text, {len(content.encode()):,} bytes, beginning \u201c{first_line}\u201d)"
    size = len(base64.b64decode(block.get("base64", "")))
    name = block.get("extras", {}).get("filename", "a file")
    return f"{name} ({block.get('mime_type')}, {size:,} bytes)"


_FILLER = re.compile(
    r"^(?:please |can you |could you |tell me about |tell me |what is |what are |what's |how do i |how to |"
    r"explain |write |give me |show me |i want to |help me )+",
    re.I,
)


def _title(question: str) -> str:
    """The demo's title: the question's first five words without the asking, capitalized, on one line."""
    words = re.findall(r"[\w'’+*/().-]+", _FILLER.sub("", title_from(question)))[:5]
    title = " ".join(words).strip(" .?!")
    return title[:1].upper() + title[1:] if title else "New chat"


def _token_count(message: BaseMessage) -> int:
    """The tokens `_TOKEN` finds in a message (one per run of non-space), counted by `str.split`: the whole prompt is
    counted on every call, and a regex's list of matches made this the dearest part of a long conversation's call."""
    content = message.content
    return len((content if type(content) is str else message.text).split())


def _is_suggestion_request(messages: list[BaseMessage]) -> bool:
    return messages[-1].text.startswith(REQUEST_HEADER)


def _suggestions(request: str) -> dict[str, Any]:
    """Deterministic follow-ups for the suggestion request (agent/suggestions.py): a few replies, and the actions
    it lists that need no choice but a profile."""
    lines = dict(line.split(": ", 1) for line in request.splitlines()[1:] if ": " in line)
    question = lines.get("User", "")
    values = [{"label": "Count to 5", "value": "count to 5"}]
    if match := _ARITHMETIC.search(question):
        values.insert(0, {"label": "Double it", "value": f"calculate ({match.group(1).strip().rstrip('?')}) * 2"})
    else:
        values.append({"label": "Time in Tokyo", "value": "What time is it in Asia/Tokyo?"})
    try:
        catalog = {entry["action"]: entry for entry in json.loads(lines.get("Actions", "[]"))}
    except json.JSONDecodeError:
        catalog = {}
    actions: list[dict[str, Any]] = []
    if "summarize_conversation" in catalog:
        actions.append(
            {"label": "Summarize", "action": "summarize_conversation", "handler": "server", "style": "primary"}
        )
    if "retry_with_profile" in catalog:
        profile = catalog["retry_with_profile"]["data_schema"]["properties"]["profile"]["enum"][-1]
        actions.append(
            {
                "label": f"Retry with {profile}",
                "action": "retry_with_profile",
                "handler": "server",
                "data": {"profile": profile},
                "style": "secondary",
            }
        )
    # Not `copy_answer`: the page has a Copy button under every answer, and a chip beside it would say it twice.
    if "new_chat" in catalog:
        actions.append({"label": "New topic", "action": "new_chat", "handler": "client", "style": "secondary"})
    return {"suggested_values": values, "suggested_actions": actions[:3]}


class DemoChatModel(BaseChatModel):
    """Scripted replies: `calculate <expr>`, `time in <Area/City>`, `search this conversation for <words>`,
    `list my conversations`, `delete conversation <id>[ and <id>]` (which waits for approval) and
    `use the <name> tool with {json}` call tools; `count to N` streams N tokens;
    `think about <topic>` reasons before it answers."""

    token_delay: float = 0.015

    @property
    def _llm_type(self) -> str:
        return "threadline-demo"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, Any]:
        # A LangChain tool's name is its own: converting the whole tool on every call only to read it cost more
        # than the rest of the demo model's call.
        names = [
            tool.name if isinstance(tool, BaseTool) else convert_to_openai_tool(tool)["function"]["name"]
            for tool in tools
        ]
        return self.bind(tool_names=names, **kwargs)

    def _plan(self, messages: list[BaseMessage], tool_names: Sequence[str]) -> AIMessage:
        """Decide the whole reply up front; streaming then just paces it out."""
        last = messages[-1]
        if isinstance(last, ToolMessage):
            results = [m for m in reversed(messages) if isinstance(m, ToolMessage)]
            text = " ".join(
                f"`{m.name}` returned **{m.content}**." if m.status != "error" else f"`{m.name}` failed: {m.content}"
                for m in reversed(results[:1])
            )
            return AIMessage(content=f"{text} (That answer came through a real tool call.)")
        prompt, attached = _prompt_and_files(last) if isinstance(last, HumanMessage) else ("", "")
        if _is_suggestion_request(messages):
            return AIMessage(content=json.dumps(_suggestions(prompt)))
        if prompt.startswith(TITLE_REQUEST):
            return AIMessage(content=_title(prompt.removeprefix(TITLE_REQUEST)))
        if prompt == SUMMARIZE_REQUEST:
            asked = [f"\u201c{m.text[:60]}\u201d" for m in messages[:-1] if isinstance(m, HumanMessage)]
            listed = ", ".join(asked) if asked else "nothing yet"
            return AIMessage(content=f"In short: you asked {listed}, and I answered each in turn.")
        if (match := _USE_TOOL.search(prompt)) and match.group(1) in tool_names:
            try:
                arguments = json.loads(match.group(2) or "{}")
            except json.JSONDecodeError:
                arguments = {}
            return self._tool_call(match.group(1), arguments if isinstance(arguments, dict) else {})
        if (match := _SEARCH.search(prompt)) and "search_conversation" in tool_names:
            return self._tool_call("search_conversation", {"query": match.group(1).strip().rstrip("?.!")})
        if (match := _DELETE.search(prompt)) and "delete_conversation" in tool_names:
            ids = re.split(r"\s*(?:,|\band\b)\s*", match.group(1).strip())
            return self._tool_calls("delete_conversation", [{"conversation_id": id_} for id_ in ids if id_])
        if _LIST.search(prompt) and "list_conversations" in tool_names:
            return self._tool_call("list_conversations", {})
        if (match := _ARITHMETIC.search(prompt)) and "calculator" in tool_names:
            return self._tool_call("calculator", {"expression": match.group(1).strip().rstrip("?")})
        if "time" in prompt.lower() and "current_time" in tool_names:
            zone = _TIME_ZONE.search(prompt)
            return self._tool_call("current_time", {"timezone": zone.group(1) if zone else "UTC"})
        if match := _THINK.search(prompt):
            topic = match.group(1).strip().rstrip("?.!")
            return AIMessage(
                content=f"Having thought it over: {topic} deserves a closer look.",
                additional_kwargs={
                    "demo_reasoning": f"The user wants me to think about {topic}. A short, honest answer will do."
                },
            )
        if _MARKDOWN.search(prompt):
            return AIMessage(content=MARKDOWN_SAMPLE)
        if match := _COUNT.search(prompt):
            return AIMessage(content=" ".join(str(n) for n in range(1, int(match.group(1)) + 1)))
        earlier = sum(isinstance(m, HumanMessage) for m in messages) - 1
        return AIMessage(
            content=(
                f"I am threadline's offline demo model, so this reply is scripted. You said: \u201c{prompt}\u201d. "
                f"{attached}I can see {earlier} earlier message{'s' if earlier != 1 else ''} from you in this "
                "conversation. "
                "Try \u201ccalculate (17 * 23) + 4\u201d, \u201cwhat time is it in Europe/Paris?\u201d, "
                "\u201csearch this conversation for <words>\u201d, \u201clist my conversations\u201d "
                "or \u201ccount to 20\u201d to see tools and streaming."
            )
        )

    @staticmethod
    def _tool_call(name: str, args: dict[str, Any]) -> AIMessage:
        return DemoChatModel._tool_calls(name, [args])

    @staticmethod
    def _tool_calls(name: str, each: list[dict[str, Any]]) -> AIMessage:
        calls = [{"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:24]}"} for args in each]
        return AIMessage(content="", tool_calls=calls)

    def _chunks(self, messages: list[BaseMessage], tool_names: Sequence[str]) -> Iterator[AIMessageChunk]:
        reply = self._plan(messages, tool_names)
        prompt_tokens = sum(map(_token_count, messages))
        output_tokens = 0
        for index, call in enumerate(reply.tool_calls):
            arguments = json.dumps(call["args"])
            middle = len(arguments) // 2
            yield AIMessageChunk(
                content="",
                tool_call_chunks=[
                    tool_call_chunk(name=call["name"], args=arguments[:middle], id=call["id"], index=index)
                ],
            )
            yield AIMessageChunk(
                content="", tool_call_chunks=[tool_call_chunk(name=None, args=arguments[middle:], id=None, index=index)]
            )
            output_tokens += 2
        reasoning = reply.additional_kwargs.get("demo_reasoning")
        for token in _TOKEN.findall(reasoning or ""):  # content blocks, as reasoning models stream them
            yield AIMessageChunk(content=[{"type": "reasoning", "reasoning": token, "index": 0}])
            output_tokens += 1
        # The suggestion request's JSON comes in one piece: nobody watches it being written.
        texts = [reply.text] if _is_suggestion_request(messages) else _TOKEN.findall(reply.text)
        for token in texts:
            yield AIMessageChunk(content=[{"type": "text", "text": token, "index": 1}] if reasoning else token)
            output_tokens += 1
        yield AIMessageChunk(
            content="",
            chunk_position="last",
            usage_metadata={
                "input_tokens": prompt_tokens,
                "output_tokens": output_tokens,
                "total_tokens": prompt_tokens + output_tokens,
            },
        )

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message: AIMessageChunk | None = None
        for chunk in self._chunks(messages, kwargs.get("tool_names", ())):
            message = chunk if message is None else message + chunk
        assert message is not None, "every plan streams at least one chunk"
        return ChatResult(generations=[ChatGeneration(message=message_chunk_to_message(message))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._generate(messages, stop, **kwargs)  # all in memory: no worker thread needed

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in self._chunks(messages, kwargs.get("tool_names", ())):
            yield ChatGenerationChunk(message=chunk)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        delay = 0 if _is_suggestion_request(messages) else self.token_delay  # paced like a model typing
        for chunk in self._chunks(messages, kwargs.get("tool_names", ())):
            if delay:
                await asyncio.sleep(delay)
            yield ChatGenerationChunk(message=chunk)
