"""Two threadline processes behind a real nginx, sharing PostgreSQL and Redis: what an operator runs.

Streams pass unbuffered; a stop and a resume work whichever process they land on; the rate limit and
"one answer per conversation" hold across both; a process killed mid-answer leaves nothing locked; and a
process restarted with SIGTERM lets its running answer finish first.
"""

from __future__ import annotations

import io
import json
import os
import random
import signal
import time

import httpx
import pytest
from helpers import chat_body, new_conversation_id
from PIL import Image
from threadline_testing.ports import free_port
from threadline_testing.processes import start_threadline
from threadline_testing.proxy import nginx, nginx_binary, wait_until_routed_to

pytestmark = pytest.mark.skipif(nginx_binary() is None, reason="no nginx (python3 tasks.py test installs it)")

ENV = {
    "RATE_LIMIT_STORAGE": "redis://127.0.0.1:6379",
    "TRUSTED_PROXIES": "127.0.0.1/32",  # nginx: the client's address is the one it puts in X-Forwarded-For
    "CHAT_RATE_LIMIT": "4/minute",
    "CHAT_DEMO_TOKEN_DELAY_MS": "20",
    "THREADLINE_SHUTDOWN_GRACE": "20",
    "THREADLINE_SECRET": "the-same-on-every-process-behind-the-proxy",  # visitors stay themselves on both
}


def client_at(base_url: str, cookies: httpx.Cookies | None = None) -> httpx.Client:
    """A visitor (new, or with `cookies`) at an address of their own, so each part of the scenario has its own
    rate limit."""
    address = f"198.18.{random.randint(0, 255)}.{random.randint(1, 254)}"
    return httpx.Client(base_url=base_url, timeout=30, headers={"x-forwarded-for": address}, cookies=cookies)


def png_of_size(size: int) -> bytes:
    """A PNG of about `size` bytes: noise, stored uncompressed."""
    side = int((size / 3) ** 0.5)
    buffer = io.BytesIO()
    Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(buffer, "PNG", compress_level=0)
    return buffer.getvalue()


def deltas(response: httpx.Response):
    for line in response.iter_lines():
        if line.startswith('data: {"type":"text-delta"'):
            yield json.loads(line[6:])["delta"]


def test_two_processes_behind_nginx(database_url, tmp_path):
    ports = [free_port(), free_port()]
    processes = [start_threadline(database_url, tmp_path / f"p{i}", port, **ENV) for i, port in enumerate(ports)]
    try:
        with nginx(ports, tmp_path) as proxy:
            visitor = client_at(proxy)
            visitor.get("/api/conversations")  # the identity cookie, valid on both processes

            # A 5 MB attachment passes through and back; a body over every limit is refused in JSON.
            photo = png_of_size(5_000_000)
            upload = visitor.post("/api/files?filename=p.png", content=photo, headers={"content-type": "image/png"})
            assert upload.status_code == 201, upload.text
            assert visitor.get(upload.json()["url"]).content == photo
            huge = visitor.post("/api/chat", content=b"x" * 50_000_000, headers={"content-type": "application/json"})
            assert huge.status_code == 413 and huge.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"

            # SSE arrives as it is written: the first delta long before the answer ends. The demo model takes
            # 20 ms per token, so the 59 after the first take 1.2 s to make however slow the machine is; a
            # buffering proxy would hand them over with the first, at the end.
            with visitor.stream("POST", "/api/chat", json=chat_body(new_conversation_id(), "count to 60")) as answer:
                arrivals = [time.monotonic() for _ in deltas(answer)]
            assert len(arrivals) == 60 and arrivals[-1] - arrivals[0] > 0.5, arrivals

            # While an answer runs: one answer per conversation on both processes, resumes and a stop from either.
            conversation_id = new_conversation_id()
            with visitor.stream("POST", "/api/chat", json=chat_body(conversation_id, "count to 300")) as answer:
                streamed = deltas(answer)  # one reader for the whole response: a dropped one closes it
                shown = next(streamed)
                for _ in ports:  # round robin: one request lands on each process
                    second = visitor.post("/api/chat", json=chat_body(conversation_id, "me too"))
                    assert second.status_code == 409
                for _ in ports:
                    with visitor.stream("GET", f"/api/chat/{conversation_id}/stream") as resumed:
                        replayed = deltas(resumed)
                        assert resumed.status_code == 200 and next(replayed) == shown
                        replayed.close()
                stopped = visitor.delete(f"/api/chat/{conversation_id}/stream")
                assert stopped.status_code == 200 and stopped.json()["cancelled"] is True
                assert "300" not in "".join(streamed)

            # The rate limit is shared through Redis: four answers per minute per address, on two processes.
            limited = client_at(proxy)
            statuses = [limited.post("/api/chat", json=chat_body(None, "count to 1")).status_code for _ in range(5)]
            assert statuses == [200, 200, 200, 200, 429]

            # A process killed mid-answer: the other serves the conversation at once, nothing stays locked.
            conversation_id = new_conversation_id()
            direct = client_at(f"http://127.0.0.1:{ports[0]}", visitor.cookies)
            with direct.stream("POST", "/api/chat", json=chat_body(conversation_id, "count to 300")) as answer:
                streamed = deltas(answer)
                next(streamed)
                processes[0].send_signal(signal.SIGKILL)
                processes[0].wait(timeout=10)
            visitor = client_at(proxy, visitor.cookies)
            after = visitor.post("/api/chat", json=chat_body(conversation_id, "are you there?"))
            assert after.status_code == 200, after.text
            history = visitor.get(f"/api/conversations/{conversation_id}").json()["messages"]
            assert history[1]["metadata"]["interrupted"] == "server-stopped" and len(history) == 4

            # A rolling restart: the first process is back; the second, asked to stop mid-answer, finishes it.
            processes[0] = start_threadline(database_url, tmp_path / "p0", ports[0], **ENV)
            wait_until_routed_to(proxy, ports[0])  # nginx tries the process it saw fail again after FAIL_TIMEOUT
            direct = client_at(f"http://127.0.0.1:{ports[1]}", visitor.cookies)
            conversation_id = new_conversation_id()
            with direct.stream("POST", "/api/chat", json=chat_body(conversation_id, "count to 100")) as answer:
                streamed = deltas(answer)
                text = next(streamed)
                processes[1].send_signal(signal.SIGTERM)
                assert visitor.get("/health").status_code == 200, "nginx sends new requests to the other process"
                text += "".join(streamed)
            assert text.endswith(" 100"), "the answer ran to its end before the process stopped"
            processes[1].wait(timeout=30)
            reloaded = visitor.get(f"/api/conversations/{conversation_id}")
            assert reloaded.status_code == 200, reloaded.text
            saved = reloaded.json()["messages"][-1]
            assert "interrupted" not in saved["metadata"]
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=30)
