#!/usr/bin/env python3
"""One entry point for people and CI, needing only Python 3.11+ and Node 20+ (standard library only).

    python3 tasks.py serve   install what is missing, then run the server (demo model unless configured)
    python3 tasks.py test    install what is missing, then run every test
    python3 tasks.py bench   install what is missing, then run the benchmarks in bench/

Dependencies come from the lock files (requirements.lock, conformance/package-lock.json) and are
installed again only when a lock file changes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / "python"
NODE_PROJECTS = [ROOT / "conformance"]


def say(message: str) -> None:
    print(f"tasks.py: {message}", flush=True)


def run(*command: str | Path, cwd: Path = ROOT, env: dict[str, str] | None = None) -> None:
    subprocess.run([str(part) for part in command], cwd=cwd, env=env, check=True)


def _digest(*files: Path) -> str:
    return hashlib.sha256(b"".join(path.read_bytes() for path in files)).hexdigest()


def ensure_python() -> None:
    if sys.version_info < (3, 11):
        sys.exit("tasks.py: threadline needs Python 3.11 or newer")
    if not PYTHON.exists():
        say("creating the virtual environment in .venv")
        run(sys.executable, "-m", "venv", VENV)
    stamp = VENV / ".installed"
    wanted = _digest(ROOT / "requirements.lock", ROOT / "pyproject.toml")
    if stamp.exists() and stamp.read_text() == wanted:
        return
    say("installing Python dependencies from requirements.lock")
    run(PYTHON, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", "requirements.lock")
    run(PYTHON, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps", "-e", ".")
    stamp.write_text(wanted)


def ensure_node(project: Path) -> None:
    if shutil.which("npm") is None:
        sys.exit("tasks.py: threadline needs Node.js 20+ with npm on PATH")
    stamp = project / "node_modules" / ".installed"
    wanted = _digest(project / "package-lock.json")
    if stamp.exists() and stamp.read_text() == wanted:
        return
    say(f"installing npm packages in {project.relative_to(ROOT)}")
    run("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error", cwd=project)
    stamp.write_text(wanted)


def serve(args: list[str]) -> int:
    ensure_python()
    env = dict(os.environ)
    if "CHAT_MODEL_PROVIDER" not in env:
        env["CHAT_MODEL_PROVIDER"] = "demo"
        say("CHAT_MODEL_PROVIDER is not set: using the offline demo model (see README to use Gemini or OpenAI)")
    return subprocess.call([str(BIN / "threadline"), "serve", *args], cwd=ROOT, env=env)


def test(args: list[str]) -> int:
    ensure_python()
    for project in NODE_PROJECTS:
        ensure_node(project)
    return subprocess.call([str(PYTHON), "-m", "pytest", *args], cwd=ROOT)


def bench(args: list[str]) -> int:
    ensure_python()
    return subprocess.call([str(PYTHON), str(ROOT / "bench" / "stream_bench.py"), *args], cwd=ROOT)


COMMANDS = {"serve": serve, "test": test, "bench": bench}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    sys.exit(COMMANDS[sys.argv[1]](sys.argv[2:]))
