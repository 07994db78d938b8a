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

Looking up 600 messages' bytes one by one still takes about half a millisecond a write, so a long list's items
are also kept joined, for the lists written lately: the next write of that conversation, the same items with the
same field values followed by new ones, reuses their joined bytes after comparing them all at once (in C, not item
by item).
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


LONG = 32  # items from which a list or map is also kept joined: below, one by one costs about what comparing does
JOINED = 128  # the long lists and maps kept joined, the latest written: two for each conversation answering

alive = weakref.ref.__call__  # what a weak reference refers to, or None once it is gone


def fields_of(values: list[Any], records: bool) -> list[tuple[Any, ...]]:
    """The values each message's (a pydantic model's `__dict__`) or record's fields hold, gathered in C."""
    return list(map(tuple, map(dict.values, values if records else map(vars, values))))


def is_message(value: Any) -> bool:
    return isinstance(value, BaseMessage)


def is_record(value: Any) -> bool:
    return type(value) is KeptRecord


class Joined:
    """A long list's (or map's) items as last written: weakly, with the values their fields held, the map's keys,
    and their bytes joined, with where the last one's begin."""

    __slots__ = ("data", "fields", "keys", "last", "values")

    def __init__(
        self,
        values: list[weakref.ref[Any]],
        keys: list[str] | None,
        fields: list[tuple[Any, ...]],
        data: bytes,
        last: int | None,
    ) -> None:
        self.values = values
        self.keys = keys
        self.fields = fields
        self.data = data
        self.last = last

    def reusable(self, values: list[Any], keys: list[str] | None) -> int:
        """How many of the items held `values` (and `keys`) begin with, their fields holding the same values: all,
        all but the last (an answer's record, replaced when the answer ends), or none."""
        if (keys is None) == (self.keys is None):
            held = len(self.values)
            for count in (held, held - 1) if self.last is not None else (held,):
                if count <= len(values) and self._same(values, keys, count):
                    return count
        return 0

    def _same(self, values: list[Any], keys: list[str] | None, count: int) -> bool:
        head = values[:count]  # compared all at once, in C
        return (
            head == list(map(alive, self.values[:count]))
            and (keys is None or keys[:count] == self.keys[:count])  # type: ignore[index]
            and fields_of(head, keys is not None) == self.fields[:count]
        )

    def first(self, count: int) -> tuple[list[weakref.ref[Any]], list[tuple[Any, ...]], bytes]:
        """The references, fields and bytes of the first `count` items held: all, or all but the last."""
        if count == len(self.values):
            return self.values, self.fields, self.data
        return self.values[:count], self.fields[:count], self.data[: self.last]


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
        self.joined: dict[int, Joined] = {}  # by the id() of its first item, removed when that goes; the latest last

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        if type(obj) is list and obj and is_message(obj[0]):
            data = self._joined(obj, None)
            if data is not None:
                return "msgpack", array_header(len(obj)) + data
        elif type(obj) is dict and obj and is_record(next(iter(obj.values()))):
            data = self._joined(list(obj.values()), list(obj))
            if data is not None:
                return "msgpack", map_header(len(obj)) + data
        return super().dumps_typed(obj)

    def _joined(self, values: list[Any], keys: list[str] | None) -> bytes | None:
        """The bytes of a list's messages or a map's records joined (None if one is of another kind), reusing
        those of the items it began with when last written."""
        records, key = keys is not None, id(values[0])
        long = len(values) >= LONG
        held = self.joined.get(key) if long else None
        count = held.reusable(values, keys) if held is not None else 0
        rest = values[count:]
        if not all(map(is_record if records else is_message, rest)):
            return None
        encoded = map(self._pair_bytes, keys[count:], rest) if records else map(self._bytes_of, rest)  # type: ignore[index]
        parts = list(encoded)
        if not long:
            return b"".join(parts)
        refs, fields, data = held.first(count) if held is not None and count else ([], [], b"")
        if not parts and held is not None and count == len(held.values):  # the very list held
            self._keep(key, held)
            return data
        data += b"".join(parts)
        last = len(data) - len(parts[-1]) if parts else None
        refs = refs + list(map(weakref.ref, rest))
        self._keep(key, Joined(refs, keys, fields + fields_of(rest, records), data, last))
        return data

    def _keep(self, key: int, kept: Joined) -> None:
        joined = self.joined
        joined.pop(key, None)
        joined[key] = kept
        if len(joined) > JOINED:
            del joined[next(iter(joined))]

    def _pair_bytes(self, key: str, record: KeptRecord) -> bytes:
        return _msgpack_enc(key) + self._bytes_of(record)

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
        encoded, joined = self.encoded, self.joined

        def forget(_: Any) -> None:
            encoded.pop(key, None)
            joined.pop(key, None)

        return forget
