"""Run a server with a census on SIGUSR1: bench/census.py starts each server through this.

    python bench/census_hook.py threadline          # as `python -m threadline serve`
    python bench/census_hook.py path/to/server.py   # any other server script

On each SIGUSR1 it appends one JSON line to the file CENSUS_OUT names: the process's RSS, the blocks of Python's
allocator, the objects the cycle collector tracks (counted and sized by type) and how many of them a full
collection finds unreachable. Counting walks every object, so the census pauses the server for a moment (well
under the first-token timeout at 1000 streams).

CENSUS_BY_CODE names each coroutine and function by the code it runs; CENSUS_BY_OWNER names each dict, list, set and
tuple by what holds it (the first other object found referring to it, or its holder's holder): `dict of
AsyncPregelLoop` is a loop's attributes, `set of TurnTranslator` a translator's sets.
"""

from __future__ import annotations

import gc
import json
import os
import runpy
import signal
import sys
from collections import Counter
from collections.abc import Callable
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


CONTAINERS = (dict, list, set, tuple)


def owners_of_containers(objects: list[object], name: Callable[[object], str]) -> dict[int, str]:
    """For each container (by id), the name of what holds it: another object referring to it, or, for a container
    held by containers only, what holds those."""
    owners: dict[int, str] = {}
    owned: list[object] = []  # containers named, whose own containers are named after the same holder
    for item in objects:
        if type(item) not in CONTAINERS:
            for held in gc.get_referents(item):
                if type(held) in CONTAINERS and id(held) not in owners:
                    owners[id(held)] = name(item)
                    owned.append(held)
    while owned:
        container = owned.pop()
        for held in gc.get_referents(container):
            if type(held) in CONTAINERS and id(held) not in owners:
                owners[id(held)] = owners[id(container)]
                owned.append(held)
    return owners


def census(*_: object) -> None:
    rss, blocks = rss_mb(), sys.getallocatedblocks()  # before the census allocates its own
    objects = gc.get_objects()
    counts: Counter[str] = Counter()
    sizes: Counter[str] = Counter()
    name = kind_by_code if os.environ.get("CENSUS_BY_CODE") else lambda item: type(item).__qualname__
    owners = owners_of_containers(objects, name) if os.environ.get("CENSUS_BY_OWNER") else {}
    for item in objects:
        kind = name(item)
        if id(item) in owners:
            kind = f"{kind} of {owners[id(item)]}"
        counts[kind] += 1
        sizes[kind] += sys.getsizeof(item)
    tracked = len(objects)
    del objects, owners
    line = {
        "rss_mb": rss,
        "blocks": blocks,
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
