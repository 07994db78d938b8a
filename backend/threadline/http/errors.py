"""Every error leaves as `{"error": {"code", "message", "details"?}}` with the right status, never a trace."""

from __future__ import annotations

import logging
import re
from typing import Any

import psycopg
from litestar import Request, Response
from litestar.connection import ASGIConnection
from litestar.exceptions import HTTPException, ValidationException
from litestar.handlers import BaseRouteHandler, HTTPRouteHandler
from litestar.openapi import ResponseSpec
from litestar.status_codes import HTTP_500_INTERNAL_SERVER_ERROR
from litestar.types import ExceptionHandlersMap

from threadline.http.schemas import MAX_BODY_BYTES, ErrorBody, ErrorDetail, ErrorInfo
from threadline.refusals import RefusalCode, Refused

AnyRequest = Request[Any, Any, Any]

log = logging.getLogger(__name__)

_CODES = {
    400: "VALIDATION_ERROR",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    406: "NOT_ACCEPTABLE",
    409: "CONFLICT",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
    429: "RATE_LIMITED",
}


class ApiError(HTTPException):
    """An error we answer on purpose: status, stable code, a message meant for people."""

    def __init__(
        self,
        status_code: int,
        code: str,
        message: str,
        details: list[ErrorDetail] | None = None,
        *,
        headers: dict[str, str] | None = None,
        retry_after: int | None = None,
    ):
        super().__init__(status_code=status_code, detail=message, headers=headers)
        self.code = code
        self.details = details or []
        self.retry_after = retry_after


_DESCRIPTIONS = {
    400: "The request is not valid",
    401: "The operators' token is missing or wrong",
    403: "Not enabled on this server",
    404: "No such conversation (or not yours)",
    406: "None of the wires asked for is supported",
    409: "An answer is already streaming, none is left to stop, or an A/B comparison waits for a vote",
    413: f"The body is over {MAX_BODY_BYTES // 1_048_576} MB, or a storage limit is reached "
    "(CONVERSATION_FULL, TOO_MANY_CONVERSATIONS)",
    429: "Over the rate limit; Retry-After says when to try again",
    500: "The model failed before anything was streamed",
    503: "The database is unavailable for a moment",
}


def error_responses(*statuses: int) -> dict[int, ResponseSpec]:
    """OpenAPI entries for the errors an endpoint can answer, all shaped as ErrorBody."""
    return {status: ResponseSpec(data_container=ErrorBody, description=_DESCRIPTIONS[status]) for status in statuses}


async def json_only(connection: ASGIConnection[Any, Any, Any, Any], _handler: BaseRouteHandler) -> None:
    """Guard for endpoints that read a JSON body: anything else is refused before it is parsed. Async, because
    Litestar runs a synchronous guard in a worker thread, one hop per request."""
    media_type = connection.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type != "application/json":
        raise ApiError(
            400,
            "VALIDATION_ERROR",
            "Invalid request: the body must be JSON (Content-Type: application/json)",
            [ErrorDetail("content-type", f"expected application/json, got {media_type or 'nothing'}")],
        )


def not_found(what: str = "Conversation") -> ApiError:
    return ApiError(404, "NOT_FOUND", f"{what} not found")


def _response(status: int, info: ErrorInfo, headers: dict[str, str] | None = None) -> Response[ErrorBody]:
    return Response(ErrorBody(error=info), status_code=status, headers=headers)


MISSING_FIELD = re.compile(r"missing required field `([^`]+)`")


def _field(key: str | None, message: str = "") -> str:
    """The field a validation error is about; a missing one is named, not its parent."""
    field = (key or "body").removeprefix("$.").removeprefix("$")
    if missing := MISSING_FIELD.search(message):
        field = f"{field}.{missing[1]}" if field not in ("", "body", "data") else missing[1]
    return "body" if field in ("", "data") else field


def too_large_body(limit: int) -> ApiError:
    return ApiError(413, "PAYLOAD_TOO_LARGE", f"The request body is too large (the limit is {limit // 1_048_576} MB).")


