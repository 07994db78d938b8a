"""storage/saver.py copies three methods of langgraph-checkpoint-postgres's AsyncPostgresSaver (3.2) to
encode in place; pyproject pins the minor release, and this fails when an upgrade changes what was copied."""

from __future__ import annotations

import hashlib
import inspect

import pytest
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

COPIED = {  # sha256 of each method's source in the release the copy follows
    "aput": "c685c7a8c88b7431",
    "aput_writes": "a2970ab04a7d7d5d",
    "_load_checkpoint_tuple": "507a19e7faee9d0d",
}


@pytest.mark.parametrize("name", COPIED)
def test_the_copied_saver_methods_are_the_librarys_own(name):
    source = inspect.getsource(getattr(AsyncPostgresSaver, name))
    assert hashlib.sha256(source.encode()).hexdigest()[:16] == COPIED[name], (
        f"AsyncPostgresSaver.{name} changed upstream: port the change to storage/saver.py, then update its hash"
    )
