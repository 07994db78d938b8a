"""The Litestar application: `Threadline`, a plugin that puts threadline into any Litestar app, and
create_app(), the standalone server; the lifespan starts the services (http/services.py) once."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx
from litestar import Litestar, Response, Router, get
from litestar.config.app import AppConfig
from litestar.config.cors import CORSConfig
from litestar.datastructures import State
from litestar.di import Provide
from litestar.middleware import DefineMiddleware
from litestar.openapi import OpenAPIConfig
from litestar.plugins import InitPluginProtocol
from litestar.plugins.prometheus import PrometheusController
from litestar.response import File
from litestar.static_files import create_static_files_router
from litestar.types import ControllerRouterHandler

from threadline import __version__
from threadline.agent.graphs import load_agents
from threadline.agent.loading import AgentSource, PublicAgent, ServedAgent
from threadline.http.bearer import BearerTokens
from threadline.http.client_address import ForwardedScheme
from threadline.http.connection_limits import RequestLimits
from threadline.http.dependencies import AppServices, chat_allowance, context_of, limits_of, owned_conversation
from threadline.http.errors import EXCEPTION_HANDLERS, AnyRequest
from threadline.http.graph_auth import GraphAuth, graph_auth
from threadline.http.host_identity import Identify
from threadline.http.identity import HEADER, ClientIdentityMiddleware, Signer, load_secret
from threadline.http.limits import Limits
from threadline.http.mounted import MountedAt
from threadline.http.operators import metrics_guard
from threadline.http.page_assets import asset_route
from threadline.http.routes.account import AccountController, sign_in
from threadline.http.routes.actions import ActionController
from threadline.http.routes.ag_ui import AgUiController
from threadline.http.routes.chat import ChatController
from threadline.http.routes.comparisons import ComparisonController
from threadline.http.routes.contracts.seed_001 import general_chat_stream
from threadline.http.routes.contracts.seed_002 import Seed002Controller, get_chat_response_stream
from threadline.http.routes.contracts.seed_004 import chat_stream_route
from threadline.http.routes.conversations import ConversationController
from threadline.http.routes.feedback import FeedbackController
from threadline.http.routes.files import FileController
from threadline.http.routes.mcp_server import builtin_routes
from threadline.http.routes.shares import ShareController, SharedController
from threadline.http.routes.traces import TraceController
from threadline.http.schemas import MAX_BODY_BYTES
from threadline.http.security_headers import SecurityHeaders
from threadline.mcp.builtin_server import build_server
from threadline.mcp.tokens import tokens_for
from threadline.mount_path import route_prefix
from threadline.observability.otel import tracer_provider as tracer_provider_for
from threadline.runtime import Services, running_services
from threadline.settings import Settings, load_settings
from threadline.settings.profiles import PublicProfile

if TYPE_CHECKING:
    from litestar.plugins import PluginProtocol
    from opentelemetry.sdk.trace import TracerProvider

log = logging.getLogger(__name__)


@get("/health", summary="Liveness and what this server runs with")
async def health(services: AppServices) -> dict[str, Any]:
    """`degraded` while conversations wait in memory for the database, or while a tool server is down.

    `quarantinedConversations` counts conversations PostgreSQL kept refusing (the log says which); they do
    not make the server degraded, since every other conversation is saved as usual."""
    waiting = services.storage.waiting_to_be_saved()
    tool_servers = services.toolbox.status()
    degraded = waiting or any(server["status"] == "down" for server in tool_servers.values())
    return {
        "status": "degraded" if degraded else "ok",
        "model": services.model_label,
        "storage": services.storage.description,
        "unsavedConversations": waiting,
        "quarantinedConversations": services.storage.quarantined(),
        "toolServers": tool_servers,
    }


@get("/health/live", summary="The process serves requests (a liveness probe)")
async def live() -> dict[str, str]:
    """Answered once start-up (migrations included) is over, for as long as the process runs."""
    return {"status": "ok"}


@get("/health/ready", summary="The process can take visitors now (a readiness probe); 503 when not", status_code=200)
async def ready(services: AppServices) -> Response[dict[str, str]]:
    """Not ready while the database does not answer: a proxy or Kubernetes sends visitors to another process."""
    if (reason := await services.storage.unready()) is not None:
        return Response({"status": "unavailable", "reason": reason}, status_code=503)
    return Response({"status": "ready"})


@get("/api/profiles", summary="The model profiles a conversation may use (no keys, addresses or prompts)")
async def profiles(services: AppServices) -> list[PublicProfile]:
    """Pass a profile's `id` as `profileId` in the chat body; `default: true` marks the one used otherwise."""
    return [profile.public(services.settings.agents.starters) for profile in services.profiles.values()]


