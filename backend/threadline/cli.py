"""The `threadline` command: `threadline serve` runs the server with settings from the environment;
`threadline check` loads them and the agent and says what would run; `threadline migrate` brings the
database up to date; `threadline chat` talks to a running server from the terminal; `threadline mcp-token`
mints a token for the built-in MCP server."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import os
import socket
import sys
import warnings
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any

from threadline import __version__
from threadline.observability.logs import configure as configure_logging
from threadline.settings import Settings, SettingsError, given, load_settings


def stoppable_server() -> type:
    """uvicorn, except that a signal during start-up (waiting for the database, say) ends it at once: uvicorn
    itself only looks at the signal once start-up is over, which may be never."""
    import uvicorn

    class StoppableServer(uvicorn.Server):
        stop_starting: Callable[[], object] | None = None

        async def serve(self, sockets: list[socket.socket] | None = None) -> None:
            task, loop = asyncio.current_task(), asyncio.get_running_loop()
            assert task is not None, "uvicorn serves in a task"
            self.stop_starting = partial(loop.call_soon_threadsafe, task.cancel)
            try:
                await super().serve(sockets)
            except asyncio.CancelledError:
                if not self._captured_signals:
                    raise
                # What start-up left open is closed as the event loop ends, the embedded PostgreSQL included.
                raise SystemExit(128 + self._captured_signals[-1]) from None

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            super().handle_exit(sig, frame)
            if not self.started and self.stop_starting is not None:  # nothing is served yet: stop starting
                self.stop_starting()

    return StoppableServer


def settings_from(options: dict[str, str]) -> Settings | None:
    """The settings from the environment, with what the command line gives (by variable name); None after
    saying what is wrong."""
    try:
        settings = load_settings({**os.environ, **options} if options else None)
    except SettingsError as error:
        print(f"threadline: {error}", file=sys.stderr)
        return None
    if settings.models.model_provider == "demo" and not given(os.environ, "model_provider"):
        print(
            "threadline: no model provider is configured: the offline demo model answers (CHAT_MODEL_PROVIDER)",
            file=sys.stderr,
        )
    return settings


def loaded_agents(settings: Settings) -> tuple[Any, ...] | None:
    """A team's own agents (THREADLINE_GRAPH), checked; None after saying why they cannot run."""
    from threadline.agent.graphs import load_agents
    from threadline.agent.loading import AgentLoadError
    from threadline.http.graph_auth import graph_auth

    try:
        agents = load_agents(settings)
        graph_auth(settings.agents.graph)  # a langgraph.json's auth, checked too
        return agents
    except AgentLoadError as error:
        print(f"threadline: {error}", file=sys.stderr)
        return None


def serve(options: dict[str, str], workers: int = 1, reload: bool = False) -> int:
    if (settings := settings_from(options)) is None:
        return 2
    unused = unused_extras(settings, reload)
    with unimportable(unused):
        importlib.import_module("threadline.http.app")  # its libraries decide what they go without: before the agent
    # a team's own agent that cannot run stops start-up here, in one line, before anything is opened
    if (agents := loaded_agents(settings)) is None:
        return 2
    if workers > 1 and settings.storage.memory_backend == "memory":
        print("threadline: --workers needs PostgreSQL (CHAT_MEMORY_BACKEND=memory is one process's)", file=sys.stderr)
        return 2
    configure_logging(settings.observability.log_level, settings.observability.log_format)
    # uvicorn shuts down on Ctrl+C and says so, then hands the signal back to Python: no traceback after that.
    with contextlib.suppress(KeyboardInterrupt):
        if workers == 1 and not reload:
            stoppable_server()(uvicorn_config(settings, app_for(settings, agents, unused))).run()
            return 0
        # Each process builds its own app from the same environment (the command line's options put into it).
        os.environ.update(options)
        config = uvicorn_config(settings, f"{__name__}:app_from_environment", factory=True, workers=workers)
        if reload:
            config.reload, config.reload_dirs = True, watched_folders(settings)
            config.reload_includes = ["*.py", "langgraph.json"]
        run_supervised(config, reload)
    return 0


def unused_extras(settings: Settings, reload: bool) -> tuple[str, ...]:
    """Optional parts of libraries a server never uses, about 11 MB of its idle memory. Each library goes on as if
    the part were not installed, as it documents:
    - httpx's command-line client (with rich, pygments and click), which httpx imports whenever they are installed;
    - rich, which the MCP SDK's FastMCP imports for a log handler it hands to `logging.basicConfig`, a no-op once
      `serve` has configured logging (1.5 MB);
    - httpx2, a fork of httpx that LangSmith's client prefers when installed, else it uses httpx (1.1 MB);
    - requests' character detection, which guesses the encoding of a response that declares none, else UTF-8 is
      taken (requests serves LangSmith's client; 3.1 MB);
    - unless `--reload`, uvicorn's file-watching reloader;
    - unless something traces (an OTLP endpoint, Langfuse, LangSmith's OpenTelemetry mode): OpenTelemetry's SDK,
      which LangSmith's client imports for that mode, and Litestar's OpenTelemetry plugin, which Litestar's app
      imports on every start only to look for the plugin's middleware (1.6 MB)."""
    unused = ["httpx._main", "rich", "httpx2", "charset_normalizer", "chardet"]
    if not reload:
        unused.append("uvicorn.supervisors.watchfilesreload")
    observability = settings.observability
    langsmith_otel = {f"{prefix}_{name}" for prefix in ("LANGSMITH", "LANGCHAIN") for name in LANGSMITH_OTEL}
    traced = observability.otlp_traces_endpoint or observability.langfuse_public_key or langsmith_otel & set(os.environ)
    if not traced:
        unused += ["opentelemetry.sdk", "litestar.plugins.opentelemetry"]
    return tuple(unused)


