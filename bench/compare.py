"""Side by side on one machine: threadline, the AI SDK's own server, an equal-work LangGraph + PostgreSQL
peer and a bare Litestar floor.

    python3 tasks.py bench compare [--rounds 5]

Each peer runs as its own process pinned to core 0, on a database of the run's own; this load generator
(raw HTTP/1.1 on asyncio streams, so it is not the bottleneck; its CPU is reported) runs on core 1, each client on
a connection it keeps from answer to answer, as a browser does (`--new-connections`: one per answer, as runs before
2026-11-28 did). `--scenarios c64` runs only those.
Rounds are interleaved, and medians over rounds, with their min–max, are printed as a table, with
ratios against the AI SDK peer, and drawn to docs/bench-compare.png.

- answers: 200-token answers at zero model delay, at concurrency 1 and 64;
- paced: one at a time, 20 tokens 20 ms apart: the first token then waits for the model, not for a
  whole answer already made, so the difference to the bare floor is what a peer adds before it;
- open streams: 1000 streams at once, 40 tokens 50 ms apart (ideal 2.0 s each);
- starts (only with `--scenarios starts`): two-token answers at concurrency 64, so that a server's CPU per answer is
  what starting and ending one costs it.

Peers: the AI SDK 7 Node server (streamText + MockLanguageModelV4 from `ai/test` +
pipeUIMessageStreamToResponse, bench/peers/aisdk_server.mjs), on the Node 22 that bench/package.json pins
(ai@7 declares node >= 22; the machine's Node 20 runs it slower); bare Litestar writing pre-built chunks
(bench/peers/bare_server.py); threadline with its real graph, tools, traces, the demo model (without
its suggestion call and a new conversation's title call, so every peer makes one model call and sends the
same answer) and PostgreSQL (plus, at concurrency 1, with
everything kept in memory, to price PostgreSQL; and the same agent as a team would host it, examples/builtin.py's
`create_agent` with two middleware, at concurrency 1 and 64); and the equal-work peer, LangGraph with
AsyncPostgresSaver and the same demo model behind a minimal Litestar route
(bench/peers/langgraph_postgres.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

import httpx
from raw_client import answers_at, requests_at
from stream_bench import ROOT, bench_database, cpu_seconds, database_url, peak_rss_mb
from threadline_testing.ports import free_port

BENCH = ROOT / "bench"
CHART = ROOT / "docs" / "bench-compare.png"
# The same answer as the other peers: no suggestion call after it, as for a paid profile (the demo
# profile's default suggests; `bench breakdown` prices that).
NO_SUGGESTIONS = '[{"id":"demo","provider":"demo","model":"demo","suggestions":false}]'


@dataclass
class Peer:
    name: str
    command: list[str]
    env: dict[str, str] = field(default_factory=dict)


def peers(data_dir: str) -> list[Peer]:
    return [
        Peer("AI SDK 7 (Node)", [supported_node(), str(BENCH / "peers" / "aisdk_server.mjs")]),
        Peer("bare Litestar", [sys.executable, str(BENCH / "peers" / "bare_server.py")]),
        *python_peers(data_dir),
    ]


def python_peers(data_dir: str) -> list[Peer]:
    """threadline and, on its database, the equal-work LangGraph peer: the two that need no Node."""
    threadline_env = threadline_settings(data_dir)
    return [
        Peer("threadline", [sys.executable, "-m", "threadline", "serve"], threadline_env),
        *equal_work_peer(threadline_env.get("DATABASE_URL")),
    ]


def threadline_settings(data_dir: str) -> dict[str, str]:
    """threadline as every peer is measured: the demo model, no limits in the way, one model call per answer."""
    threadline_env = {
        "CHAT_MODEL_PROVIDER": "demo",
        "THREADLINE_DATA_DIR": data_dir,
        "LOG_LEVEL": "WARNING",
        "CHAT_RATE_LIMIT": "1000000/minute",
        "API_RATE_LIMIT": "1000000/minute",
        "THREADLINE_MAX_CONNECTIONS": "100000",
        "CHAT_PROFILES": NO_SUGGESTIONS,
        "CHAT_GENERATED_TITLES": "false",  # equal work: one model call per answer, as every peer makes
    }
    if url := database_url():
        threadline_env["DATABASE_URL"] = url
    return threadline_env


HOSTED = "threadline, hosted create_agent"
# The built-in agent written as a team's own: `create_agent` with two middleware (approvals, a call limit).
HOSTED_AGENT = {"THREADLINE_GRAPH": str(ROOT / "examples" / "builtin.py") + ":graph"}

NODE_MAJOR = 22  # what ai@7 declares (engines: node >= 22): an older Node runs it slower, flattering the ratios


def supported_node() -> str:
    """The Node that bench/package.json pins (the `node` package, installed by tasks.py), checked to be one
    the AI SDK supports; the machine's own Node may be older."""
    node = BENCH / "node_modules" / ".bin" / "node"
    version = subprocess.run([str(node), "--version"], capture_output=True, text=True, check=False).stdout.strip()
    if not version.startswith("v") or int(version[1:].split(".")[0]) < NODE_MAJOR:
        sys.exit(f"the AI SDK peer needs Node {NODE_MAJOR}+ from bench/node_modules (found {version or 'none'})")
    return str(node)


