"""A user message's attached files, as the conversation keeps them and as a model reads them.

The checkpoint keeps only references (`additional_kwargs["files"]`: id, hash, type, name, size), so its size
does not grow with the files. Right before a model call the references become LangChain's standard content
blocks (`image` and `file` with base64 data, text files as `text`), which each provider integration
translates into its own API's format.

What one model call is given is bounded, whatever the length of the conversation: each distinct file is read
once per call and sent once (with its newest mention), newest files first, up to FILE_PROMPT_BYTES of files;
older ones are named in a line of text instead. Memory per answer stays flat in the number of turns.
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage

from threadline.conversations.state import FileRef, files_of

Read = Callable[[str], Awaitable[bytes | None]]  # a file's bytes by its SHA-256


async def no_files(_sha256: str) -> bytes | None:
    """A reader for a graph without a file store (a test's): every file is gone."""
    return None


def kind_of(media_type: str) -> str:
    """What a model must be able to read for this file: "image", "pdf" or "text"."""
    if media_type.startswith("image/"):
        return "image"
    return "pdf" if media_type == "application/pdf" else "text"


def restored(given: Sequence[BaseMessage], kept: Sequence[BaseMessage]) -> list[BaseMessage]:
    """`given` with each message that was made readable back as the conversation kept it (references only)."""
    originals = {message.id: message for message in kept if files_of(message)}
    return [originals.get(message.id, message) for message in given]


@dataclass(frozen=True)
class FileReader:
    """Attached files as a model call is given them: read from the file store, within a budget of bytes."""

    read: Read = no_files  # a file's bytes by its SHA-256
    budget: int = 20 * 1024 * 1024  # bytes of files one model call is given (FILE_PROMPT_BYTES)

    async def readable(self, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        """The messages a model is given: each one with files gets their content as standard content blocks,
        the newest first while the budget lasts; a file mentioned again later is sent with its newest mention."""
        prompt = list(messages)
        sent: set[str] = set()
        left = self.budget
        for index in reversed(range(len(prompt))):
            message = prompt[index]
            if not (files := files_of(message)):
                continue
            blocks: list[str | dict[str, Any]] = [{"type": "text", "text": message.text}]
            for file in files:
                if file["sha256"] in sent:
                    blocks.append(_note(file, "is attached again later in the conversation"))
                elif file["size"] > left:
                    blocks.append(_note(file, "was attached earlier; it is not sent again"))
                else:
                    sent.add(file["sha256"])
                    left -= file["size"]
                    data = await self.read(file["sha256"])
                    blocks.append(_block(file, data) if data is not None else _note(file, "is no longer stored"))
            prompt[index] = message.model_copy(update={"content": blocks, "additional_kwargs": {}})
        return prompt


def _block(file: FileRef, data: bytes) -> dict[str, Any]:
    kind, name = kind_of(file["media_type"]), file["filename"]
    if kind == "text":
        return {"type": "text", "text": f"Attached file {name}:\n{data.decode('utf-8', errors='replace')}"}
    encoded = base64.b64encode(data).decode()
    block = {"type": "image" if kind == "image" else "file", "base64": encoded, "mime_type": file["media_type"]}
    return block | {"extras": {"filename": name}} | ({"filename": name} if kind == "pdf" else {})


def _note(file: FileRef, what: str) -> dict[str, Any]:
    """A file the call is not given, named in its place."""
    size = f"{file['media_type']}, {file['size']:,} bytes"
    return {"type": "text", "text": f"(The attached file {file['filename']} ({size}) {what}.)"}
