"""PostgreSQL without setting one up: the pgserver wheel's server, in the data directory (threadline[embedded])."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def embedded_database(data_dir: Path) -> Any:
    """Start (or reuse) a PostgreSQL server from the pgserver wheel, keeping its files in data_dir. Its
    `cleanup()` stops it unless another process still uses it (or it was running before we came)."""
    import pgserver

    return pgserver.get_server(data_dir / "postgres", cleanup_mode="stop")  # type: ignore[attr-defined]