def equal_work_peer(url: str | None) -> list[Peer]:
    """LangGraph with its own AsyncPostgresSaver behind a minimal route; it needs a PostgreSQL server's URL."""
    if not url:
        print("no PostgreSQL server for the LangGraph + Postgres peer (set DATABASE_URL): it is left out")
        return []
    return [
        Peer(
            "LangGraph + Postgres",
            [sys.executable, str(BENCH / "peers" / "langgraph_postgres.py")],
            {"DATABASE_URL": url},
        )
    ]


def start(
    peer: Peer, tokens: int, delay_ms: float, extra: dict[str, str] | None = None
) -> tuple[subprocess.Popen, int]:
    port = free_port()
    env = {
        **os.environ,
        **peer.env,
        **(extra or {}),
        "PORT": str(port),
        "THREADLINE_PORT": str(port),
        "TOKENS": str(tokens),
        "DELAY_MS": str(delay_ms),
        "CHAT_DEMO_TOKEN_DELAY_MS": str(delay_ms),
    }
    command = peer.command
    if shutil.which("taskset") and (os.cpu_count() or 1) > 1:
        command = ["taskset", "-c", "0", *command]
    process = subprocess.Popen(command, env=env, cwd=ROOT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return process, port
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit(f"{peer.name} did not start")


def quantile(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 1 else values[0]


SCENARIOS = ("c1", "c64", "paced", "open")  # what a run measures, each peer in each round
CONCURRENCY = {"c1": "1", "c64": "64", "starts": "64, 2 tokens"}  # as the answers table names each


def measure(
    peer: Peer,
    scenario: str,
    data_dir: str,
    extra: dict[str, str] | None = None,
    keep_alive: bool = True,
    c64_answers: int = 320,
) -> dict:
    tokens, delay, concurrency, answers = {
        "c1": (200, 0, 1, 60),
        "c64": (200, 0, 64, c64_answers),
        "paced": (20, 20, 1, 60),
        "open": (40, 50, 1000, 1000),
        "starts": (2, 0, 64, 4 * c64_answers),
        "long": (200, 0, 16, 3000),  # a server that has answered for a while: what it still holds
        "list": (0, 0, 16, 8000),  # a light request: a visitor's first page of conversations, 8000 times
    }[scenario]

    def load(concurrency: int, answers: int) -> list:
        if scenario == "list":
            return asyncio.run(requests_at(port, "/api/conversations", concurrency, answers))
        return asyncio.run(answers_at(port, tokens, concurrency, answers, keep_alive=keep_alive))

    process, port = start(peer, tokens, delay, extra)
    try:
        load(min(concurrency, 16), 32)  # warm-up
        cpu_before, client_before, wall = cpu_seconds(process.pid), time.process_time(), time.perf_counter()
        results = load(concurrency, answers)
        wall = time.perf_counter() - wall
        server_cpu = cpu_seconds(process.pid) - cpu_before
        client_cpu = time.process_time() - client_before
        rss = peak_rss_mb(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=60)
    done = [result for result in results if not isinstance(result, str)]
    first_byte, first_delta, total = ([row[i] for row in done] for i in range(3)) if done else ([], [], [])
    return {
        "errors": len(results) - len(done),
        "first_byte_p50": quantile(first_byte, 50) * 1000 if done else float("nan"),
        "first_delta_p50": quantile(first_delta, 50) * 1000 if done else float("nan"),
        "total_p50": quantile(total, 50) * 1000 if done else float("nan"),
        "total_p95": quantile(total, 95) * 1000 if done else float("nan"),
        "answers_per_s": len(done) / wall,
        "chunks_per_s": len(done) * (tokens + 7) / wall,
        "cpu_per_answer_ms": server_cpu / max(len(done), 1) * 1000,
        "cpu_per_token_us": server_cpu / max(len(done) * tokens, 1) * 1e6,
        "peak_rss_mb": rss,
        "client_cpu": client_cpu / wall,
    }


def median_of(rounds: list[dict]) -> dict:
    """Each figure's median over the rounds, and its range as `<key>_min` / `<key>_max`."""
    summary = {}
    for key in rounds[0]:
        values = [r[key] for r in rounds]
        summary |= {key: statistics.median(values), f"{key}_min": min(values), f"{key}_max": max(values)}
    return summary


def spread(r: dict, key: str, form: str = ".1f", scale: float = 1.0) -> str:
    """`median (min–max)` of one figure, so a reader sees how much a rerun may differ."""
    low, mid, high = (format(r[name] * scale, form) for name in (f"{key}_min", key, f"{key}_max"))
    return mid if low == high else f"{mid} ({low}–{high})"


def draw(results: dict, names: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        ("answers/s, 200 tokens, c=64", "c64", "answers_per_s"),
        ("first text-delta p50 (ms), one at a time, 20 ms between tokens", "paced", "first_delta_p50"),
        ("1000 open streams: p95 total (s)", "open", "total_p95"),
        ("1000 open streams: peak RSS (MB)", "open", "peak_rss_mb"),
    ]
    figure, axes = plt.subplots(1, len(panels), figsize=(16, 3.6))
    colors = ["#6b7280", "#9ca3af", "#2563eb", "#7c3aed"]
    for axis, (title, scenario, key) in zip(axes, panels):
        values = [results[name][scenario][key] / (1000 if key == "total_p95" else 1) for name in names]
        axis.bar(range(len(names)), values, color=colors)
        axis.set_xticks(range(len(names)), names, rotation=15, fontsize=8)
        axis.set_title(title, fontsize=9)
        for index, value in enumerate(values):
            axis.annotate(f"{value:,.1f}", (index, value), ha="center", va="bottom", fontsize=8)
    figure.tight_layout()
    CHART.parent.mkdir(exist_ok=True)
    figure.savefig(CHART, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=(*SCENARIOS, "starts"))
    parser.add_argument(
        "--new-connections", action="store_true", help="a connection per answer, not one kept per client"
    )
    parser.add_argument("--c64-answers", type=int, default=320, help="answers per round at c=64")
    args = parser.parse_args()
    keep_alive = not args.new_connections
    if not (BENCH / "node_modules" / "ai").exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=BENCH, check=True)
    resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {1})
    with tempfile.TemporaryDirectory() as data_dir, bench_database(data_dir):
        everyone = peers(data_dir)
        rounds: dict[str, dict[str, list[dict]]] = {peer.name: {} for peer in everyone}
        rounds["threadline, in memory"] = {}
        rounds[HOSTED] = {}
        for round_number in range(args.rounds):
            order = everyone[round_number % len(everyone) :] + everyone[: round_number % len(everyone)]
            for scenario in args.scenarios:
                for peer in order:
                    print(f"round {round_number + 1}: {peer.name}, {scenario}", file=sys.stderr, flush=True)
                    measured = measure(peer, scenario, data_dir, keep_alive=keep_alive, c64_answers=args.c64_answers)
                    rounds[peer.name].setdefault(scenario, []).append(measured)
            ours = next(peer for peer in everyone if peer.name == "threadline")
            if "c1" in args.scenarios:
                rounds["threadline, in memory"].setdefault("c1", []).append(
                    measure(ours, "c1", data_dir, {"CHAT_MEMORY_BACKEND": "memory"}, keep_alive)
                )
            for scenario in {"c1", "c64"} & set(args.scenarios):
                measured = measure(ours, scenario, data_dir, HOSTED_AGENT, keep_alive, args.c64_answers)
                rounds[HOSTED].setdefault(scenario, []).append(measured)
    results = {
        name: {scenario: median_of(values) for scenario, values in scenarios.items()}
        for name, scenarios in rounds.items()
    }
    report(results)
    if set(args.scenarios) == set(SCENARIOS) and keep_alive:  # the chart docs/performance.md shows: a whole run
        draw(results, [peer.name for peer in everyone])


