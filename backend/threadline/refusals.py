"""Refusals the services raise without knowing about HTTP; http/errors.py answers each with its status and code."""

from __future__ import annotations


class Refused(Exception):
    """A request this server will not carry out, with a stable code and a message meant for people."""

    def __init__(
        self, status: int, code: str, message: str, field: str | None = None, *, retry_after: int | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.retry_after = retry_after


def busy() -> Refused:
    return Refused(
        409, "CONFLICT", "An answer is already streaming for you. Stop it or wait for it to finish, then send again."
    )
