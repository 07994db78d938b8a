"""What watching answers costs: traces not kept vs stored in PostgreSQL vs stored and exported over OTLP.

Each configuration runs the stream benchmark's load (200-token answers, demo model at zero delay, server
on core 0, this load generator on core 1) at concurrency 1 and 64, in interleaved rounds, each round on a
fresh server; the OTLP configuration exports to a local stand-in collector that decodes every span.
Prints each round, then per configuration the median and the spread (min–max) over rounds.
A benchmark, never a test: run it by hand

    python3 tasks.py bench observability [--rounds 3] [--requests 128]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time

from stream_bench import bench_database, cpu_seconds, ms, round_at, start_server
from threadline_testing.collectors import start_collector
from threadline_testing.ports import free_port

CONFIGURATIONS = {
    "not kept": {"CHAT_TRACE_RETENTION_DAYS": "0"},
    "stored": {},
    "stored + OTLP": {},  # the collector's address is added when it is running
}


def measure(env: dict[str, str], requests: int, tokens: int) -> dict[str, float]:
    port = free_port()
    with tempfile.TemporaryDirectory() as data_dir, bench_database(data_dir):
        server = start_server(port, data_dir, **env)
        try:
            asyncio.run(round_at(port, 8, 32, tokens))  # warm-up: imports, pools, caches
            figures: dict[str, float] = {}
            for concurrency in (1, 64):
                cpu, wall = cpu_seconds(server.pid), time.perf_counter()
                results = asyncio.run(round_at(port, concurrency, requests, tokens))
                wall = time.perf_counter() - wall
                first = [row[1] for row in results]
                figures[f"c={concurrency} first delta p50 ms"] = ms(first, 50)
                figures[f"c={concurrency} answers/s"] = len(results) / wall
                figures[f"c={concurrency} server CPU/answer ms"] = (cpu_seconds(server.pid) - cpu) / len(results) * 1000
            return figures
        finally:
            server.terminate()
            server.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=128, help="answers per concurrency level and round")
    parser.add_argument("--tokens", type=int, default=200)
    args = parser.parse_args()
    collector = start_collector()
    CONFIGURATIONS["stored + OTLP"] = {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.base_url}
    rounds: dict[str, list[dict[str, float]]] = {name: [] for name in CONFIGURATIONS}
    try:
        for number in range(1, args.rounds + 1):
            for name, env in CONFIGURATIONS.items():
                figures = measure(env, args.requests, args.tokens)
                rounds[name].append(figures)
                print(
                    f"round {number} {name:>14}: " + ", ".join(f"{key} {value:.2f}" for key, value in figures.items())
                )
    finally:
        collector.stop()
    print(f"\nspans the collector received: {len(collector.spans)}")
    print(f"{'':>14} " + " | ".join(f"{key:>28}" for key in rounds["stored"][0]))
    for name, results in rounds.items():
        cells = []
        for key in results[0]:
            values = [result[key] for result in results]
            cells.append(f"{statistics.median(values):>9.2f} ({min(values):.2f}–{max(values):.2f})".rjust(28))
        print(f"{name:>14} " + " | ".join(cells))


if __name__ == "__main__":
    main()
