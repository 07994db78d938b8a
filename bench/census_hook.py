"""Run a server with a census on SIGUSR1: bench/census.py starts each server through this.

    python bench/census_hook.py threadline          # as `python -m threadline serve`
    python bench/census_hook.py path/to/server.py   # any other server script

On each SIGUSR1 it appends one JSON line to the file CENSUS_OUT names: the process's RSS, the blocks of Python's
allocator, the objects the cycle collector tracks (counted and sized by type) and how many of them a full
collection finds unreachable. Counting walks every object, so the census pauses the server for a moment (well
under the first-token timeout at 1000 streams).
"""

from __future__ import annotations

import gc
import json
import os
import runpy
import signal
import sys
from collections import Counter
from pathlib import Path
from types import CoroutineType, FunctionType


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def kind_by_code(item: object) -> str:
    """A coroutine or a function by the code it runs (its module and qualified name), anything else by its type."""
    kind = type(item)
    if kind is CoroutineType:
        code = item.cr_code  # type: ignore[attr-defined]
    elif kind is FunctionType:
        code = item.__code__  # type: ignore[attr-defined]
    else:
        return kind.__qualname__
    module = Path(code.co_filename).with_suffix("").parts[-2:]
    return f"{kind.__qualname__} {'/'.join(module)}:{code.co_qualname}"


def census(*_: object) -> None:
    objects = gc.get_objects()
    counts: Counter[str] = Counter()
    sizes: Counter[str] = Counter()
    by_code = bool(os.environ.get("CENSUS_BY_CODE"))
    for item in objects:
        kind = kind_by_code(item) if by_code else type(item).__qualname__
        counts[kind] += 1
        sizes[kind] += sys.getsizeof(item)
    tracked = len(objects)
    del objects
    line = {
        "rss_mb": rss_mb(),
        "blocks": sys.getallocatedblocks(),
        "tracked": tracked,
        "counts": dict(counts),
        "bytes": dict(sizes),
        "unreachable": gc.collect(),
    }
    with open(os.environ["CENSUS_OUT"], "a") as out:
        out.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    signal.signal(signal.SIGUSR1, census)
    target = sys.argv[1]
    if target == "threadline":
        sys.argv = ["threadline", "serve"]
        runpy.run_module("threadline", run_name="__main__", alter_sys=True)
    else:
        sys.argv = sys.argv[1:]
        runpy.run_path(target, run_name="__main__")
