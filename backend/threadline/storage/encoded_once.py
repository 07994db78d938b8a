"""LangGraph's checkpoint serializer, encoding each message and each answer's record of a conversation once.

Every step of an answer writes the conversation's `messages` channel whole, and every answer its `turns` (a
record per answer) whole: at turn 300 that is 600 messages, each dumped by pydantic and packed again (2–6 ms a
write on this machine), and 300 records (about 0.7 ms a write at turn 65): most of what a long conversation's
answer costs more than its first. Neither changes once it is in the state (LangGraph's reducer replaces a message
by id, and `merge_records` a record by key; neither edits one), so each one's bytes are kept beside it after its
first write, for as long as it lives, and a list of messages or a dict of records is written as msgpack writes any
array or map: its header, then its items' bytes. The bytes are the ones LangGraph's serializer writes
(`backend/tests/test_encoded_once.py` checks it), so reading stays LangGraph's own. One whose fields were assigned
other values since (a reducer giving a message its id) is encoded again.
"""

from __future__ import annotations

import struct
import weakref
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer, _msgpack_enc


class KeptRecord(dict[str, Any]):
    """A record the state keeps whole and replaces rather than edits: a dict whose bytes can be kept."""

    __slots__ = ("__weakref__",)


def header(length: int, small: int, sixteen: bytes, thirty_two: bytes) -> bytes:
    """msgpack's header of a container of `length` items: the length in the type byte, or after it in 2 or 4 bytes."""
    if length < 16:
        return bytes((small | length,))
    if length < 1 << 16:
        return sixteen + struct.pack(">H", length)
    return thirty_two + struct.pack(">I", length)


def array_header(length: int) -> bytes:
    """msgpack's header of an array of `length` elements."""
    return header(length, 0x90, b"\xdc", b"\xdd")


def map_header(length: int) -> bytes:
    """msgpack's header of a map of `length` pairs."""
    return header(length, 0x80, b"\xde", b"\xdf")


class Encoded:
    """A value's bytes, with the values its fields held when they were made."""

    __slots__ = ("data", "fields", "value")

    def __init__(self, value: weakref.ref[Any], fields: tuple[Any, ...], data: bytes) -> None:
        self.value = value
        self.fields = fields
        self.data = data


class EncodedOnce(JsonPlusSerializer):
    def __init__(self) -> None:
        super().__init__()
        self.encoded: dict[int, Encoded] = {}  # by the value's id(), removed when the value goes

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        if type(obj) is list and obj and all(isinstance(item, BaseMessage) for item in obj):
            return "msgpack", array_header(len(obj)) + b"".join(map(self._bytes_of, obj))
        if type(obj) is dict and obj and all(type(item) is KeptRecord for item in obj.values()):
            pairs = (_msgpack_enc(key) + self._bytes_of(record) for key, record in obj.items())
            return "msgpack", map_header(len(obj)) + b"".join(pairs)
        return super().dumps_typed(obj)

    def _bytes_of(self, value: BaseMessage | KeptRecord) -> bytes:
        key = id(value)
        fields = tuple(value.values() if isinstance(value, KeptRecord) else value.__dict__.values())
        held = self.encoded.get(key)
        if held is not None and held.value() is value and held.fields == fields:  # the same values, or equal ones
            return held.data
        data = _msgpack_enc(value)
        self.encoded[key] = Encoded(weakref.ref(value, self._forget(key)), fields, data)
        return data

    def _forget(self, key: int) -> Any:
        """What removes a value's bytes when the value goes."""
        encoded = self.encoded
        return lambda _: encoded.pop(key, None)
