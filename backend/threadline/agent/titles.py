"""A conversation's title, written by its own model after the first answer: one small call, kept out of the
streamed answer (`nostream`), cleaned to one short line. A failed call leaves the first message's words."""

from __future__ import annotations

import logging

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from threadline.conversations.state import split_content
from threadline.storage.conversation_list import title_from

log = logging.getLogger(__name__)

TITLE_REQUEST = "Write a title for this chat."  # the demo model and the stand-ins know it
INSTRUCTIONS = (
    "You name chats. Reply with a title of 2 to 6 words for the chat that begins with the user's message below: "
    "no quotes, no punctuation at the end, no Markdown, in the language of the message."
)
MAX_TITLE = 60
QUESTION_CHARS = 2000  # of the first message: enough to name it
QUOTES = "\"'*#\u201c\u201d\u2018\u2019"  # what a model wraps a title in


async def title_for(model: BaseChatModel, question: str) -> str | None:
    """A short title for a chat that starts with `question`; None when the model gives none."""
    request = [
        SystemMessage(content=INSTRUCTIONS),
        HumanMessage(content=f"{TITLE_REQUEST}\n\n{question[:QUESTION_CHARS]}"),
    ]
    try:
        reply = await model.ainvoke(request, config={"tags": ["nostream"]})
    except Exception:
        log.warning("the model wrote no title", exc_info=True)
        return None
    text = split_content(reply.content)[0] if isinstance(reply.content, list) else str(reply.content)
    line = next((line for line in text.splitlines() if line.strip()), "")
    title = title_from(line.strip().strip(QUOTES).rstrip(".!:;"))
    if len(title) > MAX_TITLE:
        title = title[: MAX_TITLE - 1].rstrip() + "…"
    return title or None