@get("/api/agents", summary="The agents a new conversation may go to, the default first")
async def agents(services: AppServices) -> list[PublicAgent]:
    """Pass an agent's `id` as `agent` in a new conversation's chat body; its later messages keep that agent.
    The ids are a langgraph.json's graph keys (THREADLINE_GRAPH), or `threadline` for the built-in agent."""
    return services.graphs.listed()


class MetricsController(PrometheusController):
    """GET /metrics in Prometheus's text format (observability/metrics.py): for the operator's scraper, so
    not in the API's schema."""

    include_in_schema = False
    guards = [metrics_guard]  # noqa: RUF012 - Litestar reads the class attribute


async def limit_every_request(request: AnyRequest) -> None:
    """A generous limit on every endpoint (API_RATE_LIMIT), besides the chat's own (CHAT_RATE_LIMIT)."""
    limits = limits_of(request)
    user = request.scope.get("state", {}).get("user")
    await limits.api.check(user.principal if user else limits.client_address.of(request.scope))


def services_of(state: State) -> Services:
    """The services the lifespan started, for every handler that declares `services: AppServices`."""
    services: Services = state.services
    return services


def cors_config(origins: tuple[str, ...]) -> CORSConfig | None:
    """Other origins may call the API with credentials only when listed; none are by default."""
    if not origins:
        return None
    return CORSConfig(
        allow_origins=list(origins),
        allow_credentials=True,
        allow_headers=["content-type", "authorization", HEADER],  # a signed-in user's bearer token too
        expose_headers=["x-conversation-id", "retry-after", HEADER],
        allow_methods=["GET", "POST", "PUT", "PATCH", "DELETE"],  # every method of the API (test_behind_proxies.py)
    )


def merged_cors(host: CORSConfig | None, ours: CORSConfig) -> CORSConfig:
    """The host app's CORS configuration with ours added to it: both apps' origins, methods and headers."""
    if host is None:
        return ours

    def both(first: list[Any], second: list[Any]) -> list[Any]:
        return list(dict.fromkeys([*first, *second]))

    return CORSConfig(
        allow_origins=both(host.allow_origins, ours.allow_origins),
        allow_methods=both(host.allow_methods, ours.allow_methods),
        allow_headers=both(host.allow_headers, ours.allow_headers),
        expose_headers=both(host.expose_headers, ours.expose_headers),
        allow_credentials=host.allow_credentials or ours.allow_credentials,
        allow_origin_regex=host.allow_origin_regex,
        max_age=host.max_age,
    )


def credentials_only_for_listed_origins(cors: CORSConfig) -> CORSConfig:
    """With `*` among the origins, Litestar answers any origin that sends a cookie with that origin and credentials
    allowed: every site could read a signed-in user's conversations. Credentials go only with listed origins, so a
    host app's `*` keeps its routes open to every origin, without credentials (a bearer token still works)."""
    if not (cors.is_allow_all_origins and cors.allow_credentials):
        return cors
    log.warning(
        "CORS: every origin is allowed ('*'), so no origin gets credentials (cookies); list the origins that need "
        "them instead of '*' (THREADLINE_CORS_ORIGINS, or the host app's CORSConfig)"
    )
    return dataclasses.replace(cors, allow_credentials=False)


def page_provider(settings: Settings) -> tuple[str, ...]:
    """The identity provider's origin, which the page signing in talks to (discovery, tokens)."""
    if not (settings.auth.auth_issuer and settings.auth.auth_client_id):
        return ()
    parts = urlsplit(settings.auth.auth_issuer)
    return (f"{parts.scheme}://{parts.netloc}",)


