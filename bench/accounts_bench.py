"""What signing in costs: the same answers asked anonymously and as signed-in users, interleaved round by round
on one server (AUTH_ISSUER set, a local OpenID Connect stand-in), at concurrency 1 and 64. A benchmark, never a
test: run it by hand

    python3 tasks.py bench accounts [--rounds 5] [--requests 128] [--tokens 200]

Each signed-in client is a user of its own with an RS256 token made before the clock starts. Prints, per mode
and concurrency, the median and range over the rounds of answers/s, total time p50 and server CPU per answer,
and how often the server fetched the provider's keys: once, however many requests it verified.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time

from raw_client import answers_at
from stream_bench import bench_database, cpu_seconds, ms, start_server
from threadline_testing import oidc
from threadline_testing.ports import free_port

MODES = ("anonymous", "signed in")


def spread(values: list[float], unit: str, digits: int = 1) -> str:
    return f"{statistics.median(values):.{digits}f}{unit} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=128, help="answers per mode, concurrency and round")
    parser.add_argument("--tokens", type=int, default=200, help="tokens per answer")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 64])
    args = parser.parse_args()
    provider = oidc.start()
    port = free_port()
    figures: dict[tuple[str, int], list[tuple[float, float, float]]] = {}
    with tempfile.TemporaryDirectory() as data_dir, bench_database(data_dir):
        server = start_server(port, data_dir, AUTH_ISSUER=provider.issuer, AUTH_AUDIENCE=oidc.AUDIENCE)
        try:
            for round_number in range(args.rounds):
                users = [
                    f"authorization: Bearer {provider.token(f'bench-{round_number}-{n}', lifetime=3600)}\r\n"
                    for n in range(max(args.concurrency))
                ]
                headers = {"anonymous": lambda _: "", "signed in": users.__getitem__}
                if round_number == 0:  # warm-up: imports, pools, caches, the provider's keys
                    for mode in MODES:
                        asyncio.run(answers_at(port, args.tokens, 8, 32, headers[mode]))
                order = MODES if round_number % 2 == 0 else MODES[::-1]
                for concurrency in args.concurrency:
                    for mode in order:
                        cpu_before, wall = cpu_seconds(server.pid), time.perf_counter()
                        results = asyncio.run(answers_at(port, args.tokens, concurrency, args.requests, headers[mode]))
                        wall = time.perf_counter() - wall
                        failed = [result for result in results if isinstance(result, str)]
                        assert not failed, failed[:3]
                        cpu = (cpu_seconds(server.pid) - cpu_before) / len(results) * 1000
                        totals = [result[2] for result in results]
                        figures.setdefault((mode, concurrency), []).append((len(results) / wall, ms(totals, 50), cpu))
                print(f"round {round_number + 1} of {args.rounds} done", flush=True)
        finally:
            server.terminate()
            server.wait(timeout=30)
            provider.stop()
    print(f"\n{'mode':<10} {'c':>3} {'answers/s':>22} {'total p50':>26} {'srv CPU/answer':>24}")
    for (mode, concurrency), rows in sorted(figures.items(), key=lambda item: (item[0][1], item[0][0])):
        rates, totals, cpus = (list(column) for column in zip(*rows))
        columns = f"{spread(rates, ''):>22} {spread(totals, 'ms'):>26} {spread(cpus, 'ms', 2):>24}"
        print(f"{mode:<10} {concurrency:>3} {columns}")
    print(f"the provider's keys were fetched {provider.key_fetches} time(s)")


if __name__ == "__main__":
    main()