def report(results: dict) -> None:
    sdk = results["AI SDK 7 (Node)"]
    print(
        "\n| peer | c | first byte p50 | first text-delta p50 | total p50 | answers/s | × AI SDK | chunks/s "
        "| CPU/answer | CPU/token | peak RSS | errors |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, scenarios in results.items():
        for scenario in ("c1", "c64", "starts"):
            if scenario not in scenarios:
                continue
            r = scenarios[scenario]
            print(
                f"| {name} | {CONCURRENCY[scenario]} | {r['first_byte_p50']:.1f} ms | "
                f"{spread(r, 'first_delta_p50')} ms | "
                f"{r['total_p50']:.1f} ms | {spread(r, 'answers_per_s')} | "
                f"{r['answers_per_s'] / sdk[scenario]['answers_per_s']:.2f} | {r['chunks_per_s']:,.0f} | "
                f"{spread(r, 'cpu_per_answer_ms')} ms | {r['cpu_per_token_us']:.1f} µs | {r['peak_rss_mb']:.0f} MB | "
                f"{r['errors']:.0f} |"
            )
    print("\n| peer | 1000 open streams: errors | p95 total (ideal 2.0 s) | peak RSS |")
    print("|---|---|---|---|")
    for name, scenarios in results.items():
        if "open" in scenarios:
            r = scenarios["open"]
            p95 = spread(r, "total_p95", ".2f", 1 / 1000)
            print(f"| {name} | {r['errors']:.0f} | {p95} s | {spread(r, 'peak_rss_mb', '.0f')} MB |")
    if "paced" in results["bare Litestar"]:
        print("\n| peer | paced (20 ms between tokens), first `text-delta` p50 | over the bare floor |")
        print("|---|---|---|")
        floor = results["bare Litestar"]["paced"]["first_delta_p50"]
        for name, scenarios in results.items():
            if "paced" in scenarios:
                first = scenarios["paced"]["first_delta_p50"]
                print(f"| {name} | {spread(scenarios['paced'], 'first_delta_p50')} ms | {first - floor:+.1f} ms |")
    if "c1" in (memory := results["threadline, in memory"]):
        total = results["threadline"]["c1"]["total_p50"] - memory["c1"]["total_p50"]
        print(
            f"\nPostgreSQL costs {total:.1f} ms per answer (total p50 at c=1, the same server on PostgreSQL vs in "
            "memory: every round trip of an answer, not only its checkpoints)."
        )
    print(
        f"load generator CPU: {max(r['client_cpu'] for s in results.values() for r in s.values()):.0%} of a core "
        "at most"
    )


if __name__ == "__main__":
    main()
