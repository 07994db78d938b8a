"""The files in process memory, for CHAT_MEMORY_BACKEND=memory (the protocol: storage/file_store.py)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from threadline.storage.file_store import StoredFile, file_of, storage_full


@dataclass
class MemoryFiles:
    """The same in process memory, for CHAT_MEMORY_BACKEND=memory."""

    quota: int = 1 << 50  # bytes of one owner's files
    files: dict[tuple[str, str], StoredFile] = field(default_factory=dict)  # (owner, id) →
    blobs: dict[str, bytes] = field(default_factory=dict)  # sha256 → bytes
    uses: set[tuple[str, str, str]] = field(default_factory=set)  # (owner, file id, conversation id)
    saved_at: dict[tuple[str, str], float] = field(default_factory=dict)  # (owner, id) → monotonic seconds

    async def save(self, owner: str, data: bytes, media_type: str, filename: str) -> StoredFile:
        file = file_of(data, media_type, filename)
        if (known := self.files.get((owner, file.id))) is not None:
            return known
        if sum(stored.size for (who, _), stored in self.files.items() if who == owner) + file.size > self.quota:
            raise storage_full(self.quota)
        self.blobs.setdefault(file.sha256, data)
        self.files[(owner, file.id)] = file
        self.saved_at[(owner, file.id)] = time.monotonic()
        return file

    async def get(self, owner: str, file_id: str) -> StoredFile | None:
        return self.files.get((owner, file_id))

    async def read(self, sha256: str) -> bytes | None:
        return self.blobs.get(sha256)

    async def use(self, owner: str, file_ids: list[str], conversation_id: str) -> None:
        self.uses.update((owner, file_id, conversation_id) for file_id in file_ids)

    async def delete_conversation(self, owner: str, conversation_id: str) -> None:
        used = {file_id for who, file_id, used_in in self.uses if (who, used_in) == (owner, conversation_id)}
        self.uses -= {(owner, file_id, conversation_id) for file_id in used}
        for file_id in used - {file_id for who, file_id, _ in self.uses if who == owner}:
            self._forget(owner, file_id)

    async def drop_unused(self, older_than: float) -> int:
        used = {(owner, file_id) for owner, file_id, _ in self.uses}
        cutoff = time.monotonic() - older_than
        old = [key for key, saved in self.saved_at.items() if saved < cutoff and key not in used]
        for owner, file_id in old:
            self._forget(owner, file_id)
        return len(old)

    def _forget(self, owner: str, file_id: str) -> None:
        self.saved_at.pop((owner, file_id), None)
        if (gone := self.files.pop((owner, file_id), None)) is None:
            return
        if not any(stored.sha256 == gone.sha256 for stored in self.files.values()):
            self.blobs.pop(gone.sha256, None)