def handle_http_exception(request: AnyRequest, exc: HTTPException) -> Response[ErrorBody]:
    if isinstance(exc, ApiError):
        return _response(exc.status_code, ErrorInfo(exc.code, exc.detail, exc.details, exc.retry_after), exc.headers)
    if isinstance(exc, ValidationException) or exc.status_code == 400:
        details = (
            [
                ErrorDetail(field=_field(item.get("key"), str(item.get("message"))), message=str(item.get("message")))
                for item in exc.extra or []
                if isinstance(item, dict)
            ]
            if isinstance(exc.extra, list)
            else []
        )
        if not details:  # the body could not be decoded at all
            details = [ErrorDetail(field="body", message=exc.detail)]
        message = details[0].message if len(details) == 1 else "The request is not valid"
        return _response(400, ErrorInfo("VALIDATION_ERROR", f"Invalid request: {message}", details))
    if exc.status_code == 413:  # the route's own limit: a message with files may be larger
        handler = request.scope.get("route_handler")
        limit = handler.resolve_request_max_body_size() if isinstance(handler, HTTPRouteHandler) else None
        info = too_large_body(limit or MAX_BODY_BYTES)
        return _response(413, ErrorInfo(info.code, info.detail))
    status = exc.status_code if exc.status_code < 500 else HTTP_500_INTERNAL_SERVER_ERROR
    code = _CODES.get(status, "INTERNAL_ERROR")
    message = exc.detail if status < 500 else "Something went wrong on our side. Please try again."
    return _response(status, ErrorInfo(code, message), exc.headers)


STATUS_OF: dict[RefusalCode, int] = {
    "VALIDATION_ERROR": 400,
    "UNAUTHORIZED": 401,
    "FORBIDDEN": 403,
    "NOT_FOUND": 404,
    "CONFLICT": 409,
    "TOO_MANY_ANSWERS": 409,
    "VOTE_REQUIRED": 409,
    "CONVERSATION_FULL": 413,
    "TOO_MANY_CONVERSATIONS": 413,
    "FILES_TOO_LARGE": 413,
    "STORAGE_FULL": 413,
    "REQUEST_TIMEOUT": 408,
    "RATE_LIMITED": 429,
    "OVER_CAPACITY": 503,
    "STOP_UNCONFIRMED": 503,
}


def handle_refused(request: AnyRequest, exc: Refused) -> Response[ErrorBody]:
    """A refusal's code gives its status: the services below know nothing of HTTP."""
    status = STATUS_OF[exc.code]
    details = [ErrorDetail(exc.field, exc.message.removeprefix("Invalid request: "))] if exc.field else []
    headers = {"retry-after": str(exc.retry_after)} if exc.retry_after is not None else {}
    if status == 408:
        headers["connection"] = "close"  # the rest of a late body must not be read as the next request
    if exc.code == "UNAUTHORIZED":  # RFC 6750: what a client with a bearer token needs to know
        headers["www-authenticate"] = 'Bearer error="invalid_token"' if "bearer" in exc.message else "Bearer"
    return _response(status, ErrorInfo(exc.code, exc.message, details, exc.retry_after), headers)


def handle_undecodable_body(request: AnyRequest, exc: Exception) -> Response[ErrorBody]:
    """msgspec raises these while decoding a body: bytes that are not UTF-8, or JSON nested too deeply."""
    why = "it is not valid UTF-8" if isinstance(exc, UnicodeDecodeError) else "it is nested too deeply"
    return _response(
        400,
        ErrorInfo("VALIDATION_ERROR", f"Invalid request: the body cannot be read: {why}", [ErrorDetail("body", why)]),
    )


def handle_database_error(request: AnyRequest, exc: Exception) -> Response[ErrorBody]:
    log.error("database unavailable on %s %s: %s", request.method, request.url.path, exc)
    return _response(
        503,
        ErrorInfo("DATABASE_ERROR", "Conversations are unavailable for a moment. Please try again."),
        {"retry-after": "5"},
    )


def handle_unexpected(request: AnyRequest, exc: Exception) -> Response[ErrorBody]:
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return _response(500, ErrorInfo("INTERNAL_ERROR", "Something went wrong on our side. Please try again."))


EXCEPTION_HANDLERS: ExceptionHandlersMap = {
    HTTPException: handle_http_exception,
    Refused: handle_refused,
    UnicodeDecodeError: handle_undecodable_body,
    RecursionError: handle_undecodable_body,
    psycopg.Error: handle_database_error,
    Exception: handle_unexpected,
}
