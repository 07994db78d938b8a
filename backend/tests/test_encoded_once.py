"""A conversation's messages and answers' records are written with LangGraph's own bytes, each encoded once
(storage/encoded_once.py): the same bytes as LangGraph's serializer, first time and every time after, one whose
fields were assigned encoded again, and nothing kept once they are gone."""

from __future__ import annotations

import gc

import ormsgpack
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from threadline.conversations.state import merge_records
from threadline.storage.encoded_once import LONG, EncodedOnce, KeptRecord, array_header, map_header

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
    serializer = EncodedOnce()
    expected = LANGGRAPH.dumps_typed(messages)
    assert serializer.dumps_typed(messages) == expected
    assert serializer.dumps_typed(list(messages)) == expected  # every message's bytes held now
    assert LANGGRAPH.loads_typed(expected) == messages


usage = st.fixed_dictionaries({"input_tokens": st.integers(0, 10**6), "output_tokens": st.integers(0, 10**6)})
record = st.fixed_dictionaries(
    {"assistant_id": st.uuids().map(str), "finish_reason": st.sampled_from(["stop", "error"])},
    optional={"usage": usage, "model": text, "suggestions": st.dictionaries(text, st.lists(text, max_size=2))},
)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.uuids().map(str), record, min_size=1, max_size=20), record)
def test_records_are_written_as_langgraph_writes_them_first_time_and_after(records, another) -> None:
    serializer = EncodedOnce()
    kept = merge_records({}, records)  # the reducer's records are the ones kept
    assert all(type(value) is KeptRecord for value in kept.values())
    assert serializer.dumps_typed(kept) == LANGGRAPH.dumps_typed(records)
    assert serializer.dumps_typed(dict(kept)) == LANGGRAPH.dumps_typed(records)
    after = merge_records(kept, {"another answer": another})
    assert serializer.dumps_typed(after) == LANGGRAPH.dumps_typed(records | {"another answer": another})
    assert LANGGRAPH.loads_typed(serializer.dumps_typed(after)) == after


edit = st.one_of(
    st.tuples(st.just("add"), message),
    st.tuples(st.just("replace"), st.integers(0, 10**6), message),
    st.tuples(st.just("drop"), st.integers(0, 10**6)),
    st.tuples(st.just("assign"), st.integers(0, 10**6), text),
)


@settings(max_examples=40, deadline=None)
@given(st.lists(message, min_size=LONG, max_size=LONG + 10), st.lists(edit, max_size=12))
def test_a_long_conversation_is_written_as_langgraph_writes_it_after_each_edit(messages, edits) -> None:
    """A long list's items are also kept joined: each write after an added, replaced or dropped message, or a
    message's content assigned another value, is still LangGraph's bytes."""
    serializer = EncodedOnce()
    for edit in [None, *edits]:
        if edit is not None and edit[0] == "add":
            messages = [*messages, edit[1]]
        elif edit is not None and edit[0] == "replace":
            messages = [*messages]
            messages[edit[1] % len(messages)] = edit[2]
        elif edit is not None and edit[0] == "drop" and len(messages) > 1:
            messages = messages[:-1] if edit[1] % 2 else messages[1:]
        elif edit is not None and edit[0] == "assign":
            messages[edit[1] % len(messages)].content = edit[2]
        assert serializer.dumps_typed(messages) == LANGGRAPH.dumps_typed(messages)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.uuids().map(str), record), min_size=LONG, max_size=LONG + 5), st.lists(record, max_size=4))
def test_a_long_map_of_records_is_written_as_langgraph_writes_it_as_answers_start_and_end(answers, ends) -> None:
    """Each answer's record enters the map when it starts and is replaced when it ends, the map kept joined."""
    serializer = EncodedOnce()
    records: dict = {}
    for key, started in answers:
        records = merge_records(records, {key: started})
        assert serializer.dumps_typed(records) == LANGGRAPH.dumps_typed(dict(records))
    for ended in ends:
        records = merge_records(records, {answers[-1][0]: ended})
        assert serializer.dumps_typed(records) == LANGGRAPH.dumps_typed(dict(records))


def test_a_message_whose_fields_were_assigned_is_encoded_again() -> None:
    serializer = EncodedOnce()
    said, answer = HumanMessage("hello"), AIMessage("hi")
    serializer.dumps_typed([said, answer])
    answer.id = "an id a reducer gave it"
    said.content = "hello again"
    assert serializer.dumps_typed([said, answer]) == LANGGRAPH.dumps_typed([said, answer])


def test_other_values_are_written_as_langgraph_writes_them() -> None:
    serializer = EncodedOnce()
    values = ([], [HumanMessage("a"), "x"], {"messages": [HumanMessage("a")]}, {"a": {"plain": "dict"}}, None, b"x", 7)
    for value in values:
        assert serializer.dumps_typed(value) == LANGGRAPH.dumps_typed(value)
    assert not serializer.encoded


def test_nothing_is_kept_once_the_messages_are_gone() -> None:
    serializer = EncodedOnce()
    messages = [HumanMessage(f"question {turn}") for turn in range(50)]
    records = merge_records({}, {str(turn): {"assistant_id": str(turn)} for turn in range(50)})
    serializer.dumps_typed(messages)
    messages = [*messages, AIMessage("an answer")]
    serializer.dumps_typed(messages)
    serializer.dumps_typed(records)
    assert len(serializer.encoded) == 101
    assert len(serializer.joined) == 2  # the long list and map, joined
    del messages, records
    gc.collect()
    assert not serializer.encoded
    assert not serializer.joined


def test_headers_are_msgpacks() -> None:
    for length in (0, 1, 15, 16, 255, 65535, 65536, 70000):
        assert array_header(length) == ormsgpack.packb([None] * length)[: -length or None]
        pairs = {str(key).zfill(5): None for key in range(length)}  # 7 bytes a pair: a 5-letter key and nil
        assert map_header(length) == ormsgpack.packb(pairs)[: -7 * length or None]
