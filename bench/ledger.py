"""The cost ledger: where a served answer's CPU goes, one row per thing an answer does, read from py-spy's
samples of a running server (`bench breakdown` prints it under its ladder).

The ladder prices what a setting turns off; most of what threadline adds beyond the equal-work peer has no
such setting (identity and limits, the running-answer record, file references, versions, search words, the
transcript), and a step under a millisecond drowns in the noise between servers. Sampling one server at
work prices each of them inside the same answers, from the code on the stack:

- a sample goes to the innermost frame of one of threadline's concerns (`CONCERNS`: a file, or a function
  of a file), whatever library code that frame called (the checkpoint saver's psycopg is the checkpoints');
- a sample with none goes to the innermost layer it is in (`LAYERS`: the graph run, HTTP, the event loop);
- a sample's share of all samples, times the answers' measured CPU, is that row's CPU per answer.

The event loop's own work (ready callbacks, the selector) stands apart: it serves every row, the round trips
to PostgreSQL most.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

# (row, file under backend/threadline/, function or None for the whole file); in a frame, the first that
# matches wins, so a function goes before its file.
CONCERNS: list[tuple[str, str, str | None]] = [
    ("identity and limits", "http/identity.py", None),
    ("identity and limits", "http/host_identity.py", None),
    ("identity and limits", "http/bearer.py", None),
    ("identity and limits", "http/rate_limit.py", None),
    ("identity and limits", "http/limits.py", None),
    ("identity and limits", "http/client_address.py", None),
    ("identity and limits", "http/connection_limits.py", None),
    ("the running-answer record", "answers/active.py", None),
    ("recordings for resume", "answers/recordings.py", None),
    ("traces", "observability/trace.py", None),
    ("traces", "storage/traces.py", None),
    ("traces", "observability/answers.py", None),
    ("metrics", "observability/metrics.py", None),
    ("file references", "answers/service.py", "references"),
    ("file references", "agent/attachments.py", None),
    ("file references", "conversations/attachments.py", None),
    ("versions", "conversations/versions.py", None),
    ("search words", "answers/service.py", "_remember_words"),
    ("search words", "storage/conversation_list.py", "remember_words"),
    ("a generated title", "answers/service.py", "_name"),
    ("a generated title", "agent/titles.py", None),
    ("suggestions", "agent/suggestions.py", None),
    ("the transcript", "agent/transcript.py", None),
    ("the conversation's row", "storage/conversation_list.py", None),
    ("the conversation's row", "storage/threads.py", None),
    ("checkpoints", "storage/saver.py", None),
    ("checkpoints", "storage/fallback.py", None),
]
CHECKPOINTER = "/langgraph/checkpoint/"  # LangGraph's saver: what storage/saver.py inherits is the checkpoints' too
SERVER = ("/litestar/", "/uvicorn/")  # what a middleware passes a request or a message on to
LOOP = "asyncio/runners.py"  # the frame under which the event loop (uvloop: no frames of its own) runs tasks
# (row, a fragment of a frame's file path): where a sample with no concern on its stack is, innermost first.
LAYERS: list[tuple[str, str]] = [
    ("the demo model", "threadline/agent/demo_model.py"),
    ("threadline's middleware and model callbacks", "threadline/agent/"),
    ("translation to canonical events", "threadline/answers/runner.py"),
    ("translation to canonical events", "threadline/answers/translator.py"),
    ("encoding (the wire)", "threadline/wires/"),
    ("HTTP (Litestar, uvicorn, threadline's routes)", "threadline/http/"),
    ("LangGraph and LangChain (the graph run)", "threadline/serving/langchain_dispatch.py"),  # LangChain's, carried
    ("LangGraph and LangChain (the graph run)", "threadline/serving/langsmith_inline.py"),
    ("the answer's own bookkeeping (service, turn, state)", "threadline/"),
    ("LangGraph and LangChain (the graph run)", "/langgraph/"),
    ("LangGraph and LangChain (the graph run)", "/langchain"),
    ("PostgreSQL client (no caller on the sampled stack)", "/psycopg"),
    ("HTTP (Litestar, uvicorn, threadline's routes)", "/litestar/"),
    ("HTTP (Litestar, uvicorn, threadline's routes)", "/uvicorn/"),
    ("HTTP (Litestar, uvicorn, threadline's routes)", "/httptools/"),
    ("the event loop and the rest", ""),
]
ROWS = list(dict.fromkeys([row for row, _, _ in CONCERNS] + [row for row, _ in LAYERS]))
FRAME = re.compile(r"^(?P<function>.*) \((?P<file>[^()]*?)(?::\d+)?\)$")
PACKAGE = "/threadline/"
RATE = "250"  # samples a second: more pauses the server enough to change where its time goes


def record(pid: int, output: Path) -> subprocess.Popen:
    """py-spy sampling `pid` until `stop`: only threads at work (an idle one waits). Each sample pauses the
    server (unpaused, `--nonblocking` read torn stacks: a tenth of them lost their callers), so CPU is
    measured with nothing sampling it and the samples only share it out."""
    spy = Path(sys.executable).parent / "py-spy"
    options = ["--format", "raw", "--full-filenames", "--rate", RATE, "-o", str(output)]
    return subprocess.Popen([str(spy), "record", "--pid", str(pid), *options], stdout=subprocess.DEVNULL)


def stop(spy: subprocess.Popen) -> None:
    spy.send_signal(signal.SIGINT)
    spy.wait(timeout=60)


def row_of(frames: list[tuple[str, str]]) -> str:
    """The row a sample goes to; its frames outermost first, each (function, file)."""
    loop = max((n for n, (_, file) in enumerate(frames) if file.endswith(LOOP)), default=-1)
    frames = frames[loop + 1 :]  # what the loop runs; above it, the process's start (cli, uvicorn)
    for depth in range(len(frames) - 1, -1, -1):
        if row := concern_of(frames, depth):
            return row
    for _, file in reversed(frames):
        for row, fragment in LAYERS[:-1]:
            if fragment in file:
                return row
    return LAYERS[-1][0]


def concern_of(frames: list[tuple[str, str]], depth: int) -> str | None:
    """The concern of the frame at `depth`, if any. A middleware's frame is its concern's only while it is not
    passing the request on to the app it wraps or a message to the server (its `__call__` calling Litestar,
    the `send` it wraps calling uvicorn's): else the whole request and every chunk sent would be identity's."""
    function, file = frames[depth]
    if CHECKPOINTER in file:
        return "checkpoints"
    if PACKAGE not in file or any(server in inner for _, inner in frames[depth + 1 :] for server in SERVER):
        return None
    inside = file.rsplit(PACKAGE, 1)[1]
    method = function.rsplit(".", 1)[-1]  # py-spy names a method by its class too
    return next((row for row, concern, name in CONCERNS if inside == concern and name in (None, method)), None)


def shares(raw: Path) -> dict[str, float]:
    """Each row's share of the samples in py-spy's raw output (one stack per line, then its count)."""
    counts: Counter[str] = Counter()
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        frames = []
        for frame in stack.split(";"):
            if match := FRAME.match(frame):
                frames.append((match["function"], match["file"]))
        counts[row_of(frames)] += int(count)
    total = sum(counts.values()) or 1
    return {row: counts[row] / total for row in ROWS}
