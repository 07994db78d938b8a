"""Refusals the services raise without knowing about HTTP; the HTTP edge (http/errors.py) gives each code its
status, and the docs' error table is generated from both."""

from __future__ import annotations

from typing import Literal

RefusalCode = Literal[
    "VALIDATION_ERROR",
    "UNAUTHORIZED",
    "FORBIDDEN",
    "NOT_FOUND",
    "CONFLICT",
    "TOO_MANY_ANSWERS",
    "VOTE_REQUIRED",
    "CONVERSATION_FULL",
    "TOO_MANY_CONVERSATIONS",
    "FILES_TOO_LARGE",
    "STORAGE_FULL",
    "REQUEST_TIMEOUT",
    "RATE_LIMITED",
    "OVER_CAPACITY",
    "STOP_UNCONFIRMED",
]


class Refused(Exception):
    """A request this server will not carry out, with a stable code and a message meant for people."""

    def __init__(
        self, code: RefusalCode, message: str, field: str | None = None, *, retry_after: int | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field
        self.retry_after = retry_after


def busy() -> Refused:
    """An answer runs in the conversation already (or, on a wire of one stream at a time, anywhere)."""
    return Refused(
        "CONFLICT",
        "An answer is already streaming in this conversation. Stop it or wait for it to finish, then send again.",
    )


def too_many_answers(most: int) -> Refused:
    return Refused(
        "TOO_MANY_ANSWERS",
        f"{most} answers are already streaming for you (the most at once). Stop one or wait for one to finish.",
    )


def not_found(what: str = "Conversation") -> Refused:
    """Another's conversation (or message, or comparison) is answered exactly like one that does not exist."""
    return Refused("NOT_FOUND", f"{what} not found")


def invalid(field: str, message: str) -> Refused:
    return Refused("VALIDATION_ERROR", f"Invalid request: {message}", field)
