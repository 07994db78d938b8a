"""What an answer costs as its conversation grows: server CPU per answer, the first `text-delta`, and the bytes the
conversation's checkpoint holds, at turns 1, 50 and 300 of one conversation, for plain answers, answers that call
a tool, and plain answers on a profile that compresses the context (a 4,000-token window). The demo model at zero
delay, PostgreSQL checkpoints, one answer at a time. A benchmark, never a test: run it by hand

    python3 tasks.py bench growth [--turns 300] [--rounds 3] [--window 10] [--variants plain,compressed]

Each figure is over `window` answers ending at the turn named (turn 1: the first `window`); each variant runs
`rounds` conversations, one after another on one server; the median and range over the rounds are printed.

`--paired` measures the ratio so that the machine's speed, which can move by a third within minutes here, cancels
out: each answer of a window is followed by the first answer of a new conversation, and each one's server CPU is
taken alone (the scheduler's nanoseconds over the server's threads, from before the request until the server is
idle again, its writes after the stream included). The ratio is the window's median over the first answers'.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
from stream_bench import bench_database, cpu_seconds, start_server
from threadline_testing.database import thread_footprint
from threadline_testing.ports import free_port
from threadline_testing.sse import parse_sse

VARIANTS = {
    # variant: (the question each turn asks, the server's extra settings)
    "plain": ("count to 5", {}),
    "a tool call": ("calculate 6*7", {}),
    "compressed": (
        "count to 5",
        {"CHAT_PROFILES": json.dumps([{"id": "demo", "provider": "demo", "model": "demo", "context_limit": 4000}])},
    ),
}


def points(turns: int) -> list[int]:
    return sorted({1, min(50, turns), turns})


def windows(turns: int, window: int) -> dict[int, tuple[int, int]]:
    """Each point's first and last turn: the `window` answers ending at it (turn 1: the first `window`)."""
    return {point: (1, window) if point == 1 else (max(1, point - window + 1), point) for point in points(turns)}


def ask(client: httpx.Client, conversation_id: str, text: str) -> float:
    """One answer, whole; the seconds to its first text-delta."""
    body = {"id": conversation_id, "messages": [{"role": "user", "parts": [{"type": "text", "text": text}]}]}
    begun, first = time.perf_counter(), None
    with client.stream("POST", "/api/chat", json=body) as response:
        assert response.status_code == 200, response.read()
        raw = b""
        for data in response.iter_bytes():
            if first is None and b'"text-delta"' in data:
                first = time.perf_counter() - begun
            raw += data
    assert parse_sse(raw)[-1]["type"] == "finish", raw[-300:]
    return first if first is not None else time.perf_counter() - begun


def conversation(client: httpx.Client, pid: int, text: str, turns: int, window: int) -> tuple[dict[int, tuple], str]:
    """One conversation of `turns` answers; at each point, (server CPU ms per answer, median first text-delta ms)
    over its window of answers, and the conversation's id."""
    conversation_id = f"growth-{time.monotonic_ns()}"
    spans = windows(turns, window)
    cpu_at: dict[int, float] = {}
    firsts: dict[int, list[float]] = {point: [] for point in spans}
    measured: dict[int, tuple] = {}
    for turn in range(1, turns + 1):
        cpu_at |= {point: cpu_seconds(pid) for point, (begin, _) in spans.items() if turn == begin}
        first = ask(client, conversation_id, text)
        for point, (begin, end) in spans.items():
            if begin <= turn <= end:
                firsts[point].append(first)
            if turn == end:
                cpu_ms = (cpu_seconds(pid) - cpu_at[point]) * 1000 / (end - begin + 1)
                measured[point] = (cpu_ms, statistics.median(firsts[point]) * 1000)
    return measured, conversation_id


def cpu_ns(pid: int) -> int:
    """The server's CPU time so far, in nanoseconds: the scheduler's own count, over all its threads."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
    return total


def settled_cpu_ns(pid: int) -> int:
    """The server's CPU time once it is idle: what an answer leaves to do after its stream is done."""
    last = cpu_ns(pid)
    while True:
        time.sleep(0.01)
        now = cpu_ns(pid)
        if now - last < 20_000:  # under 20 µs in 10 ms: nothing running but its timers
            return now
        last = now


def answer_cpu_ms(client: httpx.Client, pid: int, conversation_id: str, text: str) -> float:
    begun = settled_cpu_ns(pid)
    ask(client, conversation_id, text)
    return (settled_cpu_ns(pid) - begun) / 1e6


