"""The conversation module and the two views of it, fed scripted LangGraph messages: the history a reloaded
page reads, and the translator that turns a graph's stream into canonical events."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolCall, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import interrupt
from threadline import events as ev
from threadline.agent.actions import ActionRegistry
from threadline.agent.demo_model import DemoChatModel
from threadline.agent.graph import ChatState, GraphOptions, _fresh_id, build_graph
from threadline.agent.suggestions import Suggester
from threadline.answers.runner import MessagesAsTheyCome, run_graph
from threadline.answers.translator import TurnTranslator
from threadline.conversations.approvals import ask
from threadline.conversations.history import ui_messages
from threadline.conversations.state import (
    Conversation,
    clean_message,
    clean_text,
    closing_node,
    config_of,
    load,
    merge_records,
    record_of,
)
from threadline_testing.turns import turn_request

EARLIER_RECORD = {  # as threadline stored a record before its keys were its own
    "assistantId": "a1",
    "model": "demo:demo",
    "createdAt": "2026-01-01T00:00:00.000Z",
    "userCreatedAt": "2026-01-01T00:00:00.000Z",
    "finishedAt": "2026-01-01T00:00:01.000Z",
    "finishReason": "stop",
    "usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3},
}


async def test_a_checkpoint_written_with_the_earlier_record_keys_still_loads_and_goes_on():
    graph = build_graph(
        DemoChatModel(token_delay=0), [], InMemorySaver(), GraphOptions(system_prompt="", max_model_calls=1)
    )
    old = {
        "messages": [HumanMessage(id="u1", content="hi"), AIMessage(id="m1", content="hello")],
        "turns": {"u1": EARLIER_RECORD},
    }
    await graph.aupdate_state(config_of("t"), old, as_node=closing_node(graph))
    before = ui_messages(await load(graph, "t"), "c")
    request = turn_request("again", created_at="now")
    await run_graph(graph, config_of("t"), request, TurnTranslator(events_mode=False), lambda _: None)
    after = await load(graph, "t")
    assert before[1]["id"] == "a1"
    assert before[1]["metadata"] == {
        "conversationId": "c",
        "model": "demo:demo",
        "createdAt": "2026-01-01T00:00:00.000Z",
        "finishedAt": "2026-01-01T00:00:01.000Z",
        "usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3},
    }
    assert after.records["u1"]["usage"] == {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}
    assert len(after.messages) == 4 and "finished_at" in after.records[after.messages[2].id]


async def test_a_regenerated_answer_starts_a_record_of_its_own():
    graph = build_graph(
        DemoChatModel(token_delay=0), [], InMemorySaver(), GraphOptions(system_prompt="", max_model_calls=1)
    )
    request = turn_request("hello", created_at="now")
    await run_graph(graph, config_of("t"), request, TurnTranslator(events_mode=False), lambda _: None)
    first = await load(graph, "t")
    question = first.last_question()
    merged = merge_records(first.records, {question.id: {"assistant_id": "new", "created_at": "later"}})
    assert merged[question.id] == {"user_created_at": "now", "assistant_id": "new", "created_at": "later"}, (
        "the earlier answer's finish and usage are not carried over"
    )
    assert record_of({"finishReason": "stop"}) == {"finish_reason": "stop"}


def test_a_question_whose_id_was_used_before_gets_one_of_its_own():
    said = [HumanMessage("hello", id="q1"), AIMessage("hi", id="a1")]
    records = merge_records({}, {"q1": {"assistant_id": "a1"}, "q0": {"assistant_id": "a0"}})
    assert _fresh_id("q2", said, records) == "q2"
    for used in ("q1", "a1", "a0"):  # a question's, an answer's, an answer no longer in the messages
        assert _fresh_id(used, said, records).startswith(f"{used}-")


@pytest.mark.parametrize("suggests", [False, True])
async def test_the_last_model_call_closes_the_turn_unless_suggestions_follow_in_a_step_of_their_own(suggests):
    """Without suggestions the model call that ends the agent's loop writes the answer's record, one checkpointed
    step fewer; with them a step after the agent does, once the answer is saved. Either way the answer reads
    the same, on the stream and in the history, and a turn closed as `closing_node` goes on."""

    @tool
    def calculator(expression: str) -> str:
        """Evaluate an arithmetic expression."""
        return "42"

    model = DemoChatModel(token_delay=0)
    suggester = Suggester(model, ActionRegistry([])) if suggests else None
    options = GraphOptions(system_prompt="", max_model_calls=3, suggester=suggester)
    graph = build_graph(model, [calculator], InMemorySaver(), options)
    shown: list[ev.Event] = []
    translator = TurnTranslator(events_mode=False)
    await run_graph(graph, config_of("t"), turn_request("calculate 6*7", created_at="now"), translator, shown.append)
    conversation = await load(graph, "t")
    question = conversation.last_question()
    assert question is not None
    record = conversation.records[question.id]
    ran = {node async for snapshot in graph.aget_state_history(config_of("t")) for node in snapshot.next}
    assert ran == {"__start__", "turn.before_agent", "model", "tools"} | ({"turn.after_agent"} if suggests else set())
    assert record["finish_reason"] == "stop" and record["usage"]["output_tokens"] > 0
    assert translator.finish is not None and translator.finish["finished_at"] == record["finished_at"]
    assert ("suggestions" in record) is suggests
    ending = [ev.MessageMetadata, ev.StepFinish, *([ev.Suggestions] if suggests else [])]
    assert [type(event) for event in shown][-len(ending) :] == ending
    streamed = "".join(event.delta for event in shown if isinstance(event, ev.TextDelta))
    texts = [part["text"] for part in ui_messages(conversation, "c")[-1]["parts"] if part["type"] == "text"]
    assert streamed and texts == [streamed]
    closed = {"messages": [HumanMessage(id="u9", content="hi")], "turns": {"u9": {"finish_reason": "other"}}}
    await graph.aupdate_state(config_of("t"), closed, as_node=closing_node(graph))
    assert not (await graph.aget_state(config_of("t"))).next, "a turn closed as the closing node runs nothing after"


def test_the_history_view_shows_steps_tools_and_interruptions_like_the_stream():
    messages = [
        HumanMessage(id="u1", content="calculate"),
        AIMessage(content="", tool_calls=[{"id": "c1", "name": "calculator", "args": {"expression": "1+1"}}]),
        ToolMessage(content="2", tool_call_id="c1", name="calculator"),
        AIMessage(content=[{"type": "reasoning", "reasoning": "easy"}, {"type": "text", "text": "It is 2."}]),
        HumanMessage(id="u2", content="and now?"),
    ]
    conversation = Conversation("t", messages, {"u2": {"assistant_id": "a2", "interrupted": "server-stopped"}})
    view = ui_messages(conversation, "c")
    assert [message["role"] for message in view] == ["user", "assistant", "user", "assistant"]
    assert [part["type"] for part in view[1]["parts"]] == [
        "step-start",
        "tool-calculator",
        "step-start",
        "reasoning",
        "text",
    ]
    assert view[1]["parts"][1]["state"] == "output-available" and view[1]["parts"][1]["output"] == "2"
    assert view[3] == {
        "id": "a2",
        "role": "assistant",
        "parts": [],
        "metadata": {"conversationId": "c", "interrupted": "server-stopped"},
    }


def kinds(events: list[ev.Event]) -> list[str]:
    return [type(event).__name__ for event in events]


def test_the_translator_opens_and_closes_parts_and_steps_around_scripted_chunks():
    translator = TurnTranslator(events_mode=True)
    events = translator.model_chunk(AIMessageChunk(content=[{"type": "reasoning", "reasoning": "hmm"}]))
    events += translator.model_chunk(
        AIMessageChunk(
            content="Let me", tool_call_chunks=[{"index": 0, "id": "c1", "name": "calculator", "args": '{"expression"'}]
        )
    )
    events += translator.model_chunk(
        AIMessageChunk(content=" check.", tool_call_chunks=[{"index": 0, "id": None, "name": None, "args": ': "1+1"}'}])
    )
    done = AIMessage(
        content="Let me check.", tool_calls=[{"id": "c1", "name": "calculator", "args": {"expression": "1+1"}}]
    )
    events += translator.model_done(done)
    events += translator.message(ToolMessage(content="2", tool_call_id="c1", name="calculator"), "tools")
    events += translator.update("tools", {"messages": [ToolMessage(content="2", tool_call_id="c1")]})
    # Any agent's tools node is read alike: its step ends when the next model call starts (or the answer ends).
    events += translator.model_chunk(AIMessageChunk(content="Two."))
    assert kinds(events) == [
        "StepStart",
        "Status",
        "ReasoningStart",
        "ReasoningDelta",
        "ReasoningEnd",
        "TextStart",
        "TextDelta",
        "ToolInputStart",
        "ToolInputDelta",
        "TextDelta",
        "ToolInputDelta",
        "TextEnd",
        "ToolInputAvailable",
        "Status",
        "ToolOutput",
        "StepFinish",
        "StepStart",
        "Status",
        "TextStart",
        "TextDelta",
    ]
    assert translator.pending_tools == set()


def test_a_tool_result_that_the_next_calls_tokens_overtook_is_shown_after_that_call():
    """Tokens are shown as the model makes them; a node's update comes through the run's stream. A resumed answer's
    tool node can report after the next model call began to stream: its result is held, then shown, never lost."""
    translator = TurnTranslator(events_mode=False)
    translator.message(AIMessageChunk(content="", id="m2"), "model")  # the next call streams before...
    held = translator.agent_update({"messages": [{"role": "tool", "content": "sent", "tool_call_id": "c1"}]})
    assert held == []  # ... the tool node's update: is it this call's result? Not known yet
    done = translator.agent_update(
        {"messages": [AIMessage(content="", id="m2", tool_calls=[{"id": "c2", "name": "Done", "args": {}}])]}
    )
    assert [(kind, getattr(event, "tool_call_id", "")) for kind, event in zip(kinds(done), done, strict=True)] == [
        ("ToolInputAvailable", "c2"),
        ("ToolOutput", "c1"),
    ]


def test_an_interrupted_translation_closes_what_is_open_and_keeps_what_was_said():
    translator = TurnTranslator(events_mode=False)
    translator.model_chunk(AIMessageChunk(content="Half an"))
    translator.model_done(AIMessage(content="", tool_calls=[{"id": "c9", "name": "slow", "args": {}}]))
    translator.model_chunk(AIMessageChunk(content="swer"))
    events = translator.interrupted("cancelled")
    assert kinds(events) == ["TextEnd", "ToolOutputError", "StepFinish"]
    assert events[1].error_text == "Not finished: cancelled."
    assert translator.partial_message().content == "swer", "the model call in flight, not the one before it"


def test_a_token_that_comes_after_a_stop_is_neither_shown_nor_saved():
    """A stop cancels the answer's task, but the model streams in a task of LangGraph's, which can send one more
    token before the cancellation reaches it: that token is not shown, so it is not saved either (the history is
    what the person saw; a total time limit ending an answer under load once kept a token the stream never had)."""

    async def stopped_between_two_tokens() -> tuple[TurnTranslator, list[ev.Event]]:
        translator, shown = TurnTranslator(events_mode=False), []
        messages = MessagesAsTheyCome(translator, shown.append)
        token = lambda text: ((), "messages", (AIMessageChunk(content=text, id="m1"), {"langgraph_node": "model"}))  # noqa: E731
        messages._take(token("Half"))
        translator.stopped = True  # what Turn.stop does
        with pytest.raises(asyncio.CancelledError):
            messages._take(token(" more"))
        return translator, shown

    translator, shown = asyncio.run(stopped_between_two_tokens())
    assert [event.delta for event in shown if isinstance(event, ev.TextDelta)] == ["Half"]
    partial = translator.partial_message()
    assert partial is not None and partial.content == "Half"


def test_text_and_reasoning_are_cleaned_of_end_markers_and_control_characters():
    """Seed 003 CH-T1…T4: no `␄` or control characters in deltas; the stored text is trimmed at its edges;
    a signed thinking block is stored exactly as it came (its provider checks the signature)."""
    translator = TurnTranslator(events_mode=False)
    events = translator.model_chunk(
        AIMessageChunk(
            content=[{"type": "reasoning", "reasoning": "hm\u2404m\x07"}, {"type": "text", "text": "Hi\u2404\x1b"}]
        )
    )
    deltas = [event.delta for event in events if isinstance(event, ev.TextDelta | ev.ReasoningDelta)]
    assert deltas == ["hmm", "Hi"]
    assert clean_text("tab\tand\nnew line\r\x00\u2404") == "tab\tand\nnew line"
    stored = clean_message(AIMessage(content="  Hello\u2404 world\x07 \n"))
    assert stored.content == "Hello world"
    signed = {"type": "thinking", "thinking": " kept as is\u2404 ", "signature": "sig"}
    blocks = clean_message(AIMessage(content=[signed, {"type": "text", "text": " answer\u2404 "}])).content
    assert blocks == [signed, {"type": "text", "text": "answer"}]


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}"


def earlier_graph(checkpointer: InMemorySaver) -> Any:
    """Where the graph before `create_agent`'s waited for an approval: a model call, then its `approve` node."""
    builder = StateGraph(ChatState)
    builder.add_node("process", lambda state: {})
    builder.add_node("approve", lambda state: interrupt(ask(state["messages"][-1].tool_calls)))
    builder.add_edge(START, "process")
    builder.add_edge("process", "approve")
    return builder.compile(checkpointer=checkpointer)


