"""What a second process buys on this machine: `threadline serve --workers N` for N = 1 and 2.

    python3 tasks.py bench workers [--rounds 5] [--answers 320]

200-token answers at c=64 on PostgreSQL (the processes share the database and, through it, the running
answers and stops), one model call each (no suggestion or title call), as in `bench compare`. Nothing is
pinned here: the processes, PostgreSQL and this load generator share the machine's cores, as a small
server's would; the cores each of them kept busy are reported beside each row, because on a 2-core
machine they compete with the second process. Rounds are interleaved; each figure is the median (min–max) over rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import resource
import subprocess
import sys
import tempfile
import time

import httpx
import psutil
from compare import NO_SUGGESTIONS, median_of, spread
from raw_client import answers_at
from stream_bench import ROOT, bench_database
from threadline_testing.ports import free_port


def start(workers: int, data_dir: str) -> tuple[subprocess.Popen, int]:
    port = free_port()
    env = {
        **os.environ,
        "CHAT_MODEL_PROVIDER": "demo",
        "CHAT_DEMO_TOKEN_DELAY_MS": "0",
        "THREADLINE_DATA_DIR": data_dir,
        "THREADLINE_PORT": str(port),
        "LOG_LEVEL": "WARNING",
        "CHAT_RATE_LIMIT": "1000000/minute",
        "API_RATE_LIMIT": "1000000/minute",
        "THREADLINE_MAX_CONNECTIONS": "100000",
        "CHAT_PROFILES": NO_SUGGESTIONS,
        "CHAT_GENERATED_TITLES": "false",
    }
    command = [sys.executable, "-m", "threadline", "serve", "--workers", str(workers)]
    process = subprocess.Popen(command, env=env, cwd=ROOT)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            # With several processes, uvicorn's supervisor answers once its children have started.
            started = len(psutil.Process(process.pid).children()) >= (workers if workers > 1 else 0)
            if started and httpx.get(f"http://127.0.0.1:{port}/health/ready", timeout=1).status_code == 200:
                return process, port
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    process.kill()
    raise SystemExit(f"threadline --workers {workers} did not start")


def cpu_of_tree(pid: int) -> float:
    """CPU seconds of the server and every process it started."""
    processes = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    return sum(sum(process.cpu_times()[:2]) for process in processes)


def cpu_of_postgres() -> float:
    """CPU seconds of the local PostgreSQL server's processes (0 when it runs elsewhere)."""
    total = 0.0
    for process in psutil.process_iter(["name"]):
        if process.info["name"] and process.info["name"].startswith("postgres"):
            with contextlib.suppress(psutil.Error):  # a backend that ended meanwhile
                total += sum(process.cpu_times()[:2])
    return total


def measure(workers: int, answers: int, data_dir: str) -> dict[str, float]:
    process, port = start(workers, data_dir)
    try:
        asyncio.run(answers_at(port, 200, 16, 64))  # warm-up, every process included
        server_before, client_before = cpu_of_tree(process.pid), time.process_time()
        database_before = cpu_of_postgres()
        wall = time.perf_counter()
        results = asyncio.run(answers_at(port, 200, 64, answers))
        wall = time.perf_counter() - wall
        server_cpu = cpu_of_tree(process.pid) - server_before
        client_cpu = time.process_time() - client_before
        database_cpu = cpu_of_postgres() - database_before
    finally:
        process.terminate()
        process.wait(timeout=60)
    failed = [result for result in results if isinstance(result, str)]
    assert not failed, failed[:3]
    return {
        "answers_per_s": answers / wall,
        "cpu_per_answer_ms": server_cpu / answers * 1000,
        "server_cores": server_cpu / wall,
        "client_cores": client_cpu / wall,
        "database_cores": database_cpu / wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--answers", type=int, default=320)
    args = parser.parse_args()
    resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
    counts = (1, 2)
    rounds: dict[int, list[dict[str, float]]] = {count: [] for count in counts}
    with tempfile.TemporaryDirectory() as data_dir, bench_database(data_dir):
        for number in range(args.rounds):
            for workers in counts if number % 2 == 0 else counts[::-1]:
                print(f"round {number + 1}: --workers {workers}", file=sys.stderr, flush=True)
                rounds[workers].append(measure(workers, args.answers, data_dir))
    one = median_of(rounds[1])["answers_per_s"]
    print(f"\nmachine: {os.cpu_count()} cores; c=64, 200-token answers, {args.rounds} rounds\n")
    print(
        "| processes | answers/s | × one process | server CPU / answer | server cores busy | PostgreSQL cores "
        "| load generator cores |"
    )
    print("|---|---|---|---|---|---|---|")
    for workers in counts:
        r = median_of(rounds[workers])
        print(
            f"| {workers} | {spread(r, 'answers_per_s')} | {r['answers_per_s'] / one:.2f} | "
            f"{spread(r, 'cpu_per_answer_ms')} ms | {spread(r, 'server_cores', '.2f')} | "
            f"{spread(r, 'database_cores', '.2f')} | {spread(r, 'client_cores', '.2f')} |"
        )


if __name__ == "__main__":
    main()
