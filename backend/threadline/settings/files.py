"""The files' settings: what an attached, uploaded or tool-made file may be."""

from __future__ import annotations

from typing import Annotated, ClassVar

import msgspec

from threadline.settings.reading import Section, comma_list, env

MOST_FILE_BYTES = 30 * 1024 * 1024  # the most FILE_MAX_BYTES and FILE_MAX_MESSAGE_BYTES may be: bounds a request's body


class FileSettings(Section, frozen=True, kw_only=True):
    TITLE: ClassVar[str] = "Files"

    file_types: Annotated[
        tuple[str, ...],
        env(
            "FILE_TYPES",
            help="the media types a message may attach, comma-separated (see [Attachments](../guides/attachments.md))",
            read=comma_list,
        ),
    ] = (
        "image/png",
        "image/jpeg",
        "image/webp",
        "image/gif",
        "application/pdf",
        "text/plain",
        "text/markdown",
        "text/csv",
        "application/json",
    )
    file_max_bytes: Annotated[
        int, msgspec.Meta(ge=1, le=MOST_FILE_BYTES), env("FILE_MAX_BYTES", help="bytes per attached file")
    ] = 10 * 1024 * 1024
    file_max_count: Annotated[
        int, msgspec.Meta(ge=0, le=100), env("FILE_MAX_COUNT", help="files per message (0: no attachments)")
    ] = 4
    file_max_message_bytes: Annotated[
        int,
        msgspec.Meta(ge=1, le=MOST_FILE_BYTES),
        env("FILE_MAX_MESSAGE_BYTES", help="bytes of all files in one message"),
    ] = 20 * 1024 * 1024
    file_prompt_bytes: Annotated[
        int,
        msgspec.Meta(ge=0, le=1 << 40),
        env(
            "FILE_PROMPT_BYTES",
            help="bytes of attached files one model call is given, the newest first; older files are named, "
            "not sent again",
        ),
    ] = 20 * 1024 * 1024
    file_check_seconds: Annotated[
        float,
        msgspec.Meta(gt=0, le=120),
        env(
            "FILE_CHECK_SECONDS",
            help="seconds the check of one file may take (a PDF is opened in a process of its own, stopped then); "
            "a file that takes longer is refused",
        ),
    ] = 5.0
