"""What A/B comparisons store: one conversation of `--turns` compared turns, each voted, against plain turns.

    python3 tasks.py bench ab-storage [--turns 40] [--chars 10000] [--rounds 3]

Each compared turn sends a `--chars`-character message with `compareProfiles` (two demo profiles, zero
delay), waits for both answers, and votes for B (the vote that used to copy the conversation again).
The plain conversation sends the same messages without a comparison. Printed per mode: the bytes the
conversation takes in PostgreSQL (its checkpoint threads, branches included, plus its comparison records;
`pg_column_size`, so after PostgreSQL's own compression), measured once what runs after an answer has
settled (old checkpoints pruned, B's branch deleted), the number of checkpoint threads, and the bytes the last 10 turns
added per turn (flat when storage grows linearly). Runs through the HTTP API
of an app on a scratch database (DATABASE_URL's server, else the local one on 127.0.0.1:5432).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import string
import uuid
from pathlib import Path
from tempfile import TemporaryDirectory

from litestar.testing import AsyncTestClient
from threadline.http.app import create_app
from threadline.settings import Settings, load_settings, replaced
from threadline_testing.database import conversation_footprint, fresh_database
from threadline_testing.sse import events_of

DEMO = {"id": "demo", "label": "Demo", "provider": "demo", "model": "demo", "default": True}
PROFILES = [DEMO, DEMO | {"id": "demo2", "label": "Demo 2", "default": False}]
ALPHABET = string.ascii_lowercase + " " * 5


async def settled_footprint(url: str, conversation_id: str) -> tuple[int, int]:
    """The footprint once what runs after an answer (pruning old checkpoints, deleting B's branch) is done:
    when two readings 50 ms apart agree (or after 2 s)."""
    last = await conversation_footprint(url, conversation_id)
    for _ in range(40):
        await asyncio.sleep(0.05)
        if (now := await conversation_footprint(url, conversation_id)) == last:
            break
        last = now
    return last


async def finished(client: AsyncTestClient, comparison_id: str) -> None:
    for _ in range(2000):
        record = (await client.get(f"/api/comparisons/{comparison_id}")).json()
        if record["a"].get("text") is not None and record["b"].get("text") is not None:
            return
        await asyncio.sleep(0.01)
    raise RuntimeError("a comparison never finished")


async def conversation(url: str, turns: int, chars: int, compared: bool) -> list[tuple[int, int]]:
    """The footprint after each turn."""
    sizes = []
    words = random.Random(7)
    with TemporaryDirectory() as data_dir:
        settings = replaced(
            Settings(),
            model_provider="demo",
            database_url=url,
            data_dir=Path(data_dir),
            demo_token_delay_ms=0.0,
            rate_limit="100000/minute",
            profiles=load_settings({"CHAT_PROFILES": json.dumps(PROFILES)}).models.profiles,
        )
        async with AsyncTestClient(app=create_app(settings), timeout=60) as client:
            conversation_id = uuid.uuid4().hex
            for _ in range(turns):
                text = "".join(words.choices(ALPHABET, k=chars))
                body = {
                    "id": conversation_id,
                    "trigger": "submit-message",
                    "messages": [{"id": uuid.uuid4().hex, "role": "user", "parts": [{"type": "text", "text": text}]}],
                }
                if compared:
                    body["compareProfiles"] = ["demo", "demo2"]
                response = await client.post("/api/chat", json=body)
                assert response.status_code == 200, response.text
                if compared:
                    start = next(events_of(response))
                    comparison_id = start["messageMetadata"]["comparisonId"]
                    await finished(client, comparison_id)
                    vote = await client.post(f"/api/comparisons/{comparison_id}/vote", json={"preference": "B"})
                    assert vote.status_code == 200, vote.text
                sizes.append(await settled_footprint(url, conversation_id))
    return sizes


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--chars", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results: dict[str, list[list[tuple[int, int]]]] = {"plain": [], "compared": []}
    with TemporaryDirectory() as scratch, fresh_database(Path(scratch)) as url:
        for _ in range(args.rounds):  # interleaved
            for mode in results:
                results[mode].append(await conversation(url, args.turns, args.chars, mode == "compared"))
    print(f"{args.turns} turns of {args.chars:,} characters, {args.rounds} rounds (median, min–max)")
    for mode, rounds in results.items():
        totals = [sizes[-1][0] for sizes in rounds]
        threads = [sizes[-1][1] for sizes in rounds]
        tail = [(sizes[-1][0] - sizes[-11][0]) / 10 for sizes in rounds if len(sizes) > 10]
        print(
            f"{mode:>9}: {statistics.median(totals) / 1e6:.2f} MB ({min(totals) / 1e6:.2f}–{max(totals) / 1e6:.2f}), "
            f"{statistics.median(threads):.0f} thread(s), "
            + (f"last 10 turns add {statistics.median(tail) / 1e3:.0f} KB per turn" if tail else "")
        )


if __name__ == "__main__":
    asyncio.run(main())
