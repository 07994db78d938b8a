"""What each server holds before its first request: threadline (`threadline serve`, as `bench compare` starts it,
on a fresh PostgreSQL database) and the equal-work LangGraph + Postgres peer, each started afresh, its RSS read 2 s
after `/health` first answers. A benchmark, never a test: run it by hand

    python3 tasks.py bench idle [--rounds 5]

The rounds are interleaved, the order rotated; prints the median (min–max) of each, and threadline's excess.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from compare import python_peers, start
from stream_bench import bench_database, status_mb

SETTLE = 2.0  # seconds after /health: what start-up does last (the pool, the first checkpoint tables) is done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    measured: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as data_dir, bench_database(data_dir):
        servers = python_peers(data_dir)
        for round_ in range(args.rounds):
            for peer in servers[round_ % 2 :] + servers[: round_ % 2]:
                process, _port = start(peer, 2, 0)
                try:
                    time.sleep(SETTLE)
                    measured.setdefault(peer.name, []).append(status_mb(process.pid, "VmRSS"))
                finally:
                    process.terminate()
                    process.wait(timeout=60)
                print(f"round {round_ + 1}: {peer.name} {measured[peer.name][-1]:.1f} MB", flush=True)
    print("\n| server | idle RSS |\n|---|---|")
    for name, values in measured.items():
        print(f"| {name} | {statistics.median(values):.1f} MB ({min(values):.1f}–{max(values):.1f}) |")
    ours, peer = (statistics.median(measured[name]) for name in ("threadline", "LangGraph + Postgres"))
    print(f"\nthreadline holds {ours - peer:+.1f} MB more than the peer at idle")


if __name__ == "__main__":
    main()
