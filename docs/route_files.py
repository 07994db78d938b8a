"""Which of threadline's own files one `POST /api/chat` runs, and which way its calls go, from a trace of the
calls it makes: what docs/architecture.md quotes ("From route to bytes"). The demo model in memory mode, after
one request that warms every lazy import up; a second request, read to its end, is the one traced. The message is
"hello" (one model call), or the one given ("calculate 6*7" adds a tool call through the built-in MCP server).

Direction is read against the layers contract in pyproject.toml: a call from a file of one unit straight into a
file of a unit above it is a call up (a callback a lower layer was handed, say; reading the answer's event stream,
a generator, is not a call); a pair of units that call each
other both ways is listed; an HTTP re-entry is a request that enters threadline's HTTP edge from within the answer
(the built-in tools are called over HTTP in process).

    .venv/bin/python docs/route_files.py ["message"]
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import re
import sys
import threading
import tomllib
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

from litestar.testing import AsyncTestClient
from threadline.http.app import create_app
from threadline.settings import load_settings

PACKAGE = Path(__file__).resolve().parents[1] / "backend" / "threadline"
PYPROJECT = PACKAGE.parents[1] / "pyproject.toml"
ENTRY = ("http/identity.py", "__call__")  # where every request enters threadline's routes
ANSWER_UNITS = ("answers", "agent", "mcp")


def layer_of() -> dict[str, int]:
    """Each unit's place in the layers contract, 0 the top."""
    contracts = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]
    (layers,) = [contract["layers"] for contract in contracts if contract["type"] == "layers"]
    return {
        name.removeprefix("threadline."): index
        for index, layer in enumerate(layers)
        for name in re.split(r"\s*\|\s*", layer)
    }


def unit_of(file: str) -> str:
    return file.split("/")[0] if "/" in file else file.removesuffix(".py")


class Calls:
    """What the traced request ran: its files, the calls between units (by caller and callee file) and how many
    requests entered the HTTP edge from within the answer."""

    def __init__(self) -> None:
        self.files: set[str] = set()
        self.between: Counter[tuple[str, str]] = Counter()
        self.reentries = 0

    def saw(self, frame: FrameType) -> None:
        file = str(Path(frame.f_code.co_filename).relative_to(PACKAGE))
        self.files.add(file)
        caller = frame.f_back
        stream = frame.f_code.co_flags & (inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR)  # iterated, not called
        if not stream and caller is not None and caller.f_code.co_filename.startswith(str(PACKAGE)):
            by = str(Path(caller.f_code.co_filename).relative_to(PACKAGE))
            if unit_of(by) != unit_of(file):
                self.between[(by, file)] += 1
        if (file, frame.f_code.co_name) == ENTRY and _within_an_answer(frame):
            self.reentries += 1


def _within_an_answer(frame: FrameType) -> bool:
    outer = frame.f_back
    while outer is not None:
        name = outer.f_code.co_filename
        if name.startswith(str(PACKAGE)) and unit_of(str(Path(name).relative_to(PACKAGE))) in ANSWER_UNITS:
            return True
        outer = outer.f_back
    return False


async def traced_request(text: str) -> Calls:
    settings = load_settings({"THREADLINE_CHAT_MODEL_PROVIDER": "demo", "CHAT_MEMORY_BACKEND": "memory"})
    calls = Calls()
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
            calls.saw(frame)

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
    return calls


def _current_task() -> asyncio.Task[Any] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # a worker thread's call, made for the request
        return None


def main() -> int:
    calls = asyncio.run(traced_request(sys.argv[1] if len(sys.argv) > 1 else "hello"))
    files = sorted(calls.files)
    by_package: dict[str, list[str]] = {}
    for file in files:
        by_package.setdefault(file.split("/")[0] if "/" in file else ".", []).append(file)
    print(f"POST /api/chat runs {len(files)} of threadline's files in {len(by_package)} packages:")
    for package, members in by_package.items():
        print(f"  {package:<16}{len(members):>3}  {', '.join(Path(member).name for member in members)}")
    layers = layer_of()
    up = sorted(pair for pair in calls.between if layers[unit_of(pair[1])] < layers[unit_of(pair[0])])
    units = {(unit_of(by), unit_of(to)) for by, to in calls.between}
    both = sorted({tuple(sorted(pair)) for pair in units if pair[::-1] in units})
    print(f"calls up the layer order: {len(up)}")
    for by, to in up:
        print(f"  {by} -> {to}")
    print(f"unit pairs calling each other both ways: {len(both)}  {', '.join(f'{a} <-> {b}' for a, b in both)}")
    print(f"HTTP re-entries from within the answer: {calls.reentries}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