def http_spans(tracer_provider: TracerProvider) -> PluginProtocol:
    """A span per HTTP request, continuing an incoming `traceparent`; not one per body chunk of a stream.
    Imported only when an OTLP endpoint is set, like the SDK."""
    from litestar.plugins.opentelemetry import OpenTelemetryConfig, OpenTelemetryPlugin

    return OpenTelemetryPlugin(OpenTelemetryConfig(tracer_provider=tracer_provider, exclude_spans=["receive", "send"]))


DEPENDENCIES = {  # what handlers declare by name (http/dependencies.py): each alone in its batch
    "ctx": Provide(context_of, sync_to_thread=False),
    "services": Provide(services_of, sync_to_thread=False),
    "conversation": Provide(owned_conversation),
    "allowance": Provide(chat_allowance, sync_to_thread=False),
}


def routes(
    settings: Settings, builtin: Sequence[ControllerRouterHandler], *, page: bool
) -> list[ControllerRouterHandler]:
    """Every route: the API, the seed contracts, the built-in MCP server's, and (`page`) the chat page when built."""
    route_handlers: list[ControllerRouterHandler] = [
        ChatController,
        AgUiController,
        chat_stream_route,
        get_chat_response_stream,
        Seed002Controller,
        general_chat_stream,
        ActionController,
        ConversationController,
        ShareController,
        SharedController,
        FeedbackController,
        ComparisonController,
        TraceController,
        AccountController,
        sign_in,
        FileController,
        MetricsController,
        health,
        live,
        ready,
        profiles,
        agents,
        *builtin,
    ]
    if not page:
        return route_handlers
    if (index := settings.server.frontend_dir / "index.html").exists():
        route_handlers.append(asset_route(settings.server.frontend_dir / "assets"))
        route_handlers.append(create_static_files_router("/", [settings.server.frontend_dir], html_mode=True))
        route_handlers.append(shared_page(index))
    else:
        log.warning("no chat page: %s has no index.html (tasks.py serve builds it)", settings.server.frontend_dir)
    return route_handlers


def shared_page(index: Path) -> ControllerRouterHandler:
    """/share/{id}: the page, which shows a shared conversation read-only (routes/shares.py)."""

    @get("/share/{share_id:str}", media_type="text/html", include_in_schema=False, sync_to_thread=False)
    def page(share_id: str) -> File:
        return File(index, content_disposition_type="inline", headers={"x-robots-tag": "noindex, nofollow"})

    return page


