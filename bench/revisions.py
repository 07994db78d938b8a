"""What a change costs per answer: threadline at two or more commits, measured side by side.

    python3 tasks.py bench revisions [--rounds 5] [--scenario c64] REV [REV ...]

Each REV is a commit (`HEAD~1`, a hash, a branch) checked out in a temporary git worktree, or `.` for the
working tree as it is. Each is served the way `bench compare` serves threadline (the demo model on
PostgreSQL, one model call per answer, pinned to core 0, this load generator on core 1), its own code on
the import path, and measured in the scenario `bench compare` names (`c64`: 200-token answers at
concurrency 64; `c1`, `paced`, `open`). Rounds are interleaved; each figure is the median (min–max) over
rounds, and the last column is the server CPU per answer against the first REV's.

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
            for revision in revisions:
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
    parser.add_argument("--scenario", default="c64", choices=("c1", "c64", "paced", "open"))
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {1})
    with tempfile.TemporaryDirectory() as data_dir, bench_database(data_dir), checked_out(args.revisions) as trees:
        settings = threadline_settings(data_dir)
        rounds: dict[str, list[dict]] = {revision: [] for revision in args.revisions}
        for number in range(args.rounds):
            order = args.revisions[number % len(args.revisions) :] + args.revisions[: number % len(args.revisions)]
            for revision in order:
                print(f"round {number + 1}: {revision}", file=sys.stderr, flush=True)
                env = {**settings, "PYTHONPATH": str(trees[revision] / "backend")}
                peer = Peer(revision, [sys.executable, "-m", "threadline", "serve"], env)
                rounds[revision].append(measure(peer, args.scenario, data_dir))
    report(rounds, args.scenario)


def report(rounds: dict[str, list[dict]], scenario: str) -> None:
    results = {revision: median_of(rows) for revision, rows in rounds.items()}
    first = next(iter(results.values()))["cpu_per_answer_ms"]
    print(f"\n| revision | {scenario}: answers/s | server CPU per answer | × the first |\n|---|---|---|---|")
    for revision, r in results.items():
        ratio = r["cpu_per_answer_ms"] / first
        print(
            f"| {revision} | {spread(r, 'answers_per_s')} | {spread(r, 'cpu_per_answer_ms', '.2f')} ms | {ratio:.2f} |"
        )


if __name__ == "__main__":
    main()
