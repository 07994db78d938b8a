"""Which of threadline's own files one `POST /api/chat` runs, from a trace of the calls it makes: the list
docs/architecture.md quotes ("From route to bytes"). The demo model in memory mode, after one request that
warms every lazy import up; a second request, read to its end, is the one traced. The message is "hello"
(one model call), or the one given ("calculate 6*7" adds a tool call through the built-in MCP server).

    .venv/bin/python docs/route_files.py ["message"]
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from litestar.testing import AsyncTestClient
from threadline.http.app import create_app
from threadline.settings import load_settings

PACKAGE = Path(__file__).resolve().parents[1] / "backend" / "threadline"


async def traced_request(text: str) -> set[str]:
    settings = load_settings({"THREADLINE_CHAT_MODEL_PROVIDER": "demo", "CHAT_MEMORY_BACKEND": "memory"})
    files: set[str] = set()
    recording = threading.Event()
    body = {"messages": [{"role": "user", "parts": [{"type": "text", "text": text}]}]}

    loops: set[asyncio.AbstractEventLoop] = set()  # the app's, which may run in a thread of the test client's
    chores: set[asyncio.Task[Any]] = set()  # what the app runs beside requests (MCP reconnects, say): not counted

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event != "call" or not frame.f_code.co_filename.startswith(str(PACKAGE)):
            return
        if not recording.is_set():
            with contextlib.suppress(RuntimeError):
                loops.add(asyncio.get_running_loop())
        elif _current_task() not in chores:
            files.add(str(Path(frame.f_code.co_filename).relative_to(PACKAGE)))

    # Set before the client starts the threads the app runs in, which take it from here.
    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        async with AsyncTestClient(app=create_app(settings, ()), timeout=30) as client:
            await client.post("/api/chat", json=body)
            chores.update(*(asyncio.all_tasks(loop) for loop in loops))
            chores.discard(asyncio.current_task())
            recording.set()
            response = await client.post("/api/chat", json=body)
            recording.clear()
            assert response.status_code == 200, response.text
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return files


def _current_task() -> asyncio.Task[Any] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # a worker thread's call, made for the request
        return None


def main() -> int:
    files = sorted(asyncio.run(traced_request(sys.argv[1] if len(sys.argv) > 1 else "hello")))
    by_package: dict[str, list[str]] = {}
    for file in files:
        by_package.setdefault(file.split("/")[0] if "/" in file else ".", []).append(file)
    print(f"POST /api/chat runs {len(files)} of threadline's files:")
    for package, members in by_package.items():
        print(f"  {package:<16}{len(members):>3}  {', '.join(Path(member).name for member in members)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
