"""Every error code a client can meet, with its status and when it happens: the docs' error table is
generated from this list, and a test fails when the code raises one it does not hold."""

from __future__ import annotations

from dataclasses import dataclass

from threadline.answers import failures


@dataclass(frozen=True)
class ErrorCode:
    status: int
    code: str
    when: str


ERROR_CODES: tuple[ErrorCode, ...] = (
    ErrorCode(
        400,
        "VALIDATION_ERROR",
        "a body that is not JSON (`Content-Type` must be `application/json`), malformed JSON, a body that is not "
        "UTF-8 or is nested too deeply, an empty or whitespace-only message, one over 10,000 characters, one "
        "holding a NUL character (U+0000) or an unpaired surrogate (PostgreSQL cannot store them), a malformed id "
        "(letters, digits, `_` and `-`, 1–128, nothing after), a path holding a NUL, a hosted agent's input without "
        "a key it needs (its input schema's, with no default) that no message of the conversation gave; `details` "
        "names the field",
    ),
    ErrorCode(400, "UNKNOWN_ACTION", "`POST /api/actions` names no server action"),
    ErrorCode(400, "NOT_SUGGESTED", "`POST /api/actions` with an action (or data) the answer did not suggest"),
    ErrorCode(
        401,
        "UNAUTHORIZED",
        "an operator endpoint without the operators' token or role; with `AUTH_ISSUER`, a "
        "bearer token that is not the provider's or not valid (signature, algorithm, issuer, audience, expiry), "
        "or no token where `AUTH_ANONYMOUS=deny`; `WWW-Authenticate` says so",
    ),
    ErrorCode(
        403,
        "FORBIDDEN",
        "an operator endpoint on a server without `CHAT_ADMIN_TOKEN` or `AUTH_ADMIN_ROLE`, or for a signed-in "
        "user without that role; a claim with an anonymous token this server did not issue, or one another "
        "account already claimed",
    ),
    ErrorCode(404, "NOT_FOUND", "an unknown conversation (or message, comparison, trace, profile), or someone else's"),
    ErrorCode(406, "NOT_ACCEPTABLE", "none of the wires the request asks for (`Accept`, `?protocol=`)"),
    ErrorCode(
        408,
        "REQUEST_TIMEOUT",
        "the request body did not arrive within `THREADLINE_BODY_TIMEOUT` (the connection is closed)",
    ),
    ErrorCode(
        409,
        "CONFLICT",
        "an answer is already streaming in this conversation (across all server processes; `multitaskStrategy` "
        "may stop it instead), also when claiming the visitor's conversations; a stop request when no answer is "
        "running; approvals or a reply that no longer match what waits; another agent than a started "
        "conversation's, or a conversation whose agent is no longer served",
    ),
    ErrorCode(
        409,
        "TOO_MANY_ANSWERS",
        "the visitor has `CHAT_ANSWERS_PER_VISITOR` answers streaming in other conversations already",
    ),
    ErrorCode(409, "VOTE_REQUIRED", "a new message while the conversation's A/B comparison waits for a vote"),
    ErrorCode(413, "PAYLOAD_TOO_LARGE", "a body over 1 MB, not counting the bytes of a message's files"),
    ErrorCode(413, "CONVERSATION_FULL", "the conversation has `CHAT_MAX_TURNS` messages"),
    ErrorCode(413, "TOO_MANY_CONVERSATIONS", "the visitor has `CHAT_MAX_CONVERSATIONS` conversations"),
    ErrorCode(
        413,
        "FILES_TOO_LARGE",
        "an attached file over `FILE_MAX_BYTES`, more files than `FILE_MAX_COUNT` or more bytes than "
        "`FILE_MAX_MESSAGE_BYTES` in one message",
    ),
    ErrorCode(413, "STORAGE_FULL", "the visitor's files would take more than `FILE_QUOTA_BYTES`"),
    ErrorCode(415, "UNSUPPORTED_MEDIA_TYPE", "a body of a media type the endpoint does not read"),
    ErrorCode(
        429,
        "RATE_LIMITED",
        "over `CHAT_RATE_LIMIT`, `CHAT_STREAM_RATE_LIMIT` or `API_RATE_LIMIT`, or a second seed 004 stream; "
        "`Retry-After` and `retryAfter` (seconds) say when to try again",
    ),
    *(
        ErrorCode(500, failure.code, f"the model failed before anything was streamed: “{failure.message}”")
        for failure in failures.FAILURES
    ),
    ErrorCode(
        500,
        "AGENT_ERROR",
        "your own agent's code raised an exception (THREADLINE_GRAPH); the message has the answer's trace id, "
        "the log and the trace the exception",
    ),
    ErrorCode(500, "ACTION_FAILED", "a server action raised an error"),
    ErrorCode(500, "INTERNAL_ERROR", "anything unexpected (the log has the details; the client never does)"),
    ErrorCode(503, "DATABASE_ERROR", "reading or deleting conversations while PostgreSQL is down"),
    ErrorCode(
        503,
        "OVER_CAPACITY",
        "over `THREADLINE_MAX_CONNECTIONS` requests at work; more PDFs being checked than a process holds at once "
        "(2 checks, 8 waiting): `Retry-After` says when to try again",
    ),
    ErrorCode(
        503,
        "STOP_UNCONFIRMED",
        "a stop request for an answer running in another server process that did not confirm the stop in time",
    ),
)


def reference_rows() -> list[tuple[str, str, str]]:
    """The docs' error table: status, code, when."""
    return [(str(error.status), f"`{error.code}`", error.when) for error in ERROR_CODES]
