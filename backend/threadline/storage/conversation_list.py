"""The `conversations` table: what a list of conversations needs (title and times) and the turn counts the
storage limits need, so listing never reads a checkpoint; kept in memory, too, while PostgreSQL is down."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

import msgspec

from threadline.refusals import Refused
from threadline.storage.fallback import SaveRetries

if TYPE_CHECKING:
    from threadline.storage.postgres.conversation_list import TurnAlong

log = logging.getLogger(__name__)

TITLE_LENGTH = 80
SEARCHED_CHARS = 100_000  # of one turn's text: what a tsvector can hold is bounded (1 MB)
SEARCH_TERMS = 8
ADD_WORDS = "words = strip(words || to_tsvector('simple', %s))"  # positions are not needed: no ranking


class ConversationSummary(msgspec.Struct, rename="camel", frozen=True):
    id: str
    title: str
    created_at: datetime
    last_message_at: datetime
    profile_id: str | None = None  # the model profile of its latest answer
    agent_id: str | None = None  # the agent it was started with (GET /api/agents), which it keeps


COLUMNS = "id, title, created_at, last_message_at, profile_id, agent_id"


# A conversation started while PostgreSQL was down, to record once it is back: visitor, id, title, agent.
Pending = tuple[str, str, str, str | None]

ANONYMOUS = r"^[0-9a-f]{32}$"  # an anonymous visitor's id (http/identity.py); users' start with a letter


class Page(msgspec.Struct, frozen=True):
    """Which conversations a list shows: those matching `query` (every word, as a word's beginning), older than
    the conversation `after` names (last activity, id) when it goes on from an earlier page, at most `limit`."""

    limit: int = 100
    query: str = ""
    after: tuple[datetime, str] | None = None


FIRST_PAGE = Page()


def search_terms(query: str) -> list[str]:
    """The words a search looks for, lower case, at most SEARCH_TERMS."""
    return re.findall(r"\w+", query.lower())[:SEARCH_TERMS]


def ts_query(terms: list[str]) -> str:
    """A tsquery matching conversations with every term as a word or a word's beginning ("tre" finds "tree")."""
    return " & ".join(f"'{term}':*" for term in terms)  # \w+ has no quote, colon or operator to escape


# What makes a first message Markdown rather than words: a link's or image's address, emphasis and code
# marks, and the markers that open a heading, a quote or a list item.
LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
EMPHASIS = re.compile(r"(\*\*|__|~~|\*|`+)(?=\S)(.+?)(?<=\S)\1")  # paired: `2*3` stays
MARKS = re.compile(r"(?m)^\s*(?:#{1,6}\s+|>\s*|[-*+]\s+|\d+[.)]\s+|`{3,}\w*)")


def title_from(text: str) -> str:
    """A conversation's first title: its first message's words, without Markdown markup, on one line."""
    words = EMPHASIS.sub(r"\2", MARKS.sub("", LINK.sub(r"\1", text)))
    line = " ".join("".join(char for char in words if char.isprintable() or char.isspace()).split())
    return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1].rstrip() + "…"


class StorageLimits(msgspec.Struct, frozen=True):
    """What one visitor may store: turns per conversation and conversations in all."""

    turns_per_conversation: int = 500
    conversations_per_visitor: int = 500

    def too_many_turns(self) -> Refused:
        return Refused(
            "CONVERSATION_FULL",
            f"This conversation has reached its limit of "
            f"{self.turns_per_conversation} messages. Start a new conversation to go on.",
        )

    def too_many_conversations(self) -> Refused:
        return Refused(
            "TOO_MANY_CONVERSATIONS",
            f"You have reached the limit of "
            f"{self.conversations_per_visitor} conversations. Delete one to start another.",
        )


def unstorable(exc: BaseException) -> Refused:
    log.warning("PostgreSQL refused a conversation's record: %s", exc)
    return Refused("VALIDATION_ERROR", "Invalid request: this message cannot be stored.", "messages")


class Conversations(Protocol):
    """A visitor's conversations, in PostgreSQL or in memory."""

    pending: dict[str, Pending]
    retries: SaveRetries

    async def touch(
        self,
        conversation_id: str,
        client_id: str,
        first_message: str,
        *,
        new_turn: bool = True,
        profile_id: str | None = None,
        agent_id: str | None = None,
    ) -> bool: ...

    def along(
        self,
        conversation_id: str,
        client_id: str,
        first_message: str,
        *,
        new_turn: bool = True,
        profile_id: str | None = None,
        agent_id: str | None = None,
    ) -> TurnAlong | None:
        """`touch` to send in the running answer's round trip, or None: then `touch`."""

    async def get(self, conversation_id: str, client_id: str) -> ConversationSummary | None: ...

    async def list(self, client_id: str, page: Page = FIRST_PAGE) -> list[ConversationSummary]: ...

    async def remember_words(self, conversation_id: str, client_id: str, text: str) -> None: ...

    async def name(self, conversation_id: str, client_id: str, title: str, unless_not: str) -> bool: ...

    async def rename(
        self, conversation_id: str, client_id: str, title: str, unless_not: str | None = None
    ) -> ConversationSummary | None: ...

    async def idle(self, days: float, anonymous_only: bool = False, limit: int = 500) -> Sequence[tuple[str, str]]: ...

    async def delete(self, conversation_id: str, client_id: str) -> bool: ...

    async def save_pending(self) -> None: ...
