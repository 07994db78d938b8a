"""Searching and paging one visitor's 10,000 conversations: GET /api/conversations?q=… over HTTP against a real
server on PostgreSQL, each conversation holding ~200 words of text like a few turns of chat. A benchmark, never
a test: run it by hand

    python3 tasks.py bench search [--conversations 10000] [--visitors 1] [--rounds 5] [--requests 100]

With `--visitors V` the conversations are spread over V visitors, the one asking holding 1/V of them: the
database holds them all (every word in V visitors' conversations), the list and search are one visitor's.

The kinds of request (a word of one conversation, of 33, the rarest and the commonest of the vocabulary, two
word beginnings, the first page, a later page) are interleaved round by round. Prints each kind's p50 and p95
latency, the median and range over the rounds, and the plans PostgreSQL chose: the `conversations_words` GIN
index for selective words, the visitor's recency index (stopping after one page of matches) for common ones.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time

import httpx
import psycopg
from stream_bench import bench_database, start_server
from threadline_testing.ports import free_port

WORDS = [f"{a}{b}{c}" for a in "bcdfgklmnprst" for b in "aeiou" for c in ("n", "r", "st", "l", "m", "ck", "sh", "x")]


def fill(database_url: str, client_id: str, count: int, visitors: int) -> None:
    """`count` conversations, every `visitors`-th of `client_id` and the others of other visitors, each with a title
    and ~200 words said (Zipf-like: a few words are in most conversations, most words in few), activity spread over
    a year."""
    rng = random.Random(7)
    weights = [1 / (rank + 1) for rank in range(len(WORDS))]
    rows = []
    for n in range(count):
        visitor, mine = n % visitors, n // visitors  # a visitor's own numbering of its conversations
        # and a word of its own among the visitor's (one match) and one of 300 topics (33 matches)
        text = " ".join(rng.choices(WORDS, weights, k=200)) + f" ticket{mine} topic{mine % 300}"
        owner = client_id if visitor == 0 else f"bench-visitor-{visitor}"
        rows.append((owner, f"bench-{n}", " ".join(text.split()[:5]).capitalize(), text, n * 3000))
    with psycopg.connect(database_url, autocommit=True) as conn:
        with conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO conversations (client_id, id, title, words, last_message_at) VALUES "
                "(%s, %s, %s, strip(to_tsvector('simple', %s)), now() - make_interval(secs => %s))",
                [(client, id_, title, f"{title} {text}", age) for client, id_, title, text, age in rows],
            )
        conn.execute("ANALYZE conversations")


def plan(database_url: str, client_id: str, query: str) -> str:
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "EXPLAIN SELECT id FROM conversations WHERE client_id = %s AND words @@ to_tsquery('simple', %s) "
            "ORDER BY last_message_at DESC, id DESC LIMIT 51",
            (client_id, query),
        ).fetchall()
    return "\n    ".join(row[0] for row in rows)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--visitors", type=int, default=1, help="the conversations' owners, the one asking among them")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=100, help="requests per kind and round")
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as data_dir, bench_database(data_dir):
        database_url = os.environ["DATABASE_URL"]
        server = start_server(port, data_dir)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
                for _ in range(100):
                    try:
                        client.get("/health").raise_for_status()
                        break
                    except httpx.HTTPError:
                        time.sleep(0.2)
                hello = {"role": "user", "parts": [{"type": "text", "text": "hi"}]}
                client.post("/api/chat", json={"id": "seed", "messages": [hello]})
                with psycopg.connect(database_url) as conn:
                    client_id = conn.execute("SELECT client_id FROM conversations WHERE id = 'seed'").fetchone()[0]
                started = time.perf_counter()
                fill(database_url, client_id, args.conversations, args.visitors)
                mine = args.conversations // args.visitors
                print(
                    f"{args.conversations:,} conversations of {args.visitors:,} visitors stored in "
                    f"{time.perf_counter() - started:.1f} s; the one asking holds {mine:,}"
                )
                second_page = client.get("/api/conversations", params={"limit": 50}).headers["link"][1:].split(">")[0]
                kinds = {
                    "one match": {"q": f"ticket{mine * 42 // 100}", "limit": 50},
                    "33 matches": {"q": "topic17", "limit": 50},
                    "rarest word": {"q": WORDS[-1], "limit": 50},
                    "common word": {"q": WORDS[0], "limit": 50},
                    "two beginnings": {"q": f"{WORDS[3][:3]} {WORDS[40][:3]}", "limit": 50},
                    "first page": {"limit": 50},
                    "later page": second_page,
                }
                figures: dict[str, list[tuple[float, float]]] = {kind: [] for kind in kinds}
                for _ in range(args.rounds):
                    for kind, request in kinds.items():
                        times = []
                        for _ in range(args.requests):
                            begun = time.perf_counter()
                            if isinstance(request, str):
                                response = client.get(request)
                            else:
                                response = client.get("/api/conversations", params=request)
                            times.append((time.perf_counter() - begun) * 1000)
                            assert response.status_code == 200, response.text
                        figures[kind].append((percentile(times, 0.5), percentile(times, 0.95)))
                print(f"\n{args.rounds} rounds of {args.requests} requests per kind; median (range) over rounds")
                for kind, rounds in figures.items():
                    p50 = [r[0] for r in rounds]
                    p95 = [r[1] for r in rounds]
                    request = kinds[kind]
                    found = len(
                        client.get("/api/conversations", params=request).json() if isinstance(request, dict) else []
                    )
                    print(
                        f"  {kind:15} p50 {statistics.median(p50):5.1f} ms ({min(p50):.1f}–{max(p50):.1f})  "
                        f"p95 {statistics.median(p95):5.1f} ms ({min(p95):.1f}–{max(p95):.1f})"
                        + (f"  {found} found" if found else "")
                    )
                for kind in ("one match", "33 matches", "common word"):
                    query = f"'{kinds[kind]['q']}':*"
                    print(f"\nplan, {kind}:\n    {plan(database_url, client_id, query)}")
        finally:
            server.terminate()
            server.wait(30)


if __name__ == "__main__":
    main()
