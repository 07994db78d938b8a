"""The files a new message carries, as `useChat` sends them (`file` parts with a data URL), or by the URL of
one uploaded before (`/api/files/{id}`, the caller's own): checked, all of them; the answer service stores
the new ones only once the answer is accepted, so a refused message stores nothing."""

from __future__ import annotations

import re
from collections.abc import Sequence

from threadline import mount_path
from threadline.conversations.attachments import CheckedFile, checked_file, data_url_bytes, too_large
from threadline.http.dependencies import ChatAllowance
from threadline.http.rate_limit import RateLimit
from threadline.http.schemas import UIMessagePart
from threadline.refusals import Refused, invalid, not_found
from threadline.runtime import Services
from threadline.storage.file_store import StoredFile

FILE_URL = re.compile(r"^/api/files/([0-9a-f]{32})(?!\n)$")


async def spend_file_bytes(services: Services, limit: RateLimit | None, key: str, size: int) -> None:
    """Count new files' bytes against FILE_BYTES_PER_DAY (`limit`) for `key` (the caller's address, or a signed-in
    user): an anonymous id is free to make, so a visitor's own quota alone does not bound an address."""
    if size and limit is not None and (wait := await limit.hit(key, size)) is not None:
        most = services.settings.limits.file_bytes_per_day
        raise Refused(
            "RATE_LIMITED",
            f"More than {most:,} bytes of files were sent from here today. Try again in {int(wait)} s.",
            retry_after=int(wait),
        )


async def attached_files(
    services: Services, owner: str, parts: Sequence[UIMessagePart], allowance: ChatAllowance
) -> tuple[StoredFile | CheckedFile, ...]:
    """The message's files: the caller's uploads, and new files checked but not yet stored; refused when any
    one is refused, or when the new ones would take `key` (see `spend_file_bytes`) over its daily bytes."""
    indexed = [(index, part) for index, part in enumerate(parts) if part.type == "file"]
    if not indexed:
        return ()
    limits = services.file_limits
    if len(indexed) > limits.max_count:
        raise too_large(f"A message may carry {limits.max_count} files at most (this one has {len(indexed)}).")
    found: list[StoredFile | CheckedFile] = []
    for index, part in indexed:
        field, url = f"messages[-1].parts[{index}]", part.url or ""
        if match := FILE_URL.match(mount_path.local(url)):
            if (stored := await services.storage.files.get(owner, match[1])) is None:
                raise not_found("File")
            found.append(stored)
        elif url.startswith("data:"):
            data, declared = data_url_bytes(url, field)
            found.append(await checked_file(data, part.media_type or declared, part.filename, limits, field))
        elif url.startswith(("http://", "https://")):
            raise invalid(field, "this server does not fetch files from other addresses: send the file itself")
        else:
            raise invalid(field, "a file part's url must be a data: URL or /api/files/<id>")
    total = sum(item.size if isinstance(item, StoredFile) else len(item.data) for item in found)
    if total > limits.max_message_bytes:
        raise too_large(f"The files of one message may have {limits.max_message_bytes:,} bytes at most.")
    new_bytes = sum(len(item.data) for item in found if isinstance(item, CheckedFile))
    await spend_file_bytes(services, allowance.limits.file_bytes, allowance.key, new_bytes)
    return tuple(found)
