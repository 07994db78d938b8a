"""Streaming benchmark: threadline with its real graph, the demo model at zero delay, PostgreSQL checkpoints.

Measures time to first byte and to first `text-delta`, total time, answers/s and tokens/s for
200-token answers at concurrency 1 and 64, plus server CPU per answer. The server runs on core 0 and
this load generator on core 1 where the machine has two. A benchmark, never a test: run it by hand

    python3 tasks.py bench [--requests 256] [--tokens 200]

DATABASE_URL picks the PostgreSQL server (default: the one on 127.0.0.1:5432, else the embedded one); each
run makes a database of its own there and drops it afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from raw_client import answers_at
from threadline_testing.database import fresh_database, local_server
from threadline_testing.ports import free_port
from threadline_testing.processes import wait_until_up

ROOT = Path(__file__).resolve().parents[1]


def database_url() -> str | None:
    """DATABASE_URL, else the local PostgreSQL; None lets the server start its embedded one."""
    return local_server("DATABASE_URL")


@contextmanager
def bench_database(data_dir: str) -> Iterator[None]:
    """A database of the run's own (on DATABASE_URL's server, else the local one, else an embedded one),
    named by DATABASE_URL while the run lasts: figures must not drift with what earlier runs left behind."""
    previous = os.environ.get("DATABASE_URL")
    with fresh_database(Path(data_dir) / "postgres-server", "DATABASE_URL") as url:
        os.environ["DATABASE_URL"] = url
        try:
            yield
        finally:
            if previous is None:
                del os.environ["DATABASE_URL"]
            else:
                os.environ["DATABASE_URL"] = previous


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(pid: int) -> float:
    return status_mb(pid, "VmHWM")


def status_mb(pid: int, field: str) -> float:
    """A memory figure of a process (`VmRSS`, `VmHWM`, ...) in MB, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def start_server(port: int, data_dir: str, token_delay_ms: float = 0, **extra_env: str) -> subprocess.Popen:
    # The load comes from one address, so the per-address rate limit is lifted for the run.
    env = dict(
        os.environ,
        CHAT_MODEL_PROVIDER="demo",
        CHAT_DEMO_TOKEN_DELAY_MS=str(token_delay_ms),
        THREADLINE_PORT=str(port),
        THREADLINE_DATA_DIR=data_dir,
        LOG_LEVEL="WARNING",
        CHAT_RATE_LIMIT="1000000/minute",
        API_RATE_LIMIT="1000000/minute",
        THREADLINE_MAX_CONNECTIONS="100000",
        **extra_env,
    )
    if url := database_url():
        env["DATABASE_URL"] = url
    command = [sys.executable, "-m", "threadline", "serve"]
    if hasattr(os, "sched_setaffinity") and os.cpu_count() and os.cpu_count() > 1:
        command = ["taskset", "-c", "0", *command]
        os.sched_setaffinity(0, {1})
    server = subprocess.Popen(command, env=env, cwd=ROOT)
    wait_until_up(f"http://127.0.0.1:{port}", server)
    return server


async def round_at(port: int, concurrency: int, requests: int, tokens: int) -> list[tuple]:
    """`concurrency` clients asking one after another; every answer must arrive whole."""
    results = await answers_at(port, tokens, concurrency, requests)
    assert not (failed := [result for result in results if isinstance(result, str)]), failed[:3]
    return results


def ms(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] * 1000 if len(values) > 1 else values[0] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=256, help="answers per concurrency level")
    parser.add_argument("--tokens", type=int, default=200, help="tokens per answer")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 64])
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as data_dir, bench_database(data_dir):
        server = start_server(port, data_dir)
        try:
            asyncio.run(round_at(port, 8, 32, args.tokens))  # warm-up: imports, pools, caches
            print(
                f"{'c':>4} {'answers':>8} {'ttfb p50':>9} {'1st delta p50':>14} {'p95':>7} {'total p50':>10} "
                f"{'answers/s':>10} {'tokens/s':>9} {'srv CPU/answer':>15} {'client CPU':>11}"
            )
            for concurrency in args.concurrency:
                cpu_before, client_before, wall = cpu_seconds(server.pid), time.process_time(), time.perf_counter()
                results = asyncio.run(round_at(port, concurrency, args.requests, args.tokens))
                wall = time.perf_counter() - wall
                server_cpu = cpu_seconds(server.pid) - cpu_before
                client_cpu = time.process_time() - client_before
                ttfb, first, total, deltas = (list(column) for column in zip(*results))
                assert all(count == args.tokens for count in deltas), "every answer has all its tokens"
                print(
                    f"{concurrency:>4} {len(results):>8} {ms(ttfb, 50):>7.1f}ms {ms(first, 50):>12.1f}ms "
                    f"{ms(first, 95):>5.1f}ms {ms(total, 50):>8.1f}ms {len(results) / wall:>10.1f} "
                    f"{sum(deltas) / wall:>9.0f} {server_cpu / len(results) * 1000:>13.2f}ms "
                    f"{client_cpu / wall * 100:>10.0f}%"
                )
            print(f"server peak RSS: {peak_rss_mb(server.pid):.0f} MB")
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
