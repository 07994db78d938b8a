"""Where a whole HTTP answer's time goes: the same 200-token answer at concurrency 1, over HTTP, with one
layer added at a time, and what each costs in PostgreSQL transactions.

    python3 tasks.py bench breakdown [--rounds 5] [--answers 200]

Each row is a server started on core 0 (this client on core 1), rounds interleaved, each figure the
median (min–max) over rounds. The steps between rows price a layer:

- bare Litestar: HTTP and 200 pre-built chunks, the floor;
- LangGraph + Postgres: the equal-work peer (bench/peers/langgraph_postgres.py);
- threadline in memory, without recordings, traces, a title or suggestions: identity, rate limit, the running
  answer, the three-node graph with its tools bound, the translator and encoder;
- + recordings for resume: each answer's events kept for a reader that comes later (CHAT_RESUMABLE);
- + traces: the answer's trace kept (in memory);
- + PostgreSQL: the same on PostgreSQL: conversation row, running-answer row, checkpoints, the trace row;
- + a generated title: a new conversation's title written by its model (every answer here starts one);
- + suggestions: the demo model's suggestion call after the answer; with it, threadline's defaults.

PostgreSQL's work is counted as transactions per answer, read from `pg_stat_database` of a database of
the run's own: each autocommit statement counts once, even inside a pipeline that shares one round trip.

Under the ladder, the ledger (`ledger.py`): the last row's server (threadline's defaults), and the same with
the built-in agent hosted as a team's (`examples/builtin.py`), sampled by py-spy while they answer: each thing
an answer does priced inside the same answers, with or without a setting that turns it off.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import ledger
import psycopg
from compare import BENCH, HOSTED_AGENT, NO_SUGGESTIONS, Peer, median_of, spread, start
from raw_client import answers_at
from stream_bench import cpu_seconds
from threadline_testing.database import fresh_database

PEER = "LangGraph + Postgres"


def ladder(data_dir: str, url: str) -> list[Peer]:
    threadline = [sys.executable, "-m", "threadline", "serve"]
    common = {
        "CHAT_MODEL_PROVIDER": "demo",
        "THREADLINE_DATA_DIR": data_dir,
        "LOG_LEVEL": "WARNING",
        "CHAT_RATE_LIMIT": "1000000/minute",
        "API_RATE_LIMIT": "1000000/minute",
        "DATABASE_URL": url,
    }
    # Each step turns one thing back on, in this order, so its row minus the one above prices it.
    off = {
        "CHAT_MEMORY_BACKEND": "memory",
        "CHAT_RESUMABLE": "false",
        "CHAT_TRACE_RETENTION_DAYS": "0",
        "CHAT_GENERATED_TITLES": "false",
        "CHAT_PROFILES": NO_SUGGESTIONS,
    }
    steps = [
        ("+ recordings for resume", "CHAT_RESUMABLE"),
        ("+ traces", "CHAT_TRACE_RETENTION_DAYS"),
        ("+ PostgreSQL", "CHAT_MEMORY_BACKEND"),
        ("+ a generated title", "CHAT_GENERATED_TITLES"),
        ("+ suggestions (all of it: the default)", "CHAT_PROFILES"),
    ]
    rows = [
        Peer("bare Litestar", [sys.executable, str(BENCH / "peers" / "bare_server.py")]),
        Peer(PEER, [sys.executable, str(BENCH / "peers" / "langgraph_postgres.py")], common),
        Peer("threadline in memory: no recordings, traces, title or suggestions", threadline, {**common, **off}),
    ]
    for name, setting in steps:
        del off[setting]
        rows.append(Peer(name, threadline, {**common, **off}))
    return rows


def transactions(url: str) -> float:
    """Transactions the run's database has seen; the statistics are flushed by each backend within a second."""
    time.sleep(1.2)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
    return float(row[0]) if row else 0.0


def measure(peer: Peer, answers: int, url: str) -> dict[str, float]:
    process, port = start(peer, 200, 0)
    try:
        asyncio.run(answers_at(port, 200, 4, 32))  # warm-up
        before_tx = transactions(url)
        cpu_before, wall = cpu_seconds(process.pid), time.perf_counter()
        results = asyncio.run(answers_at(port, 200, 1, answers))
        wall = time.perf_counter() - wall
        cpu = cpu_seconds(process.pid) - cpu_before
        transactions_per_answer = transactions(url) - before_tx - 1  # the count's own query
    finally:
        process.terminate()
        process.wait(timeout=60)
    done = sorted(result for result in results if not isinstance(result, str))
    assert len(done) == answers, [result for result in results if isinstance(result, str)][:3]
    middle = len(done) // 2
    return {
        "first_delta_p50": sorted(row[1] for row in done)[middle] * 1000,
        "total_p50": sorted(row[2] for row in done)[middle] * 1000,
        "cpu_per_answer_ms": cpu / answers * 1000,
        "answers_per_s": answers / wall,
        "transactions_per_answer": max(transactions_per_answer, 0.0) / answers,
    }


