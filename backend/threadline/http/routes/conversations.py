"""Reading and deleting conversations: a list for the sidebar, full history for a reloaded page."""

from __future__ import annotations

import base64
import re
import unicodedata
from datetime import datetime
from typing import Annotated
from urllib.parse import urlencode

import msgspec
from litestar import Controller, Response, delete, get, patch, post
from litestar.params import JSONBody, Parameter

from threadline.conversations.history import ui_messages
from threadline.conversations.state import load
from threadline.http.dependencies import ConversationId, Ctx, OwnedConversation
from threadline.http.errors import AnyRequest, error_responses, json_only, not_found
from threadline.http.messages import invalid, storable
from threadline.http.schemas import ID_PATTERN, ConversationDetail, Id
from threadline.runtime import Services
from threadline.storage.conversation_list import ConversationSummary, Page
from threadline.storage.threads import thread_of

MAX_TITLE_CHARS = 120


class Rename(msgspec.Struct):
    title: Annotated[str, msgspec.Meta(max_length=MAX_TITLE_CHARS * 4)]  # checked again once stripped, below


MAX_QUERY_CHARS = 200


def cursor_of(conversation: ConversationSummary) -> str:
    """Where a page ended: the last conversation's activity and id, opaque to the client."""
    position = f"{conversation.last_message_at.isoformat()}|{conversation.id}"
    return base64.urlsafe_b64encode(position.encode()).decode().rstrip("=")


def cursor_position(cursor: str | None) -> tuple[datetime, str] | None:
    if cursor is None:
        return None
    try:
        at, conversation_id = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode().split("|", 1)
        if re.match(ID_PATTERN, conversation_id):  # a forged one could hold what PostgreSQL cannot compare (a NUL)
            return datetime.fromisoformat(at), conversation_id
    except (ValueError, UnicodeDecodeError):
        pass
    raise invalid("cursor", "not a cursor this server gave (take it from the Link header)")


# Characters that reorder the text around them: a title showing "fdp.exe" may be "exe.pdf".
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def checked_title(text: str) -> str:
    """A title the person chose: on one line, 1–120 characters, something visible, nothing that reorders text."""
    title = " ".join(storable(text, "title", "title").split())
    if not 1 <= len(title) <= MAX_TITLE_CHARS:
        raise invalid("title", f"a title has 1 to {MAX_TITLE_CHARS} characters")
    if BIDI_CONTROLS.intersection(title):
        raise invalid("title", "a title cannot hold characters that change the direction of the text around them")
    if all(unicodedata.category(char) in ("Cf", "Cc", "Zs") for char in title):
        raise invalid("title", "a title needs at least one visible character")
    return title


def next_page(q: str, limit: int, last: ConversationSummary) -> str:
    return urlencode({key: value for key, value in (("q", q), ("limit", limit), ("cursor", cursor_of(last))) if value})


class ShowVersion(msgspec.Struct, rename="camel"):
    message_id: Id  # a user message (its edits) or an answer's assistant message id (its regenerations)
    version: Annotated[int, msgspec.Meta(ge=1)]  # from 1, as `metadata.version` counts


class ConversationController(Controller):
    path = "/api/conversations"

    @get(
        "/",
        summary="The conversations, most recently used first; searched and paged",
        responses=error_responses(400, 503),
    )
    async def list_conversations(
        self,
        request: AnyRequest,
        ctx: Ctx,
        q: Annotated[str, Parameter(max_length=MAX_QUERY_CHARS, description="words the conversation has")] = "",
        cursor: Annotated[str | None, Parameter(max_length=200, description="the Link header's next page")] = None,
        limit: Annotated[int, Parameter(ge=1, le=100, description="conversations per page")] = 100,
    ) -> Response[list[ConversationSummary]]:
        """Each page is at most `limit` conversations; when more follow, the `Link` header's `rel="next"` URL
        gives the next page (the same search, from where this one ended)."""
        page = Page(limit=limit + 1, query=storable(q, "q", "search").strip(), after=cursor_position(cursor))
        found = await ctx.services.conversations.list(ctx.client_id, page)
        headers = {}
        if len(found) > limit:
            found = found[:limit]
            headers["Link"] = f'<{request.url.path}?{next_page(q, limit, found[-1])}>; rel="next"'
        # A langgraph.json's auth may filter the list: a page may then be shorter, its Link still leads on.
        shown = await ctx.services.answers.access.visible(ctx.client_id, found, lambda row: row.id, limit)
        return Response(shown, headers=headers)

    @get(
        "/{conversation_id:str}",
        summary="One conversation with its messages as UIMessage objects",
        responses=error_responses(400, 404, 503),
    )
    async def get_conversation(
        self,
        ctx: Ctx,
        conversation: OwnedConversation,
        conversation_id: str = ConversationId,
    ) -> ConversationDetail:
        return await detail(ctx.services, ctx.client_id, conversation)

    @post(
        "/{conversation_id:str}/versions",
        status_code=200,
        guards=[json_only],
        summary="Show another version of an edited message or a regenerated answer, and the branch after it",
        responses=error_responses(400, 404, 409, 503),
    )
    async def show_version(
        self,
        data: JSONBody[ShowVersion],
        ctx: Ctx,
        conversation_id: str = ConversationId,
    ) -> ConversationDetail:
        """`{"messageId": …, "version": n}`: a message whose metadata has `versions` shows its version `n`
        (from 1). Answers the conversation as GET does, on the branch now shown."""
        await ctx.services.answers.show_version(ctx.client_id, conversation_id, data.message_id, data.version)
        return await detail(
            ctx.services, ctx.client_id, await ctx.services.answers.owned(ctx.client_id, conversation_id)
        )

    @patch(
        "/{conversation_id:str}",
        guards=[json_only],
        summary="Rename a conversation",
        responses=error_responses(400, 404, 503),
    )
    async def rename_conversation(
        self,
        data: JSONBody[Rename],
        ctx: Ctx,
        conversation_id: str = ConversationId,
    ) -> ConversationSummary:
        """`{"title": …}`: 1–120 characters once spaces are trimmed, on one line."""
        title = checked_title(data.title)
        await ctx.services.answers.access.check("update", ctx.client_id, conversation_id)  # a langgraph.json's auth
        renamed = await ctx.services.conversations.rename(conversation_id, ctx.client_id, title)
        if renamed is None:
            raise not_found()
        return renamed

    @delete(
        "/{conversation_id:str}",
        summary="Delete a conversation and its history, stopping its answer",
        responses=error_responses(400, 404, 503),
    )
    async def delete_conversation(self, ctx: Ctx, conversation_id: str = ConversationId) -> None:
        """An answer still streaming is stopped first (in whichever process runs it) and its last writes are
        awaited, so nothing it saves can bring the conversation back."""
        await ctx.services.answers.access.check("delete", ctx.client_id, conversation_id)
        if not await ctx.services.conversation_service.delete(ctx.client_id, conversation_id):
            raise not_found()
        await ctx.services.answers.access.forget(ctx.client_id, conversation_id)


async def detail(services: Services, client_id: str, conversation: ConversationSummary) -> ConversationDetail:
    """A conversation with its messages on the branch shown, each rated answer with its rating."""
    history = await load(services.graph, thread_of(client_id, conversation.id))
    feedback = await services.storage.feedback.of_conversation(client_id, conversation.id)
    return ConversationDetail(
        id=conversation.id,
        title=conversation.title,
        messages=ui_messages(history, conversation.id, feedback, services.graphs.titles),
        created_at=conversation.created_at,
        last_message_at=conversation.last_message_at,
    )