async def test_an_approval_an_earlier_version_left_waiting_in_its_approve_node_resumes_and_runs():
    """The graph before `create_agent`'s waited for approval in a node named `approve`: a conversation saved waiting
    there resumes in today's graph with the same interrupt, the approved call runs, and the turn closes."""
    graph = build_graph(
        DemoChatModel(token_delay=0),
        [weather],
        InMemorySaver(),
        GraphOptions(system_prompt="", max_model_calls=3, require_approval=["weather"]),
    )
    request = turn_request("weather?", created_at="now")
    question_id = request.user_message_id
    call = ToolCall(name="weather", args={"city": "Oslo"}, id="call1", type="tool_call")
    saved = {
        "messages": [
            HumanMessage(id=question_id, content="weather?"),
            AIMessage(id="m1", content="", tool_calls=[call]),
        ],
        "turns": {question_id: {"assistant_id": request.assistant_message_id, "created_at": "now"}},
        "model_calls": 1,
        "interactive": True,
    }
    await earlier_graph(graph.checkpointer).ainvoke(saved, config_of("t"))
    waiting = await graph.aget_state(config_of("t"))
    assert waiting.next == ("approve",) and waiting.interrupts, "read as the earlier graph saved it"
    resume = msgspec.structs.replace(request, resume={waiting.interrupts[0].id: {"call1": {"approved": True}}})
    await run_graph(graph, config_of("t"), resume, TurnTranslator(events_mode=False), lambda _: None)
    after = await load(graph, "t")
    assert [message.text for message in after.messages if isinstance(message, ToolMessage)] == ["Sunny in Oslo"]
    assert isinstance(after.messages[-1], AIMessage) and after.messages[-1].text
    assert after.records[question_id]["finish_reason"] == "stop"
