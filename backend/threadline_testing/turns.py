"""Driving the conversation graph directly, without HTTP: the input a route would give it."""

from __future__ import annotations

import uuid

from threadline.agent.graph import TurnRequest
from threadline.events import timestamp


def turn_request(text: str, *, regenerate: bool = False, created_at: str | None = None) -> TurnRequest:
    """One new turn of `text`, with fresh message ids, from the demo model."""
    return TurnRequest(
        user_message_id=uuid.uuid4().hex,
        text=text,
        regenerate=regenerate,
        assistant_message_id=uuid.uuid4().hex,
        model="demo:demo",
        created_at=created_at or timestamp(),
        trace_id=uuid.uuid4().hex,
        profile="default",
    )
