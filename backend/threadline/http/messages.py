"""What a message must be before an answer starts: not empty, not too long, and storable by PostgreSQL.

Every route that takes a message checks it here, so each wire refuses the same things in the same words
(seeds 003 and 004 word an empty message "Message cannot be empty").
"""

from __future__ import annotations

from typing import Any

import msgspec
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from threadline.http.errors import ApiError
from threadline.http.schemas import MAX_MESSAGE_CHARS, MAX_VALUE_BYTES, BrowserToolIn, ErrorDetail


def invalid(field: str, message: str) -> ApiError:
    return ApiError(400, "VALIDATION_ERROR", f"Invalid request: {message}", [ErrorDetail(field, message)])


def empty_message(field: str) -> ApiError:
    return ApiError(400, "VALIDATION_ERROR", "Message cannot be empty", [ErrorDetail(field, "Message is required")])


def checked_text(text: str, field: str) -> str:
    """A new message's text, stripped; refused when it is empty, too long or holds what cannot be stored."""
    text = text.strip()
    if not text:
        raise empty_message(field)
    if len(text) > MAX_MESSAGE_CHARS:
        raise invalid(field, f"the message is longer than {MAX_MESSAGE_CHARS} characters")
    return storable(text, field)


def storable(text: str, field: str, what: str = "message") -> str:
    """`text`, refused when PostgreSQL could not store it (a NUL) or it is not valid Unicode."""
    if "\x00" in text:
        raise invalid(field, f"the {what} contains a NUL character (U+0000), which cannot be stored")
    try:
        text.encode()
    except UnicodeEncodeError:
        raise invalid(field, f"the {what} contains an unpaired surrogate, which is not valid Unicode") from None
    return text


CHECKPOINT_SERIALIZER = JsonPlusSerializer()  # LangGraph's, which the conversation's checkpoints are written with


def small_value(value: Any, field: str) -> Any:
    """A JSON value the client chooses freely, refused when it is over MAX_VALUE_BYTES as JSON or holds what
    PostgreSQL cannot store in a checkpoint (a NUL, an unpaired surrogate)."""
    try:
        encoded = msgspec.json.encode(value)
    except (msgspec.EncodeError, UnicodeEncodeError):
        raise invalid(field, "the value contains an unpaired surrogate, which is not valid Unicode") from None
    if len(encoded) > MAX_VALUE_BYTES:
        raise invalid(field, f"the value is over {MAX_VALUE_BYTES:,} bytes as JSON")
    if b"\\u0000" in encoded:
        raise invalid(field, "the value contains a NUL character (U+0000), which cannot be stored")
    try:  # what the checkpoint will do with it: an integer of 2^64 or more, nesting past ~255 levels, fail there
        CHECKPOINT_SERIALIZER.dumps_typed(value)
    except (TypeError, ValueError, OverflowError, RecursionError) as error:
        raise invalid(field, f"the value cannot be saved with the conversation ({error})"[:300]) from None
    return value


def browser_tools(tools: list[BrowserToolIn] | None, field: str = "tools") -> tuple[dict[str, Any], ...]:
    """The page's own tools as the agent gets them (agent/browser_tools.py): names said once, each input schema
    an object's and small enough to store."""
    names = [tool.name for tool in tools or ()]
    if twice := sorted({name for name in names if names.count(name) > 1}):
        raise invalid(field, f"tool {twice[0]!r} is declared twice")
    checked = []
    for tool in tools or ():
        parameters = small_value(tool.parameters or {"type": "object", "properties": {}}, f"{field}.parameters")
        if parameters.get("type", "object") != "object":
            raise invalid(f"{field}.parameters", f"tool {tool.name!r}: the input schema must be an object's")
        checked.append({"name": tool.name, "description": tool.description, "parameters": parameters})
    return tuple(checked)
