"""Load benchmark: how many open streams one server process holds with zero errors.

Each stream is a 40-token answer at 20 tokens/s from the demo model (ideal: 2.0 s), through the
real graph with PostgreSQL checkpoints. All streams of a level start at once; the report gives
errors, p95 time to the first token and to the end, and the server's peak memory. Bounded and on
loopback only; a benchmark, never a test. Run it by hand:

    .venv/bin/python bench/load_bench.py [--levels 250 500 1000 2000]

The client speaks raw HTTP/1.1 on asyncio streams so that it is not the bottleneck.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import tempfile

from raw_client import Connection, one_answer
from stream_bench import bench_database, peak_rss_mb, start_server
from threadline_testing.ports import free_port

TOKENS, TOKEN_DELAY_MS = 40, 50


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[18] if len(values) > 1 else values[0]


async def level(port: int, streams: int) -> dict:
    results = await asyncio.gather(*(one_answer(Connection(port, keep_alive=False), TOKENS) for _ in range(streams)))
    done = [result for result in results if not isinstance(result, str)]
    errors = [result for result in results if isinstance(result, str)]
    return {
        "streams": streams,
        "errors": len(errors),
        "first_errors": sorted(set(errors))[:3],
        "p95_first_token": p95([r[1] for r in done]) if done else float("nan"),
        "p95_total": p95([r[2] for r in done]) if done else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--levels", type=int, nargs="+", default=[250, 500, 1000, 2000])
    args = parser.parse_args()
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    port = free_port()
    ideal = TOKENS * TOKEN_DELAY_MS / 1000
    with tempfile.TemporaryDirectory() as data_dir, bench_database(data_dir):
        server = start_server(port, data_dir, token_delay_ms=TOKEN_DELAY_MS)
        try:
            asyncio.run(level(port, 20))  # warm-up
            print(f"{TOKENS} tokens at {1000 / TOKEN_DELAY_MS:.0f}/s per stream, ideal {ideal:.1f} s")
            print(f"{'streams':>8} {'errors':>7} {'p95 first token':>16} {'p95 total':>10} {'peak RSS':>9}")
            for streams in args.levels:
                result = asyncio.run(level(port, streams))
                print(
                    f"{streams:>8} {result['errors']:>7} {result['p95_first_token'] * 1000:>14.0f}ms "
                    f"{result['p95_total']:>9.2f}s {peak_rss_mb(server.pid):>7.0f}MB"
                    + (f"  e.g. {result['first_errors']}" if result["errors"] else "")
                )
        finally:
            server.terminate()
            server.wait(timeout=60)


if __name__ == "__main__":
    main()
