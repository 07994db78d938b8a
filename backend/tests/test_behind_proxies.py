"""What a deployment behind a TLS-terminating proxy, or a page on another origin, needs of the server: the
visitor cookie is `Secure` when a trusted proxy says the client used https, and every method the API uses
passes a CORS preflight."""

from __future__ import annotations

import httpx
import pytest
from helpers import running, serving
from litestar.routes import HTTPRoute
from threadline.http.app import create_app


@pytest.mark.parametrize(("trusted", "secure"), [(("127.0.0.1/32",), True), ((), False)])
def test_the_cookie_is_secure_when_a_trusted_proxy_forwarded_https(make_settings, trusted, secure):
    with serving(make_settings(trusted_proxies=trusted)) as base_url:
        response = httpx.get(f"{base_url}/api/conversations", headers={"x-forwarded-proto": "https"})
        plain = httpx.get(f"{base_url}/api/conversations", headers={"x-forwarded-proto": "http"})
    assert ("; Secure" in response.headers["set-cookie"]) is secure, "only our own proxy is believed"
    assert "; Secure" not in plain.headers["set-cookie"]


def api_methods(settings) -> set[tuple[str, str]]:
    """Every (method, path) of the API a page on another origin may call."""
    app = create_app(settings)
    return {
        (method, route.path)
        for route in app.routes
        if isinstance(route, HTTPRoute) and route.path.startswith("/api/")
        for method in route.methods - {"OPTIONS", "HEAD"}
    }


async def test_every_method_the_api_uses_passes_a_cors_preflight(make_settings):
    origin = "http://localhost:3000"
    settings = make_settings(cors_origins=(origin,))
    methods = api_methods(settings)
    assert {method for method, _ in methods} >= {"GET", "POST", "PUT", "PATCH", "DELETE"}
    async with running(settings) as client:
        for method, path in sorted(methods):
            preflight = await client.options(
                path.replace("{", "").replace("}", "").replace(":str", ""),
                headers={"origin": origin, "access-control-request-method": method},
            )
            assert preflight.status_code in (200, 204), (method, path, preflight.text)
            assert method in preflight.headers["access-control-allow-methods"], (method, path)
            assert preflight.headers["access-control-allow-origin"] == origin