LANGSMITH_OTEL = ("TRACING_MODE", "OTEL_ENABLED", "OTEL_ONLY")  # what can turn LangSmith's OpenTelemetry mode on


@contextlib.contextmanager
def unimportable(modules: tuple[str, ...]) -> Iterator[None]:
    """`modules` cannot be imported meanwhile, so a library imported meanwhile goes on as if they were not installed
    (its `except ImportError`); after, they can be again: a team's agent may use them."""
    marked = [module for module in modules if module not in sys.modules]
    for module in marked:
        sys.modules[module] = None  # type: ignore[assignment]  # None: Python's mark for "cannot import"
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Unable to find acceptable character detection")  # requests, said once
            yield
    finally:
        for module in marked:
            if sys.modules.get(module, ...) is None:
                del sys.modules[module]


def app_for(settings: Settings, agents: tuple[Any, ...], unused: tuple[str, ...] = ()) -> Any:
    from threadline.http.app import create_app
    from threadline.serving import tune_process

    with unimportable(unused):  # the app's own start imports some (Litestar, FastMCP)
        app = create_app(settings, agents)
    app.on_startup.append(tune_process)
    return app


def app_from_environment() -> Any:
    """One process's app under `serve --workers` or `--reload`: the settings and agents read again here."""
    settings = load_settings()
    unused = unused_extras(settings, reload=False)  # a worker never watches files: its supervisor does
    with unimportable(unused):
        importlib.import_module("threadline.http.app")  # as `serve` does
    from threadline.agent.graphs import load_agents

    configure_logging(settings.observability.log_level, settings.observability.log_format)
    return app_for(settings, load_agents(settings), unused)


def uvicorn_config(settings: Settings, app: Any, **options: Any) -> Any:
    from threadline.http.connection_limits import server_config

    return server_config(
        app,
        host=settings.server.host,
        port=settings.server.port,
        max_connections=settings.limits.max_connections,
        header_timeout=settings.limits.header_timeout,
        log_level=settings.observability.log_level.lower(),
        access_log=False,
        log_config=None,  # uvicorn logs through threadline.observability.logs too
        # On SIGTERM: no new connections, running answers get this long to finish, then they are stopped
        # the normal way (their partials saved) as the app shuts down.
        timeout_graceful_shutdown=settings.server.shutdown_grace,
        **options,
    )


def watched_folders(settings: Settings) -> list[str]:
    """What `--reload` watches: the current folder, and the folder of a team's agent named by its path."""
    folders = [os.getcwd()]
    graph = settings.agents.graph or ""
    where = graph.rpartition(":")[0] or graph  # `file.py:name`, `langgraph.json[:id]`, `module:name`
    if where.endswith((".py", ".json")):
        folders.append(str(Path(where).resolve().parent))
    return folders


def run_supervised(config: Any, reload: bool) -> None:
    """uvicorn's own supervisors: one that restarts the server when a watched file changes, or one that runs
    `config.workers` processes on one socket (and starts a new one when one dies)."""
    from uvicorn import Server
    from uvicorn.supervisors import ChangeReload, Multiprocess

    sockets = [config.bind_socket()]
    if reload:  # the server runs in a process the supervisor starts again: uvicorn's own, which pickles
        ChangeReload(config, target=Server(config).run, sockets=sockets).run()
    else:
        Multiprocess(config, sockets=sockets).run()


def agent_stores(agents: tuple[Any, ...], storage: str) -> str:
    """Which store each agent's `runtime.store` is: its own where it is compiled with one, else threadline's."""
    from langgraph.pregel import Pregel
    from langgraph.store.base import BaseStore

    said = []
    for agent in agents:
        if not isinstance(agent.source, Pregel):
            said.append(f"{agent.id}: its own if its builder or factory compiles one")
        elif isinstance(agent.source.store, BaseStore):
            said.append(f"{agent.id}: its own {type(agent.source.store).__name__}")
    return "; ".join([*said, f"{'else ' if said else ''}threadline's ({storage})"])


