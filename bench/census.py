"""What a running answer holds: threadline and the equal-work LangGraph + PostgreSQL peer, counted inside each
process while 1000 streams are open.

    python3 tasks.py bench census [--streams 1000] [--after 6] [--delay 50] [--by-code] [--by-owner]

Each server runs under bench/census_hook.py, pinned to core 0 as in `bench compare` (threadline as `compare`
runs it: the demo model, no suggestions, no title call). After a warm-up it counts once idle, then opens the
streams (40 tokens 50 ms apart, as `compare`'s open streams) and counts again `--after` seconds later, while
they run. Printed per running answer (the HTTP requests open at that moment): RSS growth, blocks of Python's
allocator, objects the cycle collector tracks and what a full collection found unreachable; then the kinds of
object threadline holds more of than the peer, by size (with `--by-code`, each coroutine and function by the code it
runs, which says whose it is; with `--by-owner`, each dict, list, set and tuple by what holds it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

from compare import BENCH, Peer, equal_work_peer, start, threadline_settings
from raw_client import answers_at
from stream_bench import bench_database

OPEN = "RequestResponseCycle"  # uvicorn's, one per HTTP request being answered, in either server


def under_hook(peer: Peer) -> Peer:
    """The peer's server run by census_hook.py: `threadline`, or the peer's script."""
    return Peer(peer.name, [sys.executable, str(BENCH / "census_hook.py"), peer.command[-1]], peer.env)


async def counted(pid: int, out: Path, port: int, streams: int, after: float) -> tuple[dict, dict, int]:
    """The census idle and `after` seconds into `streams` streams, and how many of those failed."""

    async def census() -> dict:
        lines = len(out.read_text().splitlines()) if out.exists() else 0
        os.kill(pid, signal.SIGUSR1)
        while not out.exists() or len(out.read_text().splitlines()) == lines:
            await asyncio.sleep(0.05)
        return json.loads(out.read_text().splitlines()[-1])

    await answers_at(port, 40, 16, 32)  # warm-up
    idle = await census()
    running = asyncio.ensure_future(answers_at(port, 40, streams, streams))
    await asyncio.sleep(after)
    busy = await census()
    results = await running
    return idle, busy, sum(isinstance(result, str) for result in results)


def per_answer(idle: dict, busy: dict) -> dict:
    answers = max(busy["counts"].get(OPEN, 0) - idle["counts"].get(OPEN, 0), 1)
    kinds = set(busy["bytes"]) | set(idle["bytes"])
    return {
        "answers": answers,
        "rss_kb": (busy["rss_mb"] - idle["rss_mb"]) * 1024 / answers,
        "blocks": (busy["blocks"] - idle["blocks"]) / answers,
        "tracked": (busy["tracked"] - idle["tracked"]) / answers,
        "unreachable": busy["unreachable"],
        "idle_rss_mb": idle["rss_mb"],
        "count": {k: (busy["counts"].get(k, 0) - idle["counts"].get(k, 0)) / answers for k in kinds},
        "bytes": {k: (busy["bytes"].get(k, 0) - idle["bytes"].get(k, 0)) / answers for k in kinds},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--after", type=float, default=6.0, help="seconds into the streams to count at")
    parser.add_argument("--delay", type=float, default=50, help="ms between tokens (1000: both servers keep up)")
    parser.add_argument("--by-code", action="store_true", help="coroutines and functions by the code they run")
    parser.add_argument("--by-owner", action="store_true", help="dicts, lists, sets and tuples by what holds them")
    parser.add_argument("--rows", type=int, default=15, help="kinds listed, those threadline holds most more of first")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data_dir, bench_database(data_dir):
        threadline = threadline_settings(data_dir)
        chosen = [Peer("threadline", ["threadline"], threadline), *equal_work_peer(threadline.get("DATABASE_URL"))]
        found = {}
        for peer in chosen:
            out = Path(data_dir) / f"census-{len(found)}.jsonl"
            hook = {
                "CENSUS_OUT": str(out),
                "CENSUS_BY_CODE": "1" if args.by_code else "",
                "CENSUS_BY_OWNER": "1" if args.by_owner else "",
            }
            process, port = start(under_hook(peer), 40, args.delay, hook)
            try:
                idle, busy, errors = asyncio.run(counted(process.pid, out, port, args.streams, args.after))
            finally:
                process.terminate()
                process.wait(timeout=60)
            found[peer.name] = per_answer(idle, busy) | {"errors": errors}
            time.sleep(1)
    report(found, args.rows)


def report(found: dict[str, dict], rows: int) -> None:
    print("| server | running answers | failed | idle RSS | RSS per answer | allocator blocks | tracked objects |")
    print("|---|---|---|---|---|---|---|")
    for name, f in found.items():
        print(
            f"| {name} | {f['answers']} | {f['errors']} | {f['idle_rss_mb']:.0f} MB | {f['rss_kb']:.0f} KB "
            f"| {f['blocks']:.0f} | {f['tracked']:.0f} ({f['unreachable']} unreachable) |"
        )
    if len(found) < 2:
        return
    ours, peer = found["threadline"], found["LangGraph + Postgres"]
    extra = sorted(ours["bytes"], key=lambda k: peer["bytes"].get(k, 0) - ours["bytes"][k])[:rows]
    print("\nWhat threadline holds more of, per running answer (by `sys.getsizeof`):\n")
    print("| kind | threadline | peer | more |")
    print("|---|---|---|---|")
    for kind in extra:
        mine, theirs = ours["bytes"][kind], peer["bytes"].get(kind, 0)
        print(
            f"| {kind} | {ours['count'][kind]:.1f} ({mine / 1024:.1f} KB) "
            f"| {peer['count'].get(kind, 0):.1f} ({theirs / 1024:.1f} KB) | {(mine - theirs) / 1024:.1f} KB |"
        )


if __name__ == "__main__":
    main()
