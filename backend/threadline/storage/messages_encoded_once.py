"""LangGraph's checkpoint serializer, encoding each message of a conversation once.

Every step of an answer writes the conversation's `messages` channel whole: at turn 300 that is 600 messages, each
dumped by pydantic and packed again, about 6 ms a write on this machine and most of what a long conversation's
answer costs more than its first. A message does not change once it is in the state (LangGraph's reducer replaces
one by id, it does not edit it), so its bytes are kept beside it after its first write, for as long as the message
lives, and a list of messages is written as msgpack writes any array: its header, then its elements' bytes. The
bytes are the ones LangGraph's serializer writes (`backend/tests/test_messages_encoded_once.py` checks it), so
reading stays LangGraph's own. A message whose fields were assigned since (a reducer giving it an id) is encoded
again.
"""

from __future__ import annotations

import operator
import struct
import weakref
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer, _msgpack_enc


def array_header(length: int) -> bytes:
    """msgpack's header of an array of `length` elements."""
    if length < 16:
        return bytes((0x90 | length,))
    if length < 1 << 16:
        return b"\xdc" + struct.pack(">H", length)
    return b"\xdd" + struct.pack(">I", length)


class Encoded:
    """A message's bytes, with what its fields were when they were made (by identity)."""

    __slots__ = ("data", "fields", "message")

    def __init__(self, message: weakref.ref[BaseMessage], fields: tuple[Any, ...], data: bytes) -> None:
        self.message = message
        self.fields = fields
        self.data = data


class MessagesEncodedOnce(JsonPlusSerializer):
    def __init__(self) -> None:
        super().__init__()
        self.encoded: dict[int, Encoded] = {}  # by the message's id(), removed when the message goes

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        if type(obj) is list and obj and all(isinstance(item, BaseMessage) for item in obj):
            return "msgpack", array_header(len(obj)) + b"".join(map(self._bytes_of, obj))
        return super().dumps_typed(obj)

    def _bytes_of(self, message: BaseMessage) -> bytes:
        key = id(message)
        fields = message.__dict__.values()
        held = self.encoded.get(key)
        if (
            held is not None
            and held.message() is message
            and len(held.fields) == len(fields)
            and all(map(operator.is_, held.fields, fields))
        ):
            return held.data
        data = _msgpack_enc(message)
        self.encoded[key] = Encoded(weakref.ref(message, self._forget(key)), tuple(fields), data)
        return data

    def _forget(self, key: int) -> Any:
        """What removes a message's bytes when the message goes."""
        encoded = self.encoded
        return lambda _: encoded.pop(key, None)
