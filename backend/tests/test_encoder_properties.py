"""Property tests for the UI Message Stream encoder: any text or tool input survives the wire intact."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from threadline import events as ev
from threadline.wires.ui_message_stream import DONE, encode_event
from threadline_testing.ai_sdk import read_with_ai

texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=200)  # any Unicode but lone surrogates
# The client's JSON parser refuses an object with a `__proto__` key, or a `constructor` key holding `prototype`
# (`secureJsonParse`, against prototype pollution): such a value reaches it as JSON text, tested on its own below.
keys = texts.filter(lambda key: key not in ("__proto__", "constructor"))
json_values = st.recursive(
    # Numbers JavaScript holds exactly, as the client parses them.
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(-(2**53), 2**53, allow_nan=False) | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=12,
)


def frames(raw: bytes) -> list[bytes]:
    assert raw.endswith(b"\n\n")
    return raw.split(b"\n\n")[:-1]


@given(delta=texts)
def test_any_text_is_one_sse_event_that_decodes_to_itself(delta):
    raw = encode_event(ev.TextDelta(id="text-1", delta=delta))
    [frame] = frames(raw)
    assert frame.startswith(b"data: ") and b"\n" not in frame and b"\r" not in frame
    assert json.loads(frame.removeprefix(b"data: ")) == {"type": "text-delta", "id": "text-1", "delta": delta}


@given(tool_input=json_values, output=json_values, name=st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_]{0,30}", fullmatch=True))
def test_tool_inputs_and_outputs_round_trip(tool_input, output, name):
    chunks = [
        json.loads(frame.removeprefix(b"data: "))
        for event in (
            ev.ToolInputAvailable(tool_call_id="call-1", tool_name=name, input=tool_input),
            ev.ToolOutput(tool_call_id="call-1", output=output),
        )
        for frame in frames(encode_event(event))
    ]
    assert chunks[0] == {"type": "tool-input-available", "toolCallId": "call-1", "toolName": name, "input": tool_input}
    assert chunks[1] == {"type": "tool-output-available", "toolCallId": "call-1", "output": output}


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)  # no shrinking: each example runs node
@given(deltas=st.lists(texts, min_size=1, max_size=20), tool_input=json_values)
def test_the_real_ai_client_reassembles_any_answer(deltas, tool_input):
    answer = [
        ev.Start(message_id="m1", conversation_id="c1", model="demo:demo", created_at="2026-01-01T00:00:00.000Z"),
        ev.StepStart(),
        ev.TextStart(id="text-1"),
        *(ev.TextDelta(id="text-1", delta=d) for d in deltas),
        ev.TextEnd(id="text-1"),
        ev.ToolInputAvailable(tool_call_id="call-1", tool_name="calculator", input=tool_input),
        ev.ToolOutput(tool_call_id="call-1", output="ok"),
        ev.StepFinish(),
        ev.Finish(finish_reason="stop", finished_at="2026-01-01T00:00:01.000Z"),
    ]
    message = read_with_ai(b"".join(encode_event(event) for event in answer) + DONE)["message"]
    text = next(part for part in message["parts"] if part["type"] == "text")
    tool = next(part for part in message["parts"] if part["type"] == "tool-calculator")
    assert text["text"] == "".join(deltas)
    assert tool["input"] == tool_input and tool["state"] == "output-available"


def test_a_value_the_client_would_refuse_reaches_it_as_its_json_text():
    """A tool's input or output, or an agent's data, with an object the client's parser refuses: the chunk would be
    refused whole and `useChat` throw; that object is sent as its JSON text, the rest as it is."""
    polluting, constructed = {"__proto__": {"admin": True}}, {"constructor": {"prototype": {"x": 1}}}
    answer = [
        ev.Start(message_id="m1", conversation_id="c1", model="demo:demo", created_at="2026-01-01T00:00:00.000Z"),
        ev.StepStart(),
        ev.ToolInputAvailable(tool_call_id="call-1", tool_name="calculator", input={"q": polluting, "n": 1}),
        ev.ToolOutput(tool_call_id="call-1", output=[constructed, {"constructor": "plain"}]),
        ev.Data(name="found", data=polluting),
        ev.StepFinish(),
        ev.Finish(finish_reason="stop", finished_at="2026-01-01T00:00:01.000Z"),
    ]
    read = read_with_ai(b"".join(encode_event(event) for event in answer) + DONE)
    tool = next(part for part in read["message"]["parts"] if part["type"] == "tool-calculator")
    data = next(part for part in read["message"]["parts"] if part["type"] == "data-found")
    assert tool["input"] == {"q": '{"__proto__":{"admin":true}}', "n": 1}
    assert tool["output"] == ['{"constructor":{"prototype":{"x":1}}}', {"constructor": "plain"}]
    assert data["data"] == '{"__proto__":{"admin":true}}'
