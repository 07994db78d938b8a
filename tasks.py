#!/usr/bin/env python3
"""One entry point for people and CI, needing only Python 3.11+ and Node 20+ (standard library only).

    python3 tasks.py serve   install what is missing, then run the server (demo model unless configured)
    python3 tasks.py test    install what is missing, then run every test
    python3 tasks.py docs    install what is missing, then build the manual (docs/) into site/, strictly
    python3 tasks.py lock    compile the lock files again from pyproject.toml (with uv): requirements.lock
                             for development, requirements/production.lock for deployments
    python3 tasks.py wheel   build the wheels into dist/: threadline's, with the chat page in it, and
                             threadline-client's (the Python client alone: httpx, httpx-sse, msgspec)
    python3 tasks.py bench [NAME]  install what is missing, then run a benchmark in bench/: stream (the
                             default), compare, breakdown, capacity, load, encode, mcp, layers,
                             checkpoint, storage, ab-storage, observability, context, resume,
                             accounts, attachments, search, workers, shapes, census, idle, frontends or revisions
                             (a change's cost per answer: `bench revisions HEAD~1 .`)

Dependencies come from the lock files (requirements.lock, which uv compiles from pyproject.toml with
every extra and group, and the package-lock.json files of conformance/, frontend/ and bench/) and are
installed again, by uv and npm, only when a lock file changes (`python3 tasks.py lock` compiles it
again after pyproject.toml changes); the chat page in frontend/ is built again only when its sources
change. The browser tests drive the system's Chromium, and one test runs two servers
behind the system's nginx; both are installed through apt-get when missing.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / "python"
FRONTEND = ROOT / "frontend"
CHROMIUM_NAMES = ("chromium", "chromium-browser")


def say(message: str) -> None:
    print(f"tasks.py: {message}", flush=True)


def run(*command: str | Path, cwd: Path = ROOT, env: dict[str, str] | None = None) -> None:
    subprocess.run([str(part) for part in command], cwd=cwd, env=env, check=True)


def _digest(*files: Path) -> str:
    return hashlib.sha256(b"".join(path.read_bytes() for path in files)).hexdigest()


UV_VERSION = "0.13.9"
TOOLS = ROOT / ".tools"  # uv, when the machine has none: installed here with pip, once


def uv() -> str:
    """uv installs the locked dependencies in seconds; found on PATH, or put into .tools with pip."""
    if found := shutil.which("uv"):
        return found
    tool = TOOLS / BIN.name / "uv"
    if not tool.exists():
        say(f"installing uv {UV_VERSION} into .tools (it installs the locked dependencies)")
        run(sys.executable, "-m", "venv", TOOLS)
        run(
            TOOLS / BIN.name / "python",
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            f"uv=={UV_VERSION}",
        )
    return str(tool)


def ensure_python() -> None:
    """.venv holds exactly requirements.lock (every extra and group, compiled by uv from pyproject.toml)."""
    if sys.version_info < (3, 11):
        sys.exit("tasks.py: threadline needs Python 3.11 or newer")
    stamp = VENV / ".installed"
    wanted = _digest(ROOT / "requirements.lock", ROOT / "pyproject.toml") + "+bytecode"
    if PYTHON.exists() and stamp.exists() and stamp.read_text() == wanted:
        return
    env = dict(os.environ, UV_LINK_MODE="copy")  # the cache may be on another file system
    if not PYTHON.exists():
        say("creating the virtual environment in .venv")
        run(uv(), "venv", "--quiet", "--seed", "--python", sys.executable, VENV, env=env)
    say("installing Python dependencies from requirements.lock")
    # Compiled as they are installed: each process a test or `serve` starts then reads the libraries' bytecode
    # instead of compiling them (a server starts in 3 s instead of 4.5 s here), even where PYTHONDONTWRITEBYTECODE
    # keeps Python from caching what it compiles.
    run(uv(), "pip", "sync", "--quiet", "--compile-bytecode", "--python", PYTHON, "requirements.lock", env=env)
    run(uv(), "pip", "install", "--quiet", "--python", PYTHON, "--no-deps", "-e", ".", env=env)
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


def ensure_frontend() -> None:
    """Build the chat page into frontend/dist when its sources changed since the last build."""
    ensure_node(FRONTEND)
    sources = sorted(path for path in (FRONTEND / "src").rglob("*") if path.is_file())
    sources += [FRONTEND / name for name in ("index.html", "package-lock.json", "vite.config.ts", "tsconfig.json")]
    stamp = FRONTEND / "dist" / ".built"
    wanted = _digest(*sources)
    if stamp.exists() and stamp.read_text() == wanted:
        return
    say("building the chat page (frontend/dist)")
    run("npm", "run", "--silent", "build", cwd=FRONTEND)
    stamp.write_text(wanted)


def apt_install(package: str, why: str) -> None:
    """Install a Debian package the tests need, saying why; without apt-get, the tests that need it skip."""
    if shutil.which("apt-get") is None:
        say(f"no {package} found and no apt-get to install it: {why} will be skipped")
        return
    say(f"{package} is missing: installing it with apt-get for {why}")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    install = [*sudo, "apt-get", "install", "-y", "--no-install-recommends", package]
    if subprocess.call(install) != 0:
        run(*sudo, "apt-get", "update")
        run(*install)


def ensure_chromium() -> None:
    """The browser tests use the operating system's Chromium; install it with apt-get if missing."""
    if os.environ.get("CHROMIUM_PATH") or any(shutil.which(name) for name in CHROMIUM_NAMES):
        return
    apt_install("chromium", "the browser tests (or set CHROMIUM_PATH)")


