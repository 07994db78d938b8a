"""Attached files: `POST /api/files` uploads one before the message that uses it is sent (the page does, to
show progress), `GET /api/files/{id}` gives it back to its owner only. Files are content-addressed, so a
response may be cached for good; it is served so that no browser runs it: `nosniff`, a sandboxing CSP, and
`Content-Disposition: attachment` for everything but images."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.params import Parameter, QueryParameter

from threadline.conversations.attachments import checked_file
from threadline.http.attachments import spend_file_bytes
from threadline.http.dependencies import Ctx, limit_key
from threadline.http.errors import error_responses
from threadline.http.schemas import MAX_FILES_BODY_BYTES
from threadline.refusals import not_found
from threadline.runtime import Services
from threadline.storage.file_store import StoredFile

FileId = Parameter(pattern=r"^[0-9a-f]{32}(?!\n)$", description="The file's id (the start of its SHA-256)")
SANDBOX = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox"


class Uploaded(msgspec.Struct, rename="camel"):
    id: str
    url: str  # what a `file` part of a message names it by
    media_type: str
    filename: str
    size: int

    @classmethod
    def of(cls, file: StoredFile) -> Uploaded:
        return cls(file.id, file.url, file.media_type, file.filename, file.size)


class FileController(Controller):
    path = "/api/files"

    @post(
        "/",
        status_code=201,
        request_max_body_size=MAX_FILES_BODY_BYTES,
        responses=error_responses(400, 413, 503),
        summary="Upload a file for a message: the body is its bytes, `Content-Type` its type, `?filename=` its name",
    )
    async def upload(
        self,
        request: Request,  # type: ignore[type-arg]
        ctx: Ctx,
        filename: Annotated[str | None, QueryParameter(max_length=1000)] = None,
    ) -> Uploaded:
        """The same checks as a file sent inside a message; the same bytes again give the same file. Send its
        `url` as a `file` part's url. A file no message uses is not kept for good."""
        data = await request.body()
        checked = await checked_file(
            data, request.headers.get("content-type", ""), filename, ctx.services.file_limits, "body"
        )
        await spend_file_bytes(ctx.services, ctx.limits.file_bytes, limit_key(request, ctx.limits), len(checked.data))
        stored = await ctx.services.storage.files.save(
            ctx.client_id, checked.data, checked.media_type, checked.filename
        )
        return Uploaded.of(stored)

    @get(
        "/{file_id:str}",
        responses=error_responses(400, 404, 503),
        summary="One of your files, as it was sent",
        media_type="application/octet-stream",
    )
    async def download(self, ctx: Ctx, file_id: str = FileId) -> Response[bytes]:
        return await file_response(ctx.services, ctx.client_id, file_id)


async def file_response(services: Services, owner: str, file_id: str) -> Response[bytes]:
    """One of `owner`'s files as it was sent, shown by the browser only where that is safe."""
    file = await services.storage.files.get(owner, file_id)
    data = await services.storage.files.read(file.sha256) if file is not None else None
    if file is None or data is None:
        raise not_found("File")
    disposition = "inline" if file.media_type.startswith("image/") else "attachment"
    return Response(
        data,
        media_type=file.media_type,
        headers={
            "content-disposition": f"{disposition}; filename*=UTF-8''{quote(file.filename)}",
            "content-security-policy": SANDBOX,
            "cache-control": "private, max-age=31536000, immutable",
        },
    )
