"""What one turn carries from its first commit to its last."""

from dataclasses import dataclass, field

from memchat.chat.prompt import ChatMessage
from memchat.models.base import new_id


@dataclass
class TurnContext:
    user_id: str
    agent_id: str | None
    conversation_id: str | None
    # The user message this turn answers (inserted now, or the one a regenerate/retry answers again).
    user_message_id: str | None
    user_text: str | None
    recent: list[tuple[str, str]] = field(default_factory=list)
    prompt: list[ChatMessage] = field(default_factory=list)
    # the instance that owns the turn: commit point 2 stores the reply only while it still does
    owner: str | None = None
    # the id the reply will be stored under, known before the first text so a client can be told
    reply_id: str = field(default_factory=new_id)