def ensure_nginx() -> None:
    """The several-processes test runs threadline behind the operating system's nginx."""
    if not (shutil.which("nginx") or Path("/usr/sbin/nginx").exists()):
        apt_install("nginx", "the test of several processes behind nginx")


def serve(args: list[str]) -> int:
    ensure_python()
    ensure_frontend()
    server = subprocess.Popen([str(BIN / "threadline"), "serve", *args], cwd=ROOT)
    if hasattr(signal, "SIGTERM"):  # a stop meant for this command is meant for the server it runs
        signal.signal(signal.SIGTERM, lambda signum, frame: server.send_signal(signum))
    while True:
        try:
            code = server.wait()
            return 128 - code if code < 0 else code  # ended by a signal: the shell's way of saying which
        except KeyboardInterrupt:
            pass  # Ctrl+C reached the server too: wait for it to shut down and print its own last lines


CHECKS = {  # each fails the test command; the configuration of each is in pyproject.toml
    "ruff check": ["ruff", "check", "--quiet", "."],
    "ruff format": ["ruff", "format", "--check", "--quiet", "."],
    "import directions": ["lint-imports", "--no-cache"],
    "types": ["mypy"],
    "generated docs": ["python", "docs/generate.py", "--check"],
    "docs build": ["mkdocs", "build", "--strict", "--quiet", "--site-dir", "site"],
}


DOCS_ENV = dict(os.environ, NO_MKDOCS_2_WARNING="1")  # mkdocs-material's notice of its successor, once a run


def check() -> int:
    """Lint, formatting, the direction of imports, types and the docs, before any test runs; says what failed."""
    for name, command in CHECKS.items():
        result = subprocess.run(
            [str(BIN / command[0]), *command[1:]], cwd=ROOT, capture_output=True, text=True, env=DOCS_ENV
        )
        if result.returncode != 0:
            print(result.stdout + result.stderr)
            say(f"{name} failed")
            return 1
    return 0


def docs(args: list[str]) -> int:
    """Write the generated reference pages and the API's schema from the code, the page's REST types from that
    schema, then build the site into site/ (--strict)."""
    ensure_python()
    ensure_node(FRONTEND)
    if code := subprocess.call([str(PYTHON), "docs/generate.py"], cwd=ROOT):
        return code
    if code := subprocess.call(["npm", "run", "--silent", "api-types"], cwd=FRONTEND):
        return code
    return subprocess.call(
        [str(BIN / "mkdocs"), "build", "--strict", "--site-dir", "site", *args], cwd=ROOT, env=DOCS_ENV
    )


