"""What the seed contracts share: each takes `{message, conversation_id?}` and starts the same answer."""

from __future__ import annotations

from threadline.answers.service import AnswerOptions, NewMessage, new_id
from threadline.answers.turn import Turn
from threadline.http.dependencies import ChatAllowance
from threadline.http.messages import checked_text
from threadline.http.services import Services
from threadline.settings import StreamMode


async def contract_turn(
    services: Services,
    client_id: str,
    allowance: ChatAllowance,
    message: str,
    conversation_id: str | None,
    *,
    stream_mode: StreamMode,
) -> tuple[str, Turn]:
    """Start an answer for a seed contract's message: checked, in the visitor's own conversation (a 404 for
    an id that is not theirs) or a new one. The seeds have no approvals, so a call that needs one is declined
    at once."""
    text = checked_text(message, "message")
    await allowance.spend()  # a message refused as invalid costs nothing
    if conversation_id:
        await services.answers.owned(client_id, conversation_id)
    conversation_id = conversation_id or new_id()
    options = AnswerOptions(stream_mode=stream_mode, interactive=False)
    return conversation_id, await services.answers.start(client_id, conversation_id, NewMessage(text), options)
