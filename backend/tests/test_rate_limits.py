"""Rate limits per client address: behind a trusted proxy by X-Forwarded-For, never dodged by a forged one."""

from __future__ import annotations

import uuid

import httpx
import limits
import pytest
import redis
from helpers import chat_body, running, serving
from hypothesis import given
from hypothesis import strategies as st
from threadline.http.client_address import ClientAddress
from threadline.http.rate_limit import MovingWindows, RateLimit


def scope(peer: str, forwarded: str | None = None) -> dict:
    headers = [(b"x-forwarded-for", forwarded.encode())] if forwarded else []
    return {"type": "http", "client": (peer, 40000), "headers": headers}


def test_the_forwarded_address_counts_only_behind_a_trusted_proxy():
    address = ClientAddress(["10.0.0.0/8", "127.0.0.1/32"])
    assert address.of(scope("203.0.113.9")) == "203.0.113.9"
    assert address.of(scope("203.0.113.9", "198.51.100.1")) == "203.0.113.9", "a client's own header is ignored"
    assert address.of(scope("10.1.2.3", "198.51.100.1")) == "198.51.100.1", "the proxy's client, not the proxy"
    assert address.of(scope("10.1.2.3", "198.51.100.7, 198.51.100.1")) == "198.51.100.1", (
        "a forged entry left of what our proxy appended changes nothing"
    )
    assert address.of(scope("10.1.2.3", "198.51.100.1, 10.9.9.9")) == "198.51.100.1", "chained trusted proxies"
    assert address.of(scope("10.1.2.3", "10.9.9.9")) == "10.9.9.9", "all hops trusted: the leftmost"
    assert address.of(scope("10.1.2.3")) == "10.1.2.3"
    assert address.of(scope("10.1.2.3", "2001:DB8::1")) == "2001:db8::/64"
    assert ClientAddress([]).of(scope("127.0.0.1", "198.51.100.1")) == "127.0.0.1"


def test_a_window_in_memory_moves_with_the_clock_and_forgets_idle_keys():
    now = [1000.0]
    windows = MovingWindows(3, 60, clock=lambda: now[0])
    assert [windows.hit("a") for _ in range(3)] == [None, None, None]
    assert windows.hit("a") == 1060.0, "refused until the first of the three leaves the window"
    assert windows.hit("b") is None, "another key has a window of its own"
    now[0] = 1030.0
    assert windows.hit("a", cost=4) is not None, "more than the whole limit at once is never allowed"
    now[0] = 1060.0
    assert windows.hit("a") is None and windows.hit("a") is None, "the first three left the window"
    now[0] = 1200.0
    assert windows.hit("c") is None
    assert set(windows.windows) == {"c"}, "keys idle for a whole window are dropped"


@given(st.lists(st.tuples(st.sampled_from("abc"), st.integers(1, 5)), max_size=40), st.integers(1, 12))
def test_a_window_in_memory_allows_what_the_limits_librarys_own_moving_window_allows(hits, limit):
    """The same requests within one window: allowed or refused alike, costs included."""
    theirs = limits.strategies.MovingWindowRateLimiter(limits.storage.MemoryStorage())
    item = limits.RateLimitItemPerHour(limit)
    ours = MovingWindows(limit, item.get_expiry())
    for key, cost in hits:
        assert (ours.hit(key, cost) is None) == theirs.hit(item, key, cost=cost)


async def test_over_the_limit_is_a_429_with_retry_after_before_any_stream(make_settings):
    async with running(make_settings(rate_limit="3/minute")) as client:
        for _ in range(3):
            assert (await client.post("/api/chat", json=chat_body(None, "hello"))).status_code == 200
        response = await client.post("/api/chat", json=chat_body(None, "hello"))
        fresh_identity = await client.post(
            "/api/chat", json=chat_body(None, "hello"), headers={"x-threadline-client": "forged.token"}
        )
    assert response.status_code == 429
    retry_after = int(response.headers["retry-after"])
    assert 1 <= retry_after <= 60
    assert response.json() == {
        "error": {
            "code": "RATE_LIMITED",
            "retryAfter": retry_after,
            "message": f"Too many requests. Try again in {retry_after} s.",
        }
    }
    assert fresh_identity.status_code == 429, "a new anonymous identity does not reset the limit"


async def _post(base_url: str, forwarded: str | None) -> int:
    headers = {"x-forwarded-for": forwarded} if forwarded else {}
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
        response = await client.post("/api/chat", json=chat_body(None, "hi"), headers=headers)
        return response.status_code


async def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_limit(make_settings):
    # The test client connects from 127.0.0.1, a trusted proxy by default.
    with serving(make_settings(rate_limit="2/minute")) as base_url:
        first = [await _post(base_url, "198.51.100.1") for _ in range(3)]
        second = [await _post(base_url, "198.51.100.2") for _ in range(2)]
    assert first == [200, 200, 429]
    assert second == [200, 200], "the proxy's address did not become everyone's limit"


async def test_a_forged_forwarded_header_from_an_untrusted_peer_does_not_dodge_the_limit(make_settings):
    with serving(make_settings(rate_limit="2/minute", trusted_proxies=())) as base_url:
        statuses = [await _post(base_url, f"198.51.100.{i}") for i in range(3)]
    assert statuses == [200, 200, 429]


def _redis_available() -> bool:
    try:
        redis.Redis(host="127.0.0.1", port=6379, socket_connect_timeout=1).ping()
        return True
    except redis.RedisError:
        return False


@pytest.mark.skipif(not _redis_available(), reason="no Redis on 127.0.0.1:6379 (.ci/run starts one)")
async def test_processes_sharing_redis_share_one_limit(make_settings):
    settings = make_settings(rate_limit="3/minute", rate_limit_storage="redis://127.0.0.1:6379/0")
    # A fresh /64 (IPv6 addresses share their /64's limit), so a fresh limit; keys expire by themselves.
    address = f"2001:db8:{uuid.uuid4().hex[:4]}:{uuid.uuid4().hex[:4]}::1"
    with serving(settings) as first, serving(settings) as second:
        statuses = [await _post(base, address) for base in (first, second, first, second)]
    assert statuses == [200, 200, 200, 429]


@pytest.mark.skipif(not _redis_available(), reason="no Redis on 127.0.0.1:6379 (.ci/run starts one)")
async def test_a_byte_quota_shared_through_redis_is_two_numbers_not_an_entry_per_byte():
    namespace = f"file-bytes-{uuid.uuid4().hex}"
    quota = RateLimit("1000000/day", "redis://127.0.0.1:6379/0", namespace, sums=True)
    assert await quota.hit("198.51.100.1", 600_000) is None
    assert await quota.hit("198.51.100.1", 600_000) is not None, "over the day's bytes"
    assert await quota.hit("198.51.100.2", 600_000) is None, "another address has its own"
    client = redis.Redis(host="127.0.0.1", port=6379)
    keys = list(client.scan_iter(f"*{namespace}*"))
    assert keys and max(client.memory_usage(key) or 0 for key in keys) < 1_000, "a counter, not 600,000 entries"
    client.delete(*keys)