LOCK = ["--all-extras", "--group", "dev", "--group", "bench", "--group", "docs", "--python-version", "3.11"]
# What a deployment installs (the Dockerfile): every extra, no group, on any platform, hashed, pinned as in
# requirements.lock. A uv.lock would name the package index's host in every entry; this format names none.
PRODUCTION_LOCK = ROOT / "requirements" / "production.lock"
PRODUCTION = ["--all-extras", "--universal", "--generate-hashes", "--python-version", "3.11", "-c", "requirements.lock"]


def lock(args: list[str]) -> int:
    """Compile requirements.lock (development: every extra and group) and requirements/production.lock from
    pyproject.toml again, keeping every pin that still fits."""
    compile_lock = [uv(), "pip", "compile", "pyproject.toml", *LOCK, "--no-header", "-o", "requirements.lock"]
    if code := subprocess.call([*compile_lock, *args], cwd=ROOT):
        return code
    production = [uv(), "pip", "compile", "pyproject.toml", *PRODUCTION, "--no-header", "-o", str(PRODUCTION_LOCK)]
    return subprocess.call([*production, *args], cwd=ROOT)


def test(args: list[str]) -> int:
    ensure_python()
    ensure_node(ROOT / "conformance")
    ensure_node(ROOT / "deploy" / "tools")  # Helm, for the chart's test
    ensure_frontend()
    ensure_chromium()
    ensure_nginx()
    if failed := check():
        return failed
    if subprocess.call(["npm", "run", "--silent", "check"], cwd=FRONTEND) != 0:  # TypeScript strict, ESLint
        say("the page's checks failed")
        return 1
    # One pytest process per core and one more (pytest-xdist): most tests wait on servers, browsers and
    # subprocesses, so the cores stay busy (on 2 cores, 3 processes took 7:43 where 2 took 9:23).
    # `-n 0` after it runs them in this one process.
    workers = (os.cpu_count() or 1) + 1
    # threadline's own modules compiled once too (an editable install, which uv does not compile): the servers the
    # tests start read them, where PYTHONDONTWRITEBYTECODE would have each one compile them again.
    subprocess.call([str(PYTHON), "-m", "compileall", "-q", "-j", "0", str(ROOT / "backend")], cwd=ROOT)
    return subprocess.call([str(PYTHON), "-m", "pytest", "-n", str(workers), *args], cwd=ROOT)


def wheel(args: list[str]) -> int:
    """Build the wheel into dist/, the chat page inside it: from a copy of the package made elsewhere, so a server
    running from this checkout never sees a page half copied into backend/threadline/page."""
    ensure_frontend()
    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder)
        for name in ("pyproject.toml", "README.md", "LICENSE"):
            shutil.copy2(ROOT / name, tree / name)
        package = tree / "backend" / "threadline"
        shutil.copytree(ROOT / "backend" / "threadline", package, ignore=shutil.ignore_patterns("__pycache__", "page"))
        shutil.copytree(FRONTEND / "dist", package / "page", ignore=shutil.ignore_patterns(".built"))
        if code := subprocess.call([uv(), "build", "--wheel", "--out-dir", str(ROOT / "dist"), *args], cwd=tree):
            return code
    write_constraints(ROOT / "dist" / "threadline-constraints.txt")
    return client_wheel(args)


# The Python client and the two modules it reads its chunk types from: nothing of the server's.
CLIENT_FILES = ("__init__.py", "py.typed", "events.py", "wires/__init__.py", "wires/ui_chunks.py", "client")
CLIENT_DEPENDENCIES = ("httpx", "httpx-sse", "msgspec")


