"""The storage's section of the settings: where conversations are kept, and the bounds the stores enforce."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from threadline.settings import MemoryBackend, Section


@dataclass(frozen=True)
class StorageSettings(Section):
    memory_backend: MemoryBackend  # CHAT_MEMORY_BACKEND
    database_url: str | None  # DATABASE_URL; None: the embedded PostgreSQL in `data_dir`
    database_schema: str  # THREADLINE_DATABASE_SCHEMA
    data_dir: Path  # THREADLINE_DATA_DIR
    max_turns_per_conversation: int  # CHAT_MAX_TURNS
    max_conversations_per_visitor: int  # CHAT_MAX_CONVERSATIONS
    file_quota_bytes: int  # FILE_QUOTA_BYTES: what a visitor's stored files may hold, claims included
    file_store_url: str | None  # FILE_STORE_URL: files' bytes in S3; None: in the database
