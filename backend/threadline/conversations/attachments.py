"""What an attached file must be before it is stored: an accepted type by its bytes (not by its name or the
type it claims), within the size limits, and safe to open later. Pillow reads an image's real format and
dimensions from its header, so a decompression bomb is refused before anything is decoded; pypdf counts a
PDF's pages in a process of its own, killed after FILE_CHECK_SECONDS (conversations/pdf_pages.py); text must
be UTF-8 (and JSON must parse). The checks run off the event loop, so a file made to be slow to check slows
nobody else. Pillow is imported with the first image (some 30 MB a process never sent one does not hold)."""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import io
import json
import sys
import unicodedata
import warnings
import weakref
from collections.abc import AsyncIterator, Collection
from dataclasses import dataclass
from urllib.parse import unquote_to_bytes

from threadline.conversations.state import FileRef
from threadline.refusals import Refused, invalid
from threadline.settings.files import FileSettings
from threadline.storage.file_store import FileStore, StoredFile

MAX_PIXELS = 40_000_000  # an image's width × height: bigger ones are refused by their header alone
MAX_PDF_PAGES = 300
MAX_FILENAME_CHARS = 255
IMAGE_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp", "GIF": "image/gif"}
TEXT_TYPES = ("text/plain", "text/markdown", "text/csv", "application/json")
EXTENSIONS = {
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/webp": "webp",
    "image/gif": "gif",
    "application/pdf": "pdf",
    "text/plain": "txt",
    "text/markdown": "md",
    "text/csv": "csv",
    "application/json": "json",
}


@dataclass(frozen=True)
class FileLimits:
    types: Collection[str]
    max_bytes: int
    max_count: int
    max_message_bytes: int
    check_seconds: float = 5.0  # the longest one file's check may take

    @classmethod
    def of(cls, settings: FileSettings) -> FileLimits:
        return cls(
            settings.file_types,
            settings.file_max_bytes,
            settings.file_max_count,
            settings.file_max_message_bytes,
            settings.file_check_seconds,
        )


@dataclass(frozen=True)
class CheckedFile:
    data: bytes
    media_type: str  # what its bytes are
    filename: str


def file_ref(file: StoredFile) -> FileRef:
    """How a message (or a tool's result) refers to a stored file."""
    return FileRef(id=file.id, sha256=file.sha256, media_type=file.media_type, filename=file.filename, size=file.size)


async def kept(store: FileStore, owner: str, checked: CheckedFile) -> FileRef:
    return file_ref(await store.save(owner, checked.data, checked.media_type, checked.filename))


def too_large(message: str) -> Refused:
    return Refused("FILES_TOO_LARGE", message)


def data_url_bytes(url: str, field: str) -> tuple[bytes, str]:
    """The bytes and declared media type of a `data:` URL (RFC 2397), as `useChat` sends a file."""
    header, comma, payload = url.removeprefix("data:").partition(",")
    if not comma:
        raise invalid(field, "a data URL must hold a comma before its data")
    media_type, *parameters = header.split(";")
    try:
        if "base64" in parameters:
            return base64.b64decode(payload, validate=True), media_type.strip().lower()
        return unquote_to_bytes(payload), media_type.strip().lower()
    except (binascii.Error, ValueError):
        raise invalid(field, "the data URL's base64 does not decode") from None


def checked_filename(name: str | None, media_type: str, field: str) -> str:
    """A name to show and download under: no path, no control characters, not too long."""
    name = (name or "").strip()
    if not name:
        return f"attachment.{EXTENSIONS.get(media_type, 'bin')}"
    if len(name) > MAX_FILENAME_CHARS:
        raise invalid(field, f"a file name is longer than {MAX_FILENAME_CHARS} characters")
    if "/" in name or "\\" in name or any(unicodedata.category(char) in ("Cc", "Cf", "Cs") for char in name):
        raise invalid(field, f"the file name {name[:60]!r} holds a path separator or a control character")
    return name


