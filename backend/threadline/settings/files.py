"""The files' section of the settings: what an attached, uploaded or tool-made file may be."""

from __future__ import annotations

from dataclasses import dataclass

from threadline.settings import Section


@dataclass(frozen=True)
class FileSettings(Section):
    file_types: tuple[str, ...]  # FILE_TYPES: the media types a file may have
    file_max_bytes: int  # FILE_MAX_BYTES: one file
    file_max_count: int  # FILE_MAX_COUNT: files in one message
    file_max_message_bytes: int  # FILE_MAX_MESSAGE_BYTES: a message's files together
    file_check_seconds: float  # FILE_CHECK_SECONDS: the longest one file's check may take
