"""The same answer to each family of frontends: `POST /api/chat` (the UI Message Stream `useChat` reads) against
`POST /api/ag-ui` (AG-UI events, with the stored conversation's snapshot every run opens with).

    python3 tasks.py bench frontends [--rounds 5] [--requests 256] [--concurrency 64]

One server (the demo model at zero delay, 200-token answers, PostgreSQL) on core 0, this load generator on core 1;
the endpoints take turns, round after round, in alternating order. Prints, per endpoint, the median over rounds
(with min–max) of answers/s and server CPU per answer, and AG-UI's CPU against the chat's.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time

from raw_client import AG_UI, CHAT, Endpoint, answers_at
from stream_bench import bench_database, cpu_seconds, start_server
from threadline_testing.ports import free_port

TOKENS = 200
SUGGESTIONS_OFF = '[{"id":"demo","provider":"demo","model":"demo","suggestions":false}]'


def one_round(port: int, pid: int, endpoint: Endpoint, concurrency: int, requests: int) -> tuple[float, float]:
    """(answers/s, server CPU ms per answer) of one round on `endpoint`; every answer must arrive whole."""
    cpu, wall = cpu_seconds(pid), time.perf_counter()
    results = asyncio.run(answers_at(port, TOKENS, concurrency, requests, endpoint=endpoint))
    wall, cpu = time.perf_counter() - wall, cpu_seconds(pid) - cpu
    assert not (failed := [result for result in results if isinstance(result, str)]), failed[:3]
    return len(results) / wall, cpu / len(results) * 1000


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=256)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    port, endpoints = free_port(), {"chat": CHAT, "ag-ui": AG_UI}
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in endpoints}
    with tempfile.TemporaryDirectory() as data_dir, bench_database(data_dir):
        server = start_server(port, data_dir, CHAT_PROFILES=SUGGESTIONS_OFF, CHAT_GENERATED_TITLES="false")
        try:
            for endpoint in endpoints.values():  # warm-up: imports, pools, caches
                one_round(port, server.pid, endpoint, 8, 32)
            for number in range(args.rounds):
                order = list(endpoints) if number % 2 == 0 else list(reversed(endpoints))
                for name in order:
                    figures[name].append(one_round(port, server.pid, endpoints[name], args.concurrency, args.requests))
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"c={args.concurrency}, {args.requests} answers of {TOKENS} tokens per round, {args.rounds} rounds")
    print("| endpoint | answers/s | server CPU per answer (ms) |\n|---|---|---|")
    for name, rounds in figures.items():
        print(f"| {name} | {spread([r[0] for r in rounds])} | {spread([r[1] for r in rounds])} |")
    ratio = statistics.median(r[1] for r in figures["ag-ui"]) / statistics.median(r[1] for r in figures["chat"])
    print(f"AG-UI's CPU per answer: {ratio:.2f} × the chat's")


if __name__ == "__main__":
    main()
