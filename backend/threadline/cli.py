"""The `threadline` command: `threadline serve` runs the server with settings from the environment;
`threadline chat` talks to a running one from the terminal; `threadline mcp-token` mints a token for
the built-in MCP server."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import sys
from collections.abc import Callable
from functools import partial
from types import FrameType

from threadline.observability.logs import configure as configure_logging
from threadline.settings import SettingsError, load_settings


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


def serve(graph: str | None = None) -> int:
    try:
        settings = load_settings({**os.environ, "THREADLINE_GRAPH": graph} if graph else None)
    except SettingsError as error:
        print(f"threadline: {error}", file=sys.stderr)
        return 2
    from threadline.agent.graphs import load_agents
    from threadline.agent.loading import AgentLoadError
    from threadline.gc_tuning import tune_for_serving
    from threadline.http.app import create_app
    from threadline.http.connection_limits import server_config

    try:  # a team's own agent that cannot run stops start-up here, in one line, before anything is opened
        agents = load_agents(settings)
    except AgentLoadError as error:
        print(f"threadline: {error}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level, settings.log_format)
    app = create_app(settings, agents)
    app.on_startup.append(tune_for_serving)
    config = server_config(
        app,
        host=settings.host,
        port=settings.port,
        max_connections=settings.max_connections,
        header_timeout=settings.header_timeout,
        log_level=settings.log_level.lower(),
        access_log=False,
        log_config=None,
        # On SIGTERM: no new connections, running answers get this long to finish, then they are stopped
        # the normal way (their partials saved) as the app shuts down.
        timeout_graceful_shutdown=settings.shutdown_grace,
    )  # uvicorn logs through threadline.observability.logs too
    # uvicorn shuts down on Ctrl+C and says so, then hands the signal back to Python: no traceback after that.
    with contextlib.suppress(KeyboardInterrupt):
        stoppable_server()(config).run()
    return 0


def mcp_token(client_id: str | None, conversation_id: str | None, ttl: float) -> int:
    from threadline.mcp.tokens import Caller, tokens_for

    try:  # only the secrets matter here, so a missing model key must not stop it
        settings = load_settings({**os.environ, "CHAT_MODEL_PROVIDER": "demo"})
    except SettingsError as error:
        print(f"threadline: {error}", file=sys.stderr)
        return 2
    tokens = tokens_for(settings.mcp_secret, settings.client_id_secret, settings.data_dir)
    print(tokens.mint(Caller(client_id=client_id, conversation_id=conversation_id), ttl=ttl))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="threadline", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serving = commands.add_parser("serve", help="run the chat server (settings come from the environment; see README)")
    serving.add_argument(
        "--graph", help="your own LangGraph agent, path/to/file.py:name or path/langgraph.json (THREADLINE_GRAPH)"
    )
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
    if args.command == "serve":
        return serve(args.graph)
    if args.command == "chat":
        from threadline.client.chat_cli import run

        return run(args.url, args.conversation, args.token)
    return 2


if __name__ == "__main__":
    sys.exit(main())
