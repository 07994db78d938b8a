"""What went wrong with a turn, in words a user can act on and a code a program can branch on.

Provider libraries raise their own exception types (openai, google-genai, httpx underneath, often
wrapped by langchain); this reads the whole exception chain for an HTTP status or a network failure.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace

import httpx

from threadline.agent.hosting import AgentFailed, AgentInputMissing


@dataclass(frozen=True)
class Failure:
    code: str
    message: str
    retryable: bool


UNAUTHORIZED = Failure(
    "UNAUTHORIZED", "Invalid API key: the assistant's model provider refused our credentials.", False
)
RATE_LIMITED = Failure("RATE_LIMITED", "Rate limited, try again: the model provider is busy right now.", True)
NETWORK_ERROR = Failure(
    "NETWORK_ERROR", "Connection failed: the model provider could not be reached. Please try again.", True
)
TIMEOUT = Failure("TIMEOUT", "The assistant took too long to answer. Please try again.", True)
UNAVAILABLE = Failure(
    "AI_SERVICE_UNAVAILABLE", "The assistant is unavailable right now. Please try again in a moment.", True
)
FAILURES = (UNAUTHORIZED, RATE_LIMITED, NETWORK_ERROR, TIMEOUT, UNAVAILABLE)
# A hosted agent's own code raised (agent/hosting.py): a bug to find by the trace id, not a busy provider.
AGENT_ERROR = Failure("AGENT_ERROR", "The agent failed while answering.", False)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        yield link
        link = link.__cause__ or link.__context__


def _status(exc: BaseException) -> int | None:
    # A provider's library is imported only when its model is in use (about 15 MB each); if it was
    # never imported, none of its exceptions can be in the chain.
    if (openai := sys.modules.get("openai")) and isinstance(exc, openai.APIStatusError):
        return int(exc.status_code)
    if (genai_errors := sys.modules.get("google.genai.errors")) and isinstance(exc, genai_errors.APIError):
        return int(exc.code)
    if (anthropic := sys.modules.get("anthropic")) and isinstance(exc, anthropic.APIStatusError):
        return int(exc.status_code)
    if isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code
    return None


def _unsaveable(exc: BaseException) -> bool:
    """LangGraph's checkpoint serializer refused a value of the agent's state (a module, an open file, a client):
    the agent's doing, not the service's. Told by the serializer's own words, the only mark it leaves."""
    return isinstance(exc, TypeError) and "serializable" in str(exc)


def classify(exc: BaseException, trace_id: str = "") -> Failure:
    timeouts: tuple[type, ...] = (httpx.TimeoutException, asyncio.TimeoutError, TimeoutError)
    unreachable: tuple[type, ...] = (httpx.TransportError, ConnectionError)
    for library in ("openai", "anthropic"):  # both name their timeout and connection errors alike
        if module := sys.modules.get(library):
            timeouts, unreachable = (*timeouts, module.APITimeoutError), (*unreachable, module.APIConnectionError)
    if aiohttp := sys.modules.get("aiohttp"):  # Google's client streams through aiohttp when it is installed
        unreachable = (*unreachable, aiohttp.ClientConnectionError, aiohttp.ClientPayloadError)
    if isinstance(exc, AgentInputMissing):
        return Failure("VALIDATION_ERROR", f"Invalid request: {exc}", False)
    where = f" Its trace id is {trace_id}." if trace_id else ""
    if isinstance(exc, AgentFailed):
        return replace(AGENT_ERROR, message=f"{AGENT_ERROR.message}{where} Your next message starts afresh.")
    if unsaveable := next((cause for cause in _chain(exc) if _unsaveable(cause)), None):
        said = f"The agent's state could not be saved ({unsaveable}): keep only values a checkpoint can store."
        return replace(AGENT_ERROR, message=f"{said}{where}")
    for cause in _chain(exc):
        status = _status(cause)
        if status in (401, 403):
            return UNAUTHORIZED
        if status == 429:
            return RATE_LIMITED
        if status in (408, 504):
            return TIMEOUT
        if status is not None:
            return UNAVAILABLE
        if isinstance(cause, timeouts):
            return TIMEOUT
        if isinstance(cause, unreachable):
            return NETWORK_ERROR
    return UNAVAILABLE
