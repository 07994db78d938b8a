"""A conversation's messages are written with LangGraph's own bytes, each message encoded once
(storage/messages_encoded_once.py): the same bytes as LangGraph's serializer, first time and every time after, a
message whose fields were assigned encoded again, and nothing kept once the messages are gone."""

from __future__ import annotations

import gc

import ormsgpack
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from threadline.storage.messages_encoded_once import MessagesEncodedOnce, array_header

LANGGRAPH = JsonPlusSerializer()

text = st.text(max_size=40)
content = st.one_of(text, st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": text}), max_size=3))
ids = st.one_of(st.none(), st.uuids().map(str))
tool_call = st.fixed_dictionaries(
    {"name": st.sampled_from(["calculator", "search"]), "args": st.dictionaries(text, text, max_size=2), "id": ids}
)
message = st.one_of(
    st.builds(HumanMessage, content=content, id=ids),
    st.builds(SystemMessage, content=text),
    st.builds(
        AIMessage,
        content=content,
        id=ids,
        tool_calls=st.lists(tool_call, max_size=2),
        response_metadata=st.dictionaries(text, st.integers(-(2**63), 2**64 - 1), max_size=2),
    ),
    st.builds(ToolMessage, content=content, tool_call_id=st.uuids().map(str), name=st.sampled_from(["calculator"])),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(message, min_size=1, max_size=20))
def test_the_bytes_are_langgraphs_first_time_and_after(messages: list[BaseMessage]) -> None:
    serializer = MessagesEncodedOnce()
    expected = LANGGRAPH.dumps_typed(messages)
    assert serializer.dumps_typed(messages) == expected
    assert serializer.dumps_typed(list(messages)) == expected  # every message's bytes held now
    assert LANGGRAPH.loads_typed(expected) == messages


def test_a_message_whose_fields_were_assigned_is_encoded_again() -> None:
    serializer = MessagesEncodedOnce()
    said, answer = HumanMessage("hello"), AIMessage("hi")
    serializer.dumps_typed([said, answer])
    answer.id = "an id a reducer gave it"
    said.content = "hello again"
    assert serializer.dumps_typed([said, answer]) == LANGGRAPH.dumps_typed([said, answer])


def test_other_values_are_written_as_langgraph_writes_them() -> None:
    serializer = MessagesEncodedOnce()
    for value in ([], [HumanMessage("a"), "not a message"], {"messages": [HumanMessage("a")]}, None, b"raw", 7):
        assert serializer.dumps_typed(value) == LANGGRAPH.dumps_typed(value)
    assert not serializer.encoded


def test_nothing_is_kept_once_the_messages_are_gone() -> None:
    serializer = MessagesEncodedOnce()
    messages = [HumanMessage(f"question {turn}") for turn in range(50)]
    serializer.dumps_typed(messages)
    assert len(serializer.encoded) == 50
    del messages
    gc.collect()
    assert not serializer.encoded


def test_array_headers_are_msgpacks() -> None:
    for length in (0, 1, 15, 16, 255, 65535, 65536, 70000):
        assert array_header(length) == ormsgpack.packb([None] * length)[: -length or None]