def check(options: dict[str, str]) -> int:
    """Load the settings and the agent as `serve` would, print what would run, and exit: 0 when it can."""
    if (settings := settings_from(options)) is None or (agents := loaded_agents(settings)) is None:
        return 2
    storage = "memory" if settings.storage.memory_backend == "memory" else "PostgreSQL at DATABASE_URL"
    if settings.storage.memory_backend == "postgres" and not settings.storage.database_url:
        storage = f"embedded PostgreSQL in {settings.storage.data_dir}"
    if settings.storage.memory_backend == "postgres":  # where a database set up by an earlier version has them: public
        storage += f", schema {settings.storage.database_schema} (THREADLINE_DATABASE_SCHEMA)"
    profiles = ", ".join(profile.id for profile in settings.models.profiles) or "none (CHAT_MODEL_PROVIDER)"
    lines = {
        "version": __version__,
        "listens on": f"{settings.server.host}:{settings.server.port}",
        "model": f"{settings.models.model_provider}:{settings.models.model_name}",
        "profiles": profiles,
        "agents": ", ".join(agent.id for agent in agents) or "the built-in agent",
        "storage": storage,
        "agent memory": agent_stores(agents, storage),
        "tool servers": ", ".join(server.name for server in settings.mcp.mcp_servers) or "none",
        "chat page": str(settings.server.frontend_dir)
        if (settings.server.frontend_dir / "index.html").exists()
        else "none",
    }
    for name, value in lines.items():
        print(f"{name + ':':14}{value}")
    return 0


def migrate(options: dict[str, str]) -> int:
    """Apply the database's pending migrations (LangGraph's tables, the agents' store, threadline's own) and exit;
    `serve` does the same at start, so this is for deployments that migrate in a step of their own."""
    if (settings := settings_from(options)) is None:
        return 2
    if settings.storage.memory_backend == "memory":
        print("threadline: CHAT_MEMORY_BACKEND=memory keeps nothing to migrate", file=sys.stderr)
        return 2
    from threadline.conversations.state import after_history
    from threadline.storage.stores import open_storage

    async def run() -> str:
        async with open_storage(settings.storage, after_history) as storage:
            return storage.description  # opening it applies what is pending, under a lock other processes wait for

    configure_logging(settings.observability.log_level, settings.observability.log_format)
    where = asyncio.run(run())
    print(f"threadline: the database is up to date ({where})")
    return 0


def mcp_token(client_id: str | None, conversation_id: str | None, ttl: float) -> int:
    from threadline.http.identity import load_secret
    from threadline.mcp.tokens import Caller, tokens_for

    try:  # only the secrets matter here, so a missing model key must not stop it
        settings = load_settings({**os.environ, "THREADLINE_CHAT_MODEL_PROVIDER": "demo"})
    except SettingsError as error:
        print(f"threadline: {error}", file=sys.stderr)
        return 2
    tokens = tokens_for(
        settings.mcp.mcp_secret, lambda: load_secret(settings.auth.client_id_secret, settings.storage.data_dir)
    )
    print(tokens.mint(Caller(client_id=client_id, conversation_id=conversation_id), ttl=ttl))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="threadline", description=__doc__)
    parser.add_argument("--version", action="version", version=f"threadline {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    serving = commands.add_parser("serve", help="run the chat server (settings come from the environment; see README)")
    checking = commands.add_parser("check", help="load the settings and the agent, print what would run, and exit")
    migrating = commands.add_parser("migrate", help="bring the database up to date, then exit")
    for command in (serving, checking, migrating):
        command.add_argument(
            "--graph", help="your own LangGraph agent, path/to/file.py:name or path/langgraph.json (THREADLINE_GRAPH)"
        )
    for command in (serving, checking):
        command.add_argument("--host", help="the address to listen on (THREADLINE_HOST)")
        command.add_argument("--port", help="the port to listen on (THREADLINE_PORT)")
    serving.add_argument(
        "--workers", type=int, default=1, help="server processes on one port, sharing the database (default 1)"
    )
    serving.add_argument("--reload", action="store_true", help="restart when a Python file here or the agent's changes")
    chat = commands.add_parser("chat", help="chat with a running server from the terminal (one message per line)")
    chat.add_argument("--url", default="http://127.0.0.1:8000", help="the server (default %(default)s)")
    chat.add_argument("--conversation", help="continue this conversation id")
    chat.add_argument("--token", help="an X-Threadline-Client token, to reach conversations started elsewhere")
    token = commands.add_parser("mcp-token", help="print a JWT for the built-in MCP server at /mcp and /mcp/rpc")
    token.add_argument("--client-id", help="the visitor whose conversations the tools may read")
    token.add_argument("--conversation", help="the conversation search_conversation searches")
    token.add_argument("--ttl", type=float, default=3600, help="seconds until it expires (default %(default)s)")
    args = parser.parse_args(argv)
    if args.command == "mcp-token":
        return mcp_token(args.client_id, args.conversation, args.ttl)
    if args.command == "chat":
        from threadline.client.chat_cli import run

        return run(args.url, args.conversation, args.token)
    flags = {"THREADLINE_GRAPH": "graph", "THREADLINE_HOST": "host", "THREADLINE_PORT": "port"}
    options = {name: value for name, flag in flags.items() if (value := getattr(args, flag, None))}
    if args.command == "serve":
        return serve(options, max(1, args.workers), args.reload)
    return {"check": check, "migrate": migrate}[args.command](options)


if __name__ == "__main__":
    sys.exit(main())