def paired(client: httpx.Client, pid: int, text: str, turns: int, window: int) -> dict[int, tuple[float, float]]:
    """One conversation of `turns` answers; at each point, the median server CPU (ms) of its window's answers and
    of as many first answers of new conversations, each asked right after one of them."""
    conversation_id = f"growth-{time.monotonic_ns()}"
    spans = windows(turns, window)
    grown: dict[int, list[float]] = {point: [] for point in spans}
    first: dict[int, list[float]] = {point: [] for point in spans}
    for turn in range(1, turns + 1):
        if not any(begin <= turn <= end for begin, end in spans.values()):
            ask(client, conversation_id, text)
            continue
        cpu = answer_cpu_ms(client, pid, conversation_id, text)
        beside = answer_cpu_ms(client, pid, f"growth-first-{time.monotonic_ns()}", text)
        for point, (begin, end) in spans.items():
            if begin <= turn <= end:
                grown[point].append(cpu)
                first[point].append(beside)
    return {point: (statistics.median(grown[point]), statistics.median(first[point])) for point in spans}


def run_paired(name: str, turns: int, rounds: int, window: int) -> dict[int, list[tuple[float, float]]]:
    text, _ = VARIANTS[name]
    figures: dict[int, list[tuple[float, float]]] = {point: [] for point in points(turns)}
    with warmed_server(name, turns, window) as (client, pid, _):
        for _ in range(rounds):
            for point, pair in paired(client, pid, text, turns, window).items():
                figures[point].append(pair)
    return figures


def print_paired(name: str, figures: dict[int, list[tuple[float, float]]]) -> None:
    for point, pairs in figures.items():
        grown, first = [pair[0] for pair in pairs], [pair[1] for pair in pairs]
        ratios = [pair[0] / pair[1] for pair in pairs]
        print(f"| {name} | {point} | {spread(grown, 'ms')} | {spread(first, 'ms')} | {spread(ratios, '', 2)} |")


def footprint(database_url: str, client_id: str, conversation_id: str) -> int:
    _, size = asyncio.run(thread_footprint(database_url, f"{client_id}:{conversation_id}"))
    return size


@contextlib.contextmanager
def warmed_server(name: str, turns: int, window: int) -> Iterator[tuple[httpx.Client, int, str]]:
    """A server for the variant on a database of its own, past its first answers: a client, its pid, the database."""
    text, extra = VARIANTS[name]
    port = free_port()
    with tempfile.TemporaryDirectory() as data_dir, bench_database(data_dir):
        server = start_server(port, data_dir, CHAT_MAX_TURNS=str(4 * turns), **extra)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
                conversation(client, server.pid, text, window, window)  # warm-up: the first answers of a server
                yield client, server.pid, os.environ["DATABASE_URL"]
        finally:
            server.terminate()
            server.wait(30)


def run_variant(name: str, turns: int, rounds: int, window: int) -> dict[int, list[tuple[float, float, int]]]:
    text, _ = VARIANTS[name]
    figures: dict[int, list[tuple[float, float, int]]] = {point: [] for point in points(turns)}
    with warmed_server(name, turns, window) as (client, pid, database_url):
        for _ in range(rounds):
            measured, conversation_id = conversation(client, pid, text, turns, window)
            for point, (cpu_ms, first_ms) in measured.items():
                figures[point].append((cpu_ms, first_ms, 0))
            with psycopg.connect(database_url) as conn:
                row = conn.execute("SELECT client_id FROM conversations WHERE id = %s", (conversation_id,))
                client_id = row.fetchone()[0]  # type: ignore[index]
            # the checkpoint's bytes once the conversation has all its turns (the latest only is kept)
            last = figures[turns][-1]
            figures[turns][-1] = (last[0], last[1], footprint(database_url, client_id, conversation_id))
    return figures


def spread(values: list[float], unit: str, digits: int = 1) -> str:
    low, middle, high = (f"{value:.{digits}f}" for value in (min(values), statistics.median(values), max(values)))
    return f"{middle} ({low}–{high}){' ' + unit if unit else ''}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--window", type=int, default=10, help="answers each figure is taken over")
    parser.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, of: {', '.join(VARIANTS)}")
    parser.add_argument("--paired", action="store_true", help="each answer beside a new conversation's first")
    args = parser.parse_args()
    if args.paired:
        print("| variant | turn | server CPU per answer | a first answer beside it | CPU × a first answer |")
        print("|---|---|---|---|---|")
        for name in args.variants.split(","):
            print_paired(name, run_paired(name, args.turns, args.rounds, args.window))
        return
    print("| variant | turn | server CPU per answer | first text-delta | CPU × turn 1 | checkpoint at the end |")
    print("|---|---|---|---|---|---|")
    for name in args.variants.split(","):
        figures = run_variant(name, args.turns, args.rounds, args.window)
        first_cpu = statistics.median(cpu for cpu, _, _ in figures[1])
        for point, values in figures.items():
            cpu = [value[0] for value in values]
            bytes_ = [value[2] for value in values if value[2]]
            held = f"{statistics.median(bytes_) / 1024:.0f} KB" if bytes_ else ""
            print(
                f"| {name} | {point} | {spread(cpu, 'ms')} | {spread([value[1] for value in values], 'ms')} | "
                f"{statistics.median(cpu) / first_cpu:.2f} | {held} |"
            )


if __name__ == "__main__":
    main()
