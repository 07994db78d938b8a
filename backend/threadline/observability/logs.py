"""Server logs with their context: `conversation_id`, `error_code` and the like travel as fields.

`LOG_FORMAT=json` writes one JSON object per line for log collectors; `text` (the default) is for
people and appends the same fields as `key=value`.
"""

from __future__ import annotations

import logging
import time

import msgspec

# Attributes every record has, and uvicorn's terminal-colour copy of its message.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message",
    "asctime",
    "taskName",
    "color_message",
}
_encode = msgspec.json.Encoder(enc_hook=str).encode


def context_of(record: logging.LogRecord) -> dict[str, object]:
    """The fields a caller passed with `extra=`."""
    return {key: value for key, value in vars(record).items() if key not in _STANDARD}


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:
        fields = " ".join(f"{key}={value}" for key, value in context_of(record).items())
        return super().formatMessage(record) + (f" [{fields}]" if fields else "")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": self.formatTime(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            **context_of(record),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return _encode(entry).decode()


class ExporterThrottle(logging.Filter):
    """Each message of the tracing exporters (OpenTelemetry, Langfuse) once per `every` seconds: one that
    cannot reach its collector would otherwise log every batch, for as long as the collector is down."""

    def __init__(self, every: float = 600.0) -> None:
        super().__init__()
        self.every = every
        self.last: dict[tuple[str, str], float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith(("opentelemetry", "langfuse")):
            return True
        key, now = (record.name, str(record.msg)), time.monotonic()
        if now - self.last.get(key, -self.every) < self.every:
            return False
        self.last[key] = now
        return True


def configure(level: str, fmt: str) -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    handler.addFilter(ExporterThrottle())
    logging.basicConfig(level=level, handlers=[handler], force=True)
    logging.getLogger("pgserver").setLevel(logging.WARNING)  # the embedded database narrates every command
    for chatty in ("httpx", "mcp"):  # one line per tool call or MCP session; failures still show
        logging.getLogger(chatty).setLevel(logging.WARNING)
