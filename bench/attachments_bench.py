"""What an attachment costs the conversation that carries it: checkpoint bytes per turn with a 5 MB file, against
the same turns without one, and the time a 5 MB message takes to be answered. A benchmark, never a test:

    python3 tasks.py bench attachments [--turns 5] [--megabytes 5] [--rounds 3]

One server (demo model, zero delay, its own database on DATABASE_URL's server, else the local one) answers
`--turns` messages in one conversation, each with a different `--megabytes` text file as a data URL (as
`useChat` sends it), and `--turns` plain messages in another, interleaved round by round. Printed per round:
the checkpoint bytes of each conversation after its turns (`pg_column_size`, after PostgreSQL's compression)
and per turn, the file bytes stored, and the median time of a turn with a file and without.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import statistics
import tempfile
import time
import uuid

import httpx
import psycopg
from stream_bench import bench_database, start_server
from threadline_testing.ports import free_port


def text_file(megabytes: float) -> bytes:
    """A text file of random lowercase lines: as compressible as prose, different every time."""
    line = lambda: base64.b32encode(os.urandom(45)).decode().lower() + "\n"  # noqa: E731
    return "".join(line() for _ in range(int(megabytes * 1024 * 1024 / 73))).encode()


def body(conversation_id: str, text: str, file: bytes | None) -> dict:
    parts: list[dict] = [{"type": "text", "text": text}]
    if file is not None:
        url = "data:text/plain;base64," + base64.b64encode(file).decode()
        parts.append({"type": "file", "mediaType": "text/plain", "filename": "data.txt", "url": url})
    return {"id": conversation_id, "messages": [{"role": "user", "parts": parts}]}


async def turns(client: httpx.AsyncClient, count: int, megabytes: float | None) -> tuple[str, list[float], int]:
    """One conversation of `count` turns; its id, each turn's seconds, and the file bytes sent."""
    conversation_id, seconds, sent = f"b{uuid.uuid4().hex[:16]}", [], 0
    for turn in range(count):
        file = text_file(megabytes) if megabytes else None
        sent += len(file or b"")
        started = time.perf_counter()
        response = await client.post("/api/chat", json=body(conversation_id, f"turn {turn}", file))
        assert response.status_code == 200 and b'"type":"finish"' in response.content, response.text[:200]
        seconds.append(time.perf_counter() - started)
    return conversation_id, seconds, sent


def checkpoint_bytes(url: str, conversation_id: str) -> int:
    tables = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
    query = " + ".join(
        f"(SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM {table} t WHERE thread_id LIKE %(t)s)" for table in tables
    )
    with psycopg.connect(url) as conn:
        row = conn.execute(f"SELECT {query}", {"t": f"%:{conversation_id}"}).fetchone()
    return int(row[0]) if row else 0


def stored_file_bytes(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT coalesce(sum(pg_column_size(data)), 0) FROM file_blobs").fetchone()
    return int(row[0]) if row else 0


async def main_async(args: argparse.Namespace, url: str, port: int) -> None:
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
        client.headers["x-threadline-client"] = (await client.get("/health")).headers["x-threadline-client"]
        print(
            f"{'round':>5} {'with files: checkpoint':>24} {'per turn':>10} {'plain: checkpoint':>18} {'per turn':>10} "
            f"{'file bytes sent':>16} {'stored':>12} {'turn with file':>15} {'plain turn':>11}"
        )
        for round_number in range(1, args.rounds + 1):
            before = stored_file_bytes(url)
            order = [args.megabytes, None] if round_number % 2 else [None, args.megabytes]
            results = {}
            for megabytes in order:
                results[megabytes is not None] = await turns(client, args.turns, megabytes)
            (with_id, with_seconds, sent), (plain_id, plain_seconds, _) = results[True], results[False]
            with_size, plain_size = checkpoint_bytes(url, with_id), checkpoint_bytes(url, plain_id)
            stored = stored_file_bytes(url) - before
            print(
                f"{round_number:>5} {with_size:>24,} {with_size // args.turns:>10,} {plain_size:>18,} "
                f"{plain_size // args.turns:>10,} {sent:>16,} {stored:>12,} "
                f"{statistics.median(with_seconds) * 1000:>13.0f}ms {statistics.median(plain_seconds) * 1000:>9.0f}ms"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--megabytes", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as data_dir, bench_database(data_dir):
        server = start_server(port, data_dir, FILE_QUOTA_BYTES=str(1 << 40))
        try:
            asyncio.run(main_async(args, os.environ["DATABASE_URL"], port))
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
