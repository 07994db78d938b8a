"""The exact bytes of every wire for fixed scripted answers, committed in golden/, so a wire change is a diff.

After an intended change: UPDATE_GOLDEN=1 python3 tasks.py test backend/tests/test_golden.py, and
review the diff of backend/tests/golden/.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from threadline import events as ev
from threadline.wires.registry import SEED_004, WIRES
from threadline.wires.seed_001 import GeneralChatEncoder
from threadline.wires.seed_002 import ChatResponseEncoder
from threadline_testing.ai_sdk import check_chunks

GOLDEN = Path(__file__).parent / "golden"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
START = ev.Start(
    message_id="msg-1",
    conversation_id="conv-1",
    model="demo:demo",
    created_at="2026-01-01T12:00:00.000Z",
    trace_id=TRACE_ID,
    profile="default",
)
SCRIPTS = {
    "tool-answer": [
        START,
        ev.StepStart(),
        ev.Status(text="Thinking…"),
        ev.ReasoningStart(id="reasoning-1"),
        ev.ReasoningDelta(id="reasoning-1", delta="Arithmetic: use the tool."),
        ev.ReasoningEnd(id="reasoning-1"),
        ev.ToolInputStart(tool_call_id="call-1", tool_name="calculator", title="Calculator"),
        ev.ToolInputDelta(tool_call_id="call-1", input_text_delta='{"expression": '),
        ev.ToolInputDelta(tool_call_id="call-1", input_text_delta='"6*7"}'),
        ev.ToolInputAvailable(
            tool_call_id="call-1", tool_name="calculator", input={"expression": "6*7"}, title="Calculator"
        ),
        ev.MessageMetadata(usage=ev.Usage(input_tokens=5, output_tokens=3, total_tokens=8)),
        ev.Status(text="Calling tool calculator…"),
        ev.ToolProgress(tool_call_id="call-1", progress=1, total=2, message="halfway"),
        ev.ToolOutput(tool_call_id="call-1", output="42", duration_ms=3.5),
        ev.StepFinish(),
        ev.StepStart(),
        ev.TextStart(id="text-2"),
        ev.TextDelta(id="text-2", delta="It is "),
        ev.TextDelta(id="text-2", delta="**42** — “quoted”\nand a new line."),
        ev.TextEnd(id="text-2"),
        ev.Warning(code="DATABASE_UNAVAILABLE", message="Saved later."),
        ev.StepFinish(),
        ev.Finish(
            finish_reason="stop",
            finished_at="2026-01-01T12:00:01.000Z",
            usage=ev.Usage(input_tokens=12, output_tokens=8, total_tokens=20),
            trace_id=TRACE_ID,
        ),
    ],
    "text-answer": [
        START,
        ev.StepStart(),
        ev.TextStart(id="text-1"),
        ev.TextDelta(id="text-1", delta="Hello"),
        ev.TextDelta(id="text-1", delta=", “world”\n"),
        ev.TextEnd(id="text-1"),
        ev.StepFinish(),
        ev.Finish(
            finish_reason="stop",
            finished_at="2026-01-01T12:00:01.000Z",
            usage=ev.Usage(input_tokens=5, output_tokens=3, total_tokens=8),
            trace_id=TRACE_ID,
        ),
    ],
    "timed-out-answer": [
        START,
        ev.StepStart(),
        ev.TextStart(id="text-1"),
        ev.TextDelta(id="text-1", delta="Slow"),
        ev.TextEnd(id="text-1"),
        ev.StepFinish(),
        ev.Error(code="TIMEOUT", message="The assistant took too long to answer. Please try again.", retryable=True),
    ],
    "failed-answer": [
        START,
        ev.StepStart(),
        ev.ToolInputAvailable(tool_call_id="call-2", tool_name="calculator", input={"expression": "1/0"}),
        ev.ToolOutputError(tool_call_id="call-2", error_text="division by zero", duration_ms=1.25),
        ev.StepFinish(),
        ev.StepStart(),
        ev.TextStart(id="text-1"),
        ev.TextDelta(id="text-1", delta="The tool fail"),
        ev.TextEnd(id="text-1"),
        ev.StepFinish(),
        ev.Error(
            code="NETWORK_ERROR", message="Connection failed: the model provider could not be reached.", retryable=True
        ),
    ],
    "input-error": [  # the model called a tool that does not exist
        START,
        ev.StepStart(),
        ev.ToolInputError(
            tool_call_id="call-4",
            tool_name="no_such_tool",
            input={},
            error_text="There is no tool named 'no_such_tool'.",
        ),
        ev.StepFinish(),
        ev.Finish(
            finish_reason="stop",
            finished_at="2026-01-01T12:00:01.000Z",
            usage=ev.Usage(input_tokens=4, output_tokens=1, total_tokens=5),
            trace_id=TRACE_ID,
        ),
    ],
    "approval-requested": [  # a call waits for the person's approval; resumed, one more is declined
        START,
        ev.StepStart(),
        ev.ToolInputAvailable(tool_call_id="call-3", tool_name="delete_conversation", input={"conversation_id": "c9"}),
        ev.ToolApprovalRequest(approval_id="approval-3", tool_call_id="call-3"),
        ev.StepFinish(),
        ev.Finish(
            finish_reason="tool-calls",
            finished_at="2026-01-01T12:00:01.000Z",
            usage=ev.Usage(input_tokens=9, output_tokens=2, total_tokens=11),
            trace_id=TRACE_ID,
        ),
    ],
    "approval-declined": [
        START,
        ev.ToolOutputDenied(tool_call_id="call-3", error_text="Not run: the user declined this tool call."),
        ev.StepStart(),
        ev.TextStart(id="text-1"),
        ev.TextDelta(id="text-1", delta="I left it alone."),
        ev.TextEnd(id="text-1"),
        ev.StepFinish(),
        ev.Finish(
            finish_reason="stop",
            finished_at="2026-01-01T12:00:02.000Z",
            usage=ev.Usage(input_tokens=14, output_tokens=5, total_tokens=19),
            trace_id=TRACE_ID,
        ),
    ],
    "two-tool-answer": [  # two calls in one step, one failing; the answer ends with suggestions
        START,
        ev.StepStart(),
        ev.TextStart(id="text-1"),
        ev.TextDelta(id="text-1", delta="Let me check both."),
        ev.TextEnd(id="text-1"),
        ev.ToolInputAvailable(tool_call_id="call-5", tool_name="calculator", input={"expression": "6*7"}),
        ev.ToolInputAvailable(tool_call_id="call-6", tool_name="current_time", input={"timezone": "Mars/Base"}),
        ev.ToolOutput(tool_call_id="call-5", output="42", duration_ms=2.0),
        ev.ToolOutputError(tool_call_id="call-6", error_text="Unknown time zone 'Mars/Base'.", duration_ms=1.5),
        ev.StepFinish(),
        ev.StepStart(),
        ev.TextStart(id="text-2"),
        ev.TextDelta(id="text-2", delta="It is 42; Mars has no time zone."),
        ev.TextEnd(id="text-2"),
        ev.StepFinish(),
        ev.Suggestions(
            values=(ev.SuggestedValue(label="Yes, proceed", value="yes"),),
            actions=(
                ev.SuggestedAction(
                    label="Summarize", action="summarize_conversation", handler="server", style="primary"
                ),
                ev.SuggestedAction(label="Retry", action="retry_with_profile", handler="server", data={"profile": "b"}),
            ),
        ),
        ev.Finish(
            finish_reason="stop",
            finished_at="2026-01-01T12:00:01.000Z",
            usage=ev.Usage(input_tokens=20, output_tokens=12, total_tokens=32),
            trace_id=TRACE_ID,
        ),
    ],
    "cancelled-answer": [  # stopped while a tool ran
        START,
        ev.StepStart(),
        ev.ToolInputAvailable(tool_call_id="call-7", tool_name="slow", input={"seconds": 30}),
        ev.ToolProgress(tool_call_id="call-7", progress=1, total=4, message="step 2 of 4"),
        ev.ToolOutputError(tool_call_id="call-7", error_text="Not finished: cancelled."),
        ev.StepFinish(),
        ev.Finish(
            finish_reason="other", finished_at="2026-01-01T12:00:01.000Z", interrupted="cancelled", trace_id=TRACE_ID
        ),
    ],
}
EXTENSIONS = {
    "ui-message-stream": "sse",
    "ndjson": "ndjson",
    "data-stream": "data-stream.txt",
    "seed-004": "seed-004.sse",
    "seed-002": "seed-002.sse",
    "seed-001": "seed-001.sse",
}
FIXED_TIME = "2026-01-01T12:00:00.500Z"
ENCODERS = {name: wire.encode for name, wire in {**WIRES, SEED_004.name: SEED_004}.items()}
# Seed 002's stamps each tool_start with the time: fixed here, so its bytes are the same on every run.
ENCODERS["seed-002"] = lambda batches: ChatResponseEncoder(preview=2000, clock=lambda: FIXED_TIME).encode(batches)
ENCODERS["seed-001"] = lambda batches: GeneralChatEncoder().encode(batches)


async def _events(script):
    for event in script:
        yield [event]


@pytest.mark.parametrize("wire", list(EXTENSIONS))
@pytest.mark.parametrize("script", SCRIPTS)
async def test_the_wire_bytes_are_exactly_the_golden_ones(script, wire):
    encoded = b"".join([chunk async for chunk in ENCODERS[wire](_events(SCRIPTS[script]))])
    path = GOLDEN / f"{script}.{EXTENSIONS[wire]}"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_bytes(encoded)
    assert encoded == path.read_bytes(), f"{path.name} changed; if intended, rerun with UPDATE_GOLDEN=1"


def test_every_chunk_is_one_the_ai_clients_accept():
    """Each `ai` major version's own chunk schema (5, 6, 7) accepts every chunk we send; ai 5 has no approvals."""
    for path in sorted(GOLDEN.glob("*.sse")):
        if ".seed-" in path.name:
            continue
        rejected = check_chunks(path.read_bytes())
        assert rejected["6"] == rejected["7"] == [], path.name
        assert set(rejected["5"]) <= {"tool-approval-request", "tool-output-denied"}, path.name