def client_wheel(args: list[str]) -> int:
    """threadline-client: the same `threadline.client` as the server's wheel (which holds it too: install one of
    the two), for a program that only talks to a threadline server, with three dependencies instead of the server's
    whole install. Its dependencies' bounds are pyproject.toml's."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    needs = [need for need in project["dependencies"] if need.split(">")[0].split("[")[0] in CLIENT_DEPENDENCIES]
    version = (ROOT / "backend" / "threadline" / "__init__.py").read_text().split('__version__ = "')[1].split('"')[0]
    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder)
        for name in CLIENT_FILES:
            source, target = ROOT / "backend" / "threadline" / name, tree / "src" / "threadline" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(source, target)
        shutil.copy2(ROOT / "LICENSE", tree / "LICENSE")
        (tree / "README.md").write_text(CLIENT_README)
        (tree / "pyproject.toml").write_text(
            CLIENT_PROJECT.format(version=version, dependencies=", ".join(f'"{need}"' for need in needs))
        )
        return subprocess.call([uv(), "build", "--wheel", "--out-dir", str(ROOT / "dist"), *args], cwd=tree)


CLIENT_PROJECT = """[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "threadline-client"
version = "{version}"
description = "The Python client of threadline: answers as typed chunks, sync or async, over NDJSON or SSE"
readme = "README.md"
requires-python = ">=3.11"
license = "MIT"
license-files = ["LICENSE"]
dependencies = [{dependencies}]

[tool.setuptools.packages.find]
where = ["src"]

[tool.setuptools.package-data]
threadline = ["py.typed"]
"""

CLIENT_README = """# threadline-client

The Python client of a threadline server, without the server: `from threadline.client import Client`.
threadline's own wheel holds the same client; install one of the two. The guide is docs/guides/python.md.
"""


def write_constraints(path: Path) -> None:
    """The tested versions of every dependency (requirements/production.lock, without its hashes), beside the wheel:
    `pip install '<wheel>[all]' -c threadline-constraints.txt` installs what the tests ran, not the newest."""
    pins = [line.split(" ")[0] for line in PRODUCTION_LOCK.read_text().splitlines() if line and line[0].isalnum()]
    path.write_text(
        "# The dependency versions threadline was tested with (python3 tasks.py wheel)\n" + "\n".join(pins) + "\n"
    )


BENCHMARKS = {
    "stream": "stream_bench.py",
    "compare": "compare.py",
    "breakdown": "breakdown.py",
    "capacity": "capacity.py",
    "load": "load_bench.py",
    "encode": "encode_bench.py",
    "mcp": "mcp_bench.py",
    "layers": "layers_bench.py",
    "checkpoint": "checkpoint_bench.py",
    "storage": "storage_bench.py",
    "ab-storage": "ab_storage_bench.py",
    "observability": "observability_bench.py",
    "context": "context_bench.py",
    "resume": "resume_bench.py",
    "accounts": "accounts_bench.py",
    "attachments": "attachments_bench.py",
    "search": "search_bench.py",
    "workers": "workers_bench.py",
    "revisions": "revisions.py",
    "rate-limit": "rate_limit_bench.py",
    "shapes": "agent_shapes.py",
    "census": "census.py",
    "frontends": "frontends_bench.py",
    "growth": "growth_bench.py",
    "start-rows": "start_rows_bench.py",
    "idle": "idle_bench.py",
}


def bench(args: list[str]) -> int:
    """`bench [stream|compare|...|observability] [options]`: one of the benchmarks in bench/ (stream by default)."""
    ensure_python()
    name = args.pop(0) if args and args[0] in BENCHMARKS else "stream"
    if name in ("compare", "capacity"):  # they run the AI SDK's own server too
        ensure_node(ROOT / "bench")
    return subprocess.call([str(PYTHON), str(ROOT / "bench" / BENCHMARKS[name]), *args], cwd=ROOT)


COMMANDS = {"serve": serve, "test": test, "docs": docs, "bench": bench, "lock": lock, "wheel": wheel}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    sys.exit(COMMANDS[sys.argv[1]](sys.argv[2:]))
