"""How many conversations can start at the same moment on one core and still meet seed 000's latency
targets: the first token within 1 s and the whole answer within 5 s (both p95), with no error.

    python3 tasks.py bench capacity [--rounds 3] [--tokens 150]

Each answer is 150 tokens at 50 tokens/s (the demo model with 20 ms between tokens: 3.0 s ideal). For
each peer the number is found by itself: N conversations open at once against a freshly started server
(core 0; this client on core 1); N doubles from 100 while the targets hold, then is bisected between
the last N that held and the first that did not, to within 10 %. Peers: threadline (PostgreSQL,
suggestions off as for a paid profile), the equal-work LangGraph + AsyncPostgresSaver peer and the AI
SDK 7 server. Rounds are interleaved; the capacity is printed as the median (min–max) over rounds.

`--tokens 2` makes each answer two tokens long: what is left is what starting an answer costs each peer (the
request, the records, the graph's setup, the first model call), with next to nothing streamed beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import sys
import tempfile
import time

from compare import Peer, peers, quantile, start
from raw_client import answers_at
from stream_bench import bench_database, peak_rss_mb

TOKENS, DELAY_MS = 150, 20
FIRST_TOKEN_P95, TOTAL_P95 = 1.0, 5.0  # seconds, seed 000
START, LIMIT = 100, 6400


def probe(peer: Peer, conversations: int, tokens: int) -> dict[str, float]:
    """Start `conversations` answers at once on a fresh server; their p95 times, errors and peak memory."""
    process, port = start(peer, tokens, DELAY_MS)
    try:
        asyncio.run(answers_at(port, tokens, 8, 16))  # warm-up
        results = asyncio.run(answers_at(port, tokens, conversations, conversations))
        rss = peak_rss_mb(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=60)
    done = [result for result in results if not isinstance(result, str)]
    return {
        "errors": len(results) - len(done),
        "first_token_p95": quantile([row[1] for row in done], 95) if done else float("inf"),
        "total_p95": quantile([row[2] for row in done], 95) if done else float("inf"),
        "peak_rss_mb": rss,
    }


def holds(result: dict[str, float]) -> bool:
    return result["errors"] == 0 and result["first_token_p95"] <= FIRST_TOKEN_P95 and result["total_p95"] <= TOTAL_P95


def capacity(peer: Peer, tokens: int) -> tuple[int, dict[str, float]]:
    """The most conversations that held the targets, and what was measured there (0 when even 100 did not)."""
    held, best, failed = 0, {}, None
    conversations = START
    while True:
        result = probe(peer, conversations, tokens)
        ok = holds(result)
        print(
            f"  {peer.name}: {conversations} at once: first token p95 {result['first_token_p95']:.2f} s, "
            f"total p95 {result['total_p95']:.2f} s, {result['errors']:.0f} errors: {'held' if ok else 'missed'}",
            file=sys.stderr,
            flush=True,
        )
        if ok:
            held, best = conversations, result
        else:
            failed = conversations
        if failed is None:
            if conversations >= LIMIT:
                return held, best
            conversations *= 2
        elif failed - held <= max(held // 10, 10):
            return held, best
        else:
            conversations = (held + failed) // 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=TOKENS, help="tokens per answer (2: starting an answer alone)")
    args = parser.parse_args()
    resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {1})
    with tempfile.TemporaryDirectory() as data_dir, bench_database(data_dir):
        chosen = [peer for peer in peers(data_dir) if peer.name != "bare Litestar"]
        found: dict[str, list[tuple[int, dict[str, float]]]] = {peer.name: [] for peer in chosen}
        for number in range(args.rounds):
            for peer in chosen[number % len(chosen) :] + chosen[: number % len(chosen)]:
                print(f"round {number + 1}: {peer.name}", file=sys.stderr, flush=True)
                started = time.perf_counter()
                found[peer.name].append(capacity(peer, args.tokens))
                print(f"  ({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    print(
        f"\n| peer | conversations started at once within first token p95 ≤ {FIRST_TOKEN_P95:g} s and total p95 ≤ "
        f"{TOTAL_P95:g} s ({args.tokens} tokens at {1000 // DELAY_MS}/s) | at the median: first token p95 | total p95 "
        "| peak RSS |"
    )
    print("|---|---|---|---|---|")
    for name, rounds in found.items():
        counts = sorted(count for count, _ in rounds)
        median = statistics.median_low(counts)
        at = next(result for count, result in rounds if count == median)
        low, high = counts[0], counts[-1]
        figure = f"{median}" if low == high else f"{median} ({low}–{high})"
        details = (
            f"{at['first_token_p95']:.2f} s | {at['total_p95']:.2f} s | {at['peak_rss_mb']:.0f} MB"
            if at
            else "— | — | —"
        )
        print(f"| {name} | {figure} | {details} |")


if __name__ == "__main__":
    main()