class Threadline(InitPluginProtocol):
    """threadline in a Litestar app of your own: every route (the API, the seed contracts, the built-in MCP
    server, and the chat page when `page`) under one router with its own middleware, dependencies, limits and
    error handling, and the services started by the app's lifespan. `graph` is your LangGraph agent, as
    THREADLINE_GRAPH would name it (agent/loading.py); else the setting, else the built-in agent. `agents`:
    those the setting names, loaded and checked already (the command line does that before anything opens).
    `identify` is your app's own login: an async callable given the request that returns your user's id (or
    a `Principal` with roles), or None for an anonymous visitor (http/host_identity.py). `path` mounts every
    route under a prefix of the app's (`/chat`: `/chat/api/chat`, `/chat/share/{id}`), and the URLs threadline
    writes into answers follow it (mount_path.py).

        app = Litestar(route_handlers=[...yours], plugins=[Threadline(graph=my_graph)])

    The security headers (a `before_send` hook) apply to the app's other routes too; CORS_ORIGINS is added to the
    app's own CORS configuration, which keeps its origins, methods and headers."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        graph: AgentSource | None = None,
        page: bool = False,
        agents: tuple[ServedAgent, ...] | None = None,
        identify: Identify | None = None,
        path: str = "/",
    ) -> None:
        self.path = route_prefix(path)
        if page and self.path:
            raise ValueError(f"path {path!r}: the chat page is served at the root only (page=False under a prefix)")
        # In an app of its own, only the THREADLINE_ names: the app's DATABASE_URL and LOG_LEVEL are its own.
        self.settings = settings or load_settings(own_names_only=True)
        self.graph = graph
        self.agents = agents
        self.identify = identify
        self.graph_auth: GraphAuth | None = None
        self.page = page
        self.tracer_provider = (
            tracer_provider_for(self.settings.observability.otlp_traces_endpoint)
            if self.settings.observability.otlp_traces_endpoint
            else None
        )

    def on_app_init(self, app_config: AppConfig) -> AppConfig:
        settings, tracer_provider = self.settings, self.tracer_provider
        secret = load_secret(settings.auth.client_id_secret, settings.storage.data_dir)
        signer, tokens = Signer(secret), tokens_for(settings.mcp.mcp_secret, lambda: secret)
        limits = Limits.of(settings.limits)
        state = State({"limits": limits, "signer": signer})
        mcp_server = build_server(lambda: state.services)
        mcp_server.streamable_http_app()  # creates the session manager that /mcp hands requests to
        agents = self.agents if self.agents is not None else load_agents(settings, self.graph)
        # A langgraph.json's own auth, unless the app has a login of its own (http/graph_auth.py)
        self.graph_auth = None if self.identify else graph_auth(settings.agents.graph)
        decide = self.graph_auth.decide if self.graph_auth else None
        provider = httpx.AsyncClient(timeout=10)  # the identity provider's discovery document and keys

        @asynccontextmanager
        async def lifespan(app: Litestar) -> AsyncIterator[None]:
            async with (
                provider,
                mcp_server.session_manager.run(),
                running_services(
                    settings, limits.chat.description, mcp_server, tracer_provider, agents, decide
                ) as services,
            ):
                app.state.services = state.services = services
                yield

        router = Router(
            self.path or "/",
            route_handlers=routes(settings, builtin_routes(mcp_server, tokens), page=self.page),
            middleware=[
                DefineMiddleware(MountedAt, path=self.path),
                DefineMiddleware(ForwardedScheme, addresses=limits.client_address),
                DefineMiddleware(RequestLimits, seconds=settings.limits.body_timeout),
                self.identity(signer, provider),
            ],
            dependencies=DEPENDENCIES,
            exception_handlers=EXCEPTION_HANDLERS,
            before_request=limit_every_request,
            request_max_body_size=MAX_BODY_BYTES,
        )
        app_config.route_handlers.append(router)
        app_config.lifespan.append(lifespan)
        app_config.state.update(state)
        app_config.before_send.append(SecurityHeaders((*settings.server.cors_origins, *page_provider(settings))))
        if (cors := cors_config(settings.server.cors_origins)) is not None:
            app_config.cors_config = merged_cors(app_config.cors_config, cors)
        if app_config.cors_config is not None:
            app_config.cors_config = credentials_only_for_listed_origins(app_config.cors_config)
        return app_config

    def identity(self, signer: Signer, provider: httpx.AsyncClient) -> DefineMiddleware:
        """Who asks: the host app's login, else a langgraph.json's `auth` (http/graph_auth.py), else the identity
        provider's bearer token, else the visitor's signed cookie."""
        settings = self.settings
        bearer = (
            BearerTokens(settings.auth.auth_issuer, settings.auth.auth_audience, settings.auth.auth_jwks_url, provider)
            if settings.auth.auth_issuer
            else None
        )
        return DefineMiddleware(
            ClientIdentityMiddleware,
            signer=signer,
            bearer=bearer,
            anonymous=settings.auth.auth_anonymous == "allow",
            admin_token=settings.auth.admin_token,
            identify=self.identify or (auth.identify if (auth := self.graph_auth) else None),
        )


def create_app(settings: Settings | None = None, agents: tuple[ServedAgent, ...] | None = None) -> Litestar:
    """The standalone server: the plugin, with the chat page, in an app of its own."""
    threadline = Threadline(settings or load_settings(), page=True, agents=agents)
    return Litestar(
        plugins=[threadline, *([http_spans(threadline.tracer_provider)] if threadline.tracer_provider else [])],
        exception_handlers=EXCEPTION_HANDLERS,  # an unknown route gets the same JSON error as a refusal
        openapi_config=OpenAPIConfig(title="threadline", version=__version__, path="/schema"),
        request_max_body_size=MAX_BODY_BYTES,
        logging_config=None,  # threadline.observability.logs configures logging; Litestar's own would replace it
    )
