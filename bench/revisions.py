"""What a change costs per answer: threadline at two or more commits, measured side by side.

    python3 tasks.py bench revisions [--rounds 5] [--scenario c64] REV[,KEY=VALUE...] [REV ...]

Each REV is a commit (`HEAD~1`, a hash, a branch) checked out in a temporary git worktree, or `.` for the
working tree as it is; settings after it are that run's own (`HEAD,THREADLINE_GRAPH=examples/builtin.py:graph`
is the built-in agent hosted as a team's, paths relative to the repository). Each is served the way
`bench compare` serves threadline (the demo model on PostgreSQL, one model call per answer, pinned to core 0,
this load generator on core 1), its own code on the import path, and measured in the scenario `bench compare`
names (`c64`: 200-token answers at concurrency 64; `c1`, `paced`, `open`; and `long`, 3000 answers at
concurrency 16, whose peak RSS is what a server that has answered for a while holds; `list`, no answer but a
light request: 8000 GETs of a visitor's first page of conversations by 16 keep-alive clients, each figure per
request). Rounds are interleaved; each figure is the median (min–max) over rounds, and the last column is the
server CPU per answer against the first run's.

For the closing note of a change on the answer path: `python3 tasks.py bench revisions HEAD~1 .`
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from compare import Peer, measure, median_of, spread, threadline_settings
from stream_bench import ROOT, bench_database


@contextlib.contextmanager
def checked_out(revisions: list[str]) -> Iterator[dict[str, Path]]:
    """Each revision's source tree: a temporary worktree, or the working tree for `.`."""
    with tempfile.TemporaryDirectory() as folder:
        trees: dict[str, Path] = {}
        try:
            for revision in dict.fromkeys(revisions):
                if revision == ".":
                    trees[revision] = ROOT
                    continue
                tree = Path(folder) / f"tree{len(trees)}"
                subprocess.run(["git", "worktree", "add", "--detach", "-q", str(tree), revision], cwd=ROOT, check=True)
                trees[revision] = tree
            yield trees
        finally:
            for revision, tree in trees.items():
                if revision != ".":
                    subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("revisions", nargs="+", metavar="REV")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--scenario", default="c64", choices=("c1", "c64", "paced", "open", "long", "list", "starts"))
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {1})
    runs = {run: run.split(",") for run in args.revisions}  # each run: its revision, then its own settings
    commits = [revision for revision, *_ in runs.values()]
    with tempfile.TemporaryDirectory() as data_dir, bench_database(data_dir), checked_out(commits) as trees:
        settings = threadline_settings(data_dir)
        rounds: dict[str, list[dict]] = {revision: [] for revision in args.revisions}
        for number in range(args.rounds):
            order = args.revisions[number % len(args.revisions) :] + args.revisions[: number % len(args.revisions)]
            for run in order:
                print(f"round {number + 1}: {run}", file=sys.stderr, flush=True)
                revision, *own = runs[run]
                env = {**settings, **dict(pair.split("=", 1) for pair in own)}
                env["PYTHONPATH"] = str(trees[revision] / "backend")
                rounds[run].append(
                    measure(Peer(run, [sys.executable, "-m", "threadline", "serve"], env), args.scenario, data_dir)
                )
    report(rounds, args.scenario)


COLUMNS = (  # what each run is compared by: its figure, how it is printed, its unit
    ("errors", "errors", ".0f", ""),
    ("answers_per_s", "answers/s", ".1f", ""),
    ("first_delta_p50", "first text-delta p50", ".1f", " ms"),
    ("total_p95", "total p95", ".0f", " ms"),
    ("peak_rss_mb", "peak RSS", ".0f", " MB"),
    ("cpu_per_answer_ms", "server CPU per answer", ".2f", " ms"),
)


def report(rounds: dict[str, list[dict]], scenario: str) -> None:
    results = {run: median_of(rows) for run, rows in rounds.items()}
    first = next(iter(results.values()))["cpu_per_answer_ms"]
    print(f"\n{scenario}:\n| run | " + " | ".join(title for _, title, _, _ in COLUMNS) + " | CPU × the first |")
    print("|---" * (len(COLUMNS) + 2) + "|")
    for run, r in results.items():
        cells = [spread(r, key, form) + unit for key, _, form, unit in COLUMNS]
        print(f"| {run} | " + " | ".join(cells) + f" | {r['cpu_per_answer_ms'] / first:.2f} |")


if __name__ == "__main__":
    main()