async def checked_file(data: bytes, declared: str, filename: str | None, limits: FileLimits, field: str) -> CheckedFile:
    """The file as it will be stored, or Refused: too big, not an accepted type, or not what it claims."""
    declared = declared.split(";")[0].strip().lower()
    shown = checked_filename(filename, declared, field)
    if len(data) > limits.max_bytes:
        raise too_large(f"{shown} is over {limits.max_bytes:,} bytes, the most a file may have")
    if data.startswith(b"%PDF-"):
        await _check_pdf(data, shown, field, limits.check_seconds)
        actual = "application/pdf"
    else:
        actual = await asyncio.to_thread(_image_or_text_type, data, declared, shown, field)
    if declared and declared != actual and not (declared in TEXT_TYPES and actual in TEXT_TYPES):
        raise invalid(field, f"{shown} says it is {declared}, but its bytes are {actual}")
    if actual not in limits.types:
        raise invalid(field, f"{shown}: {actual} files are not accepted here")
    return CheckedFile(data, actual, shown)


def _image_or_text_type(data: bytes, declared: str, name: str, field: str) -> str:
    """What the bytes are, or Refused when they cannot be opened safely."""
    return _image_type(data, name, field) or _text_type(data, declared, name, field)


def _image_type(data: bytes, name: str, field: str) -> str | None:
    """An image's type by its header, None when the bytes are no image Pillow knows."""
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))  # reads the header only
    except UnidentifiedImageError:
        return None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise invalid(field, f"{name} has more pixels than an image may have") from None
    except (OSError, SyntaxError, ValueError):
        raise invalid(field, f"{name} is a broken image") from None
    if image.width * image.height > MAX_PIXELS:
        raise invalid(field, f"{name} is {image.width}×{image.height} pixels, more than {MAX_PIXELS:,}")
    try:
        image.verify()
    except (OSError, SyntaxError, ValueError):
        raise invalid(field, f"{name} is a broken image") from None
    return IMAGE_TYPES.get(image.format or "", f"image/{(image.format or 'unknown').lower()}")


async def _check_pdf(data: bytes, name: str, field: str, seconds: float) -> None:
    """Refused unless a process of its own counts the PDF's pages within `seconds`, and they are not too many."""
    pages = await pdf_pages(data, seconds)
    if pages is None:
        raise invalid(field, f"{name} is not a PDF that can be read (or it takes too long to open)")
    if pages > MAX_PDF_PAGES:
        raise invalid(field, f"{name} has {pages} pages, more than {MAX_PDF_PAGES}")


class CheckSlots:
    """At most `at_once` checks run in this process, and `waiting` more wait their turn; past that a file is
    refused at once (OVER_CAPACITY, retryable): each check is a Python process of its own, ~90 MB, so 16 uploads at
    once held 1.4 GB, over a 1 GiB container's limit. One semaphore per event loop (asyncio's are bound to one)."""

    def __init__(self, at_once: int, waiting: int) -> None:
        self.at_once = at_once
        self.waiting = waiting
        self.queued = 0
        self.slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        loop = asyncio.get_running_loop()
        semaphore = self.slots.get(loop) or self.slots.setdefault(loop, asyncio.Semaphore(self.at_once))
        if semaphore.locked() and self.queued >= self.waiting:
            raise Refused(
                "OVER_CAPACITY", "Too many files are being checked right now: try again in a moment.", retry_after=2
            )
        self.queued += 1
        try:
            await semaphore.acquire()
        finally:
            self.queued -= 1
        try:
            yield
        finally:
            semaphore.release()


PDF_CHECKS = CheckSlots(at_once=2, waiting=8)


async def pdf_pages(data: bytes, seconds: float) -> int | None:
    """The PDF's page count, None when it cannot be read within `seconds` (the process is killed then)."""
    async with PDF_CHECKS.slot():
        return await _count_pages(data, seconds)


async def _count_pages(data: bytes, seconds: float) -> int | None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "threadline.conversations.pdf_pages",
        str(max(1, round(seconds))),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        output, _ = await asyncio.wait_for(process.communicate(data), seconds)
    except TimeoutError:
        return None
    finally:
        if process.returncode is None:  # too slow, or the request went away: it stops here
            process.kill()
            await process.wait()
    return int(output) if process.returncode == 0 and output.strip().isdigit() else None


def _text_type(data: bytes, declared: str, name: str, field: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise invalid(field, f"{name} is neither an accepted image, a PDF nor UTF-8 text") from None
    if "\x00" in text:
        raise invalid(field, f"{name} holds NUL characters: it is not text")
    if declared == "application/json":
        try:
            json.loads(text)
        except ValueError:
            raise invalid(field, f"{name} is not valid JSON") from None
    return declared if declared in TEXT_TYPES else "text/plain"
