"""threadline inside a host app with a login of its own (sessions): the app says who asks through
`Threadline(identify=...)`, each of its users owns their conversations, a visitor it does not know is an
anonymous one, its roles count, and its own CORS configuration is kept."""

from __future__ import annotations

import os

import pytest
from helpers import chat, chat_body, new_conversation_id
from litestar import Litestar, Request, get, post
from litestar.config.cors import CORSConfig
from litestar.connection import ASGIConnection
from litestar.middleware.session.client_side import CookieBackendConfig
from litestar.testing import AsyncTestClient
from test_attachments import png, with_files
from threadline.http.app import Threadline
from threadline.http.host_identity import Principal
from threadline_testing.sse import parse_sse

PNG = {"content-type": "image/png"}


@post("/login/{name:str}")
async def login(request: Request, name: str) -> dict[str, str]:
    request.set_session({"user": name})
    return {"user": name}


@post("/logout")
async def logout(request: Request) -> None:
    request.clear_session()


@get("/whoami")
async def whoami(request: Request) -> dict[str, str | None]:
    return {"user": request.session.get("user")}


async def identify(connection: ASGIConnection) -> str | Principal | None:
    user = connection.session.get("user") if "session" in connection.scope else None
    return Principal(user, frozenset({"ops"})) if user == "root" else user


def host_app(settings) -> Litestar:
    return Litestar(
        route_handlers=[login, logout, whoami],
        middleware=[CookieBackendConfig(secret=os.urandom(16)).middleware],
        cors_config=CORSConfig(allow_origins=["https://host.example"], allow_methods=["GET", "POST"]),
        plugins=[Threadline(settings, identify=identify)],
    )


async def test_the_host_apps_users_own_their_conversations(make_settings):
    settings = make_settings(auth_admin_role="ops", cors_origins=("http://localhost:3000",))
    async with AsyncTestClient(app=host_app(settings), timeout=30) as client:
        await client.post("/login/alice")
        alice_chat = new_conversation_id()
        response, _, _ = await chat(client, alice_chat, "alice here")
        assert "set-cookie" not in response.headers or "threadline_client" not in response.headers["set-cookie"]
        assert [row["id"] for row in (await client.get("/api/conversations")).json()] == [alice_chat]

        await client.post("/login/bob")
        assert (await client.get("/api/conversations")).json() == []
        assert (await client.get(f"/api/conversations/{alice_chat}")).status_code == 404
        refused = await client.post("/api/chat", json=chat_body(alice_chat, "bob in alice's conversation"))
        assert refused.status_code == 200, "bob's conversation by that id is his own, not alice's"

        await client.post("/logout")
        anonymous = await client.get("/api/conversations")
        assert anonymous.json() == [] and "threadline_client" in anonymous.headers["set-cookie"]
        assert (await client.get("/metrics")).status_code in (401, 403), "no operator role"

        await client.post("/login/root")
        assert (await client.get("/metrics")).status_code == 200, "the host app's role counts as AUTH_ADMIN_ROLE"

        await client.post("/login/alice")
        history = (await client.get(f"/api/conversations/{alice_chat}")).json()["messages"]
        assert history[0]["parts"][0]["text"] == "alice here"
        assert (await client.get("/whoami")).json() == {"user": "alice"}, "the host's own routes are untouched"


async def test_the_host_apps_cors_configuration_is_kept_and_ours_added(make_settings):
    settings = make_settings(cors_origins=("http://localhost:3000",))
    async with AsyncTestClient(app=host_app(settings), timeout=30) as client:
        for origin, method in [("https://host.example", "GET"), ("http://localhost:3000", "PUT")]:
            preflight = await client.options(
                "/api/conversations", headers={"origin": origin, "access-control-request-method": method}
            )
            assert preflight.status_code in (200, 204), (origin, preflight.text)
            assert preflight.headers["access-control-allow-origin"] == origin
            assert method in preflight.headers["access-control-allow-methods"]


async def test_a_host_app_that_allows_every_origin_gives_no_origin_credentials(make_settings):
    """With `*` and credentials, Litestar answers any origin that sends a cookie with that origin: every site could
    read a signed-in user's conversations with their session cookie."""
    for host_credentials in (False, True):
        app = Litestar(
            route_handlers=[login, whoami],
            middleware=[CookieBackendConfig(secret=os.urandom(16)).middleware],
            cors_config=CORSConfig(allow_origins=["*"], allow_credentials=host_credentials),
            plugins=[Threadline(make_settings(cors_origins=("http://localhost:3000",)), identify=identify)],
        )
        async with AsyncTestClient(app=app, timeout=30) as client:
            await client.post(f"/login/carol{host_credentials}")
            await chat(client, new_conversation_id(), "carol here")
            for origin in ("http://evil.example", "http://localhost:3000"):
                response = await client.get("/api/conversations", headers={"origin": origin})
                assert len(response.json()) == 1
                # without it a browser keeps a credentialed response from the page, whatever the allowed origin
                assert "access-control-allow-credentials" not in response.headers, origin
            open_route = await client.get("/whoami", headers={"origin": "http://any.example"})
            assert "access-control-allow-origin" in open_route.headers, "the host's routes stay open to every origin"


