"""The storage's settings: where conversations and files are kept, and the bounds the stores enforce."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, ClassVar, Literal

import msgspec

from threadline.settings.reading import Section, SettingsError, env, number

MemoryBackend = Literal["postgres", "memory"]


def database_url(raw: str, name: str) -> str:
    if not raw.startswith(("postgresql://", "postgres://")):
        raise SettingsError(f"{name} must start with postgresql:// (got {raw.split(':')[0]!r}...)")
    return raw


def schema_name(raw: str, name: str) -> str:
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", raw):
        raise SettingsError(f"{name} must be a PostgreSQL schema name: lower-case letters, digits and _ (got {raw!r})")
    return raw


def s3_url(raw: str, name: str) -> str:
    if not raw.startswith("s3://") or not raw.removeprefix("s3://").split("/")[0]:
        raise SettingsError(f"{name} must look like s3://bucket or s3://bucket/prefix (got {raw!r})")
    return raw.rstrip("/")


def retention_days(raw: str, name: str) -> float:
    """`0` (keep), or at least an hour: a tiny value (`1e-9`) deletes conversations as soon as the hourly check
    runs, which nobody means."""
    value = float(number(float, 0.0, 36_500.0)(raw, name))
    if 0 < value < 1 / 24:
        raise SettingsError(f"{name} must be 0 (keep) or at least 0.042 (an hour) (got {raw!r})")
    return value


class StorageSettings(Section, frozen=True, kw_only=True):
    TITLE: ClassVar[str] = "Storage"

    memory_backend: Annotated[
        MemoryBackend, env("CHAT_MEMORY_BACKEND", help="`postgres` or `memory` (lost when the server stops)")
    ] = "postgres"
    database_url: Annotated[
        str | None,
        env(
            "DATABASE_URL",
            help="`postgresql://…`; without it, `postgres` starts an embedded PostgreSQL (the `pgserver` wheel) "
            "in the data directory",
            read=database_url,
        ),
    ] = None
    database_schema: Annotated[
        str,
        env(
            "THREADLINE_DATABASE_SCHEMA",
            help="the PostgreSQL schema threadline's tables live in, apart from a host app's own tables; a database "
            "set up by a version before it keeps its tables in `public` (`threadline check` says which)",
            read=schema_name,
        ),
    ] = "threadline"
    data_dir: Annotated[
        Path,
        env("THREADLINE_DATA_DIR", help="where the embedded PostgreSQL keeps its files", default="`./.threadline`"),
    ] = Path(".threadline")
    max_turns_per_conversation: Annotated[
        int,
        msgspec.Meta(ge=1, le=1_000_000),
        env(
            "CHAT_MAX_TURNS",
            help="messages per conversation, edits and regenerations included "
            "(see [Storage](../operations/storage.md))",
        ),
    ] = 500
    max_conversations_per_visitor: Annotated[
        int, msgspec.Meta(ge=1, le=1_000_000), env("CHAT_MAX_CONVERSATIONS", help="conversations per visitor")
    ] = 500
    conversation_retention_days: Annotated[
        float,
        msgspec.Meta(ge=0.0, le=36_500.0),
        env(
            "CHAT_CONVERSATION_RETENTION_DAYS",
            help="a conversation with no new message for this many days is deleted, with its traces, ratings, "
            "links and the files no other conversation uses (checked hourly); `0` keeps conversations for good",
            read=retention_days,
        ),
    ] = 0.0
    anonymous_retention_days: Annotated[
        float,
        msgspec.Meta(ge=0.0, le=36_500.0),
        env(
            "CHAT_ANONYMOUS_RETENTION_DAYS",
            help="the same for anonymous visitors' conversations only (signed-in users' keep "
            "`CHAT_CONVERSATION_RETENTION_DAYS`); `0`: as `CHAT_CONVERSATION_RETENTION_DAYS` says",
            read=retention_days,
        ),
    ] = 0.0
    file_quota_bytes: Annotated[
        int,
        msgspec.Meta(ge=1, le=1 << 50),
        env("FILE_QUOTA_BYTES", help="bytes of files each visitor or user may keep"),
    ] = 500 * 1024 * 1024
    file_store_url: Annotated[
        str | None,
        env(
            "FILE_STORE_URL",
            help="`s3://bucket/prefix`: attached files' bytes go to an S3-compatible object store (credentials and "
            "`AWS_ENDPOINT_URL` as the AWS SDK reads them); the rest stays in the database",
            read=s3_url,
            default="none: in PostgreSQL",
        ),
    ] = None