def ledger_round(peer: Peer, answers: int) -> dict[str, float]:
    """One server's CPU per answer (measured with nothing sampling it), shared out by the rows' samples."""
    process, port = start(peer, 200, 0)
    try:
        asyncio.run(answers_at(port, 200, 4, 32))  # warm-up
        cpu_before = cpu_seconds(process.pid)
        asyncio.run(answers_at(port, 200, 1, answers))
        cpu_per_answer = (cpu_seconds(process.pid) - cpu_before) / answers * 1000
        with tempfile.TemporaryDirectory() as directory:
            raw = Path(directory) / "samples.txt"
            spy = ledger.record(process.pid, raw)
            time.sleep(1)  # py-spy attaches
            asyncio.run(answers_at(port, 200, 1, answers))
            ledger.stop(spy)
            shares = ledger.shares(raw)
    finally:
        process.terminate()
        process.wait(timeout=60)
    return {row: share * cpu_per_answer for row, share in shares.items()} | {"all": cpu_per_answer}


def ledger_servers(ladder_rows: list[Peer]) -> list[Peer]:
    """threadline's defaults (the ladder's last row), with the built-in agent and with it hosted as a team's."""
    defaults = ladder_rows[-1]
    hosted = Peer("hosted create_agent", defaults.command, {**defaults.env, **HOSTED_AGENT})
    return [Peer("built-in agent", defaults.command, defaults.env), hosted]


def print_ladder(rounds: dict[str, list[dict[str, float]]]) -> None:
    print(
        "\n| c=1, 200 tokens | first `text-delta` p50 | total p50 | server CPU / answer | step | "
        "PostgreSQL transactions / answer |"
    )
    print("|---|---|---|---|---|---|")
    previous = None
    for name, values in rounds.items():
        r = median_of(values)
        step = ""
        if name != PEER:  # the peer stands beside the ladder, not on it
            if previous is not None:
                step = f"{r['cpu_per_answer_ms'] - previous:+.1f} ms"
            previous = r["cpu_per_answer_ms"]
        print(
            f"| {name} | {spread(r, 'first_delta_p50')} ms | {spread(r, 'total_p50')} ms | "
            f"{spread(r, 'cpu_per_answer_ms')} ms | {step} | {r['transactions_per_answer']:.1f} |"
        )


def print_ledger(rounds: dict[str, list[dict[str, float]]]) -> None:
    summaries = {name: median_of(values) for name, values in rounds.items()}
    print("\n| c=1, 200 tokens, threadline's defaults: server CPU per answer | " + " | ".join(summaries) + " |")
    print("|---|" + "---|" * len(summaries))
    for row in [*ledger.ROWS, "all"]:
        cells = [f"{spread(r, row, '.2f')} ms ({r[row] / r['all']:.1%})" for r in summaries.values()]
        print(f"| {row} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the ladder (0: none)")
    parser.add_argument("--answers", type=int, default=200)
    parser.add_argument("--ledger-rounds", type=int, default=3, help="rounds of the ledger (0: none)")
    args = parser.parse_args()
    resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {1})
    with tempfile.TemporaryDirectory() as data_dir, fresh_database(Path(data_dir) / "pg", "DATABASE_URL") as url:
        rows = ladder(data_dir, url)
        rounds: dict[str, list[dict[str, float]]] = {peer.name: [] for peer in rows}
        for number in range(args.rounds):
            for peer in rows[number % len(rows) :] + rows[: number % len(rows)]:
                print(f"round {number + 1}: {peer.name}", file=sys.stderr, flush=True)
                rounds[peer.name].append(measure(peer, args.answers, url))
        servers = ledger_servers(rows)
        ledger_rounds: dict[str, list[dict[str, float]]] = {peer.name: [] for peer in servers}
        for number in range(args.ledger_rounds):
            for peer in servers[number % 2 :] + servers[: number % 2]:
                print(f"ledger, round {number + 1}: {peer.name}", file=sys.stderr, flush=True)
                ledger_rounds[peer.name].append(ledger_round(peer, args.answers))
    if args.rounds:
        print_ladder(rounds)
    if args.ledger_rounds:
        print_ledger(ledger_rounds)


if __name__ == "__main__":
    main()