async def test_an_identify_that_fails_breaks_no_public_route_and_leaks_nothing(make_settings):
    async def broken(connection: ASGIConnection) -> str | None:
        said = connection.headers.get("x-said")
        if said == "raise":
            raise RuntimeError("the session store is down")
        return "" if said == "empty" else said

    app = Litestar(route_handlers=[whoami], plugins=[Threadline(make_settings(), identify=broken)])
    async with AsyncTestClient(app=app, timeout=30) as client:
        for said in ("raise", "empty"):
            assert (await client.get("/health", headers={"x-said": said})).status_code == 200, said
            failed = await client.get("/api/conversations", headers={"x-said": said})
            assert failed.status_code == 500 and failed.json()["error"]["code"] == "INTERNAL_ERROR", said
            assert "session store" not in failed.text and "Traceback" not in failed.text
        assert (await client.get("/api/conversations", headers={"x-said": "ann"})).status_code == 200


def test_in_a_host_app_only_threadlines_own_names_are_read(monkeypatch):
    """The host app's DATABASE_URL and LOG_LEVEL are its own: threadline, plugged in, reads THREADLINE_ names only
    (the standalone server reads both, as the configuration page says)."""
    monkeypatch.setenv("DATABASE_URL", "postgresql://the-host-apps-own/db")
    monkeypatch.setenv("LOG_LEVEL", "DEBUG")
    monkeypatch.delenv("THREADLINE_DATABASE_URL", raising=False)
    monkeypatch.delenv("THREADLINE_LOG_LEVEL", raising=False)
    plugged = Threadline().settings
    assert plugged.storage.database_url is None and plugged.observability.log_level == "INFO"
    monkeypatch.setenv("THREADLINE_DATABASE_URL", "postgresql://threadlines/db")
    assert Threadline().settings.storage.database_url == "postgresql://threadlines/db"


@get("/health", sync_to_thread=False)
def host_health() -> dict[str, str]:
    return {"host": "fine"}


@get("/api/conversations", sync_to_thread=False)
def host_conversations() -> dict[str, str]:
    return {"host": "its own conversations"}


async def test_under_a_prefix_threadline_leaves_the_host_its_paths_and_its_urls_follow_the_prefix(make_settings):
    """`Threadline(path="/chat")`: the host's `/health` and `/api/conversations` stay the host's; every threadline
    route is under /chat, and so is every URL it writes (a file, a link, a shared file) and the built-in tools'
    in-process calls."""
    app = Litestar(
        route_handlers=[host_health, host_conversations],
        plugins=[Threadline(make_settings(), path="/chat/")],
    )
    async with AsyncTestClient(app=app, timeout=30) as client:
        assert (await client.get("/health")).json() == {"host": "fine"}
        assert (await client.get("/api/conversations")).json() == {"host": "its own conversations"}
        assert (await client.get("/chat/health")).status_code == 200

        image = png(color="blue")
        uploaded = await client.post("/chat/api/files?filename=b.png", content=image, headers=PNG)
        assert uploaded.status_code == 201 and uploaded.json()["url"].startswith("/chat/api/files/")
        reference = {"type": "file", "mediaType": "image/png", "url": uploaded.json()["url"], "filename": "b.png"}
        conversation_id = new_conversation_id()
        sent = await client.post("/chat/api/chat", json=with_files(conversation_id, "what is it?", reference))
        assert sent.status_code == 200, sent.text
        calculated = await client.post("/chat/api/chat", json=chat_body(conversation_id, "calculate 6*7"))
        tool = next(c for c in parse_sse(calculated.content) if c["type"] == "tool-output-available")
        assert tool["output"] == "42", "the built-in tool server answered in process, under the prefix"

        assert [row["id"] for row in (await client.get("/chat/api/conversations")).json()] == [conversation_id]
        history = (await client.get(f"/chat/api/conversations/{conversation_id}")).json()["messages"]
        picture = next(part for part in history[0]["parts"] if part["type"] == "file")
        assert picture["url"] == uploaded.json()["url"]
        assert (await client.get(picture["url"])).content == image

        link = (await client.post(f"/chat/api/conversations/{conversation_id}/share")).json()
        assert link["url"] == f"/chat/share/{link['id']}"
        shared = (await client.get(f"/chat/api/shared/{link['id']}")).json()["messages"]
        shown = next(part for part in shared[0]["parts"] if part["type"] == "file")
        assert shown["url"].startswith(f"/chat/api/shared/{link['id']}/files/")
        assert (await client.get(shown["url"])).content == image


@pytest.mark.parametrize("path", ["chat", "/chat/../x", "/chat?x", "/ch at"])
def test_a_prefix_that_is_not_a_plain_path_is_refused_naming_it(path):
    with pytest.raises(ValueError, match="expected '/' or segments"):
        Threadline(path=path)


def test_the_chat_page_is_served_at_the_root_only():
    with pytest.raises(ValueError, match="the chat page is served at the root only"):
        Threadline(path="/chat", page=True)
