"""What the running app holds: built once in the lifespan, reached by routes through dependencies."""

from dataclasses import dataclass, field
from typing import Any

from memchat.auth.security import TokenCodec
from memchat.auth.throttle import LoginThrottle
from memchat.background import BackgroundTasks
from memchat.chat.rate_limit import RateLimiter
from memchat.db.engine import Database
from memchat.llm.client import LLMClient
from memchat.memories.semantic import MemoryEmbeddings
from memchat.settings import Settings


@dataclass
class AppState:
    settings: Settings
    db: Database
    tokens: TokenCodec
    llm: LLMClient
    background: BackgroundTasks
    chat_limiter: RateLimiter
    login_throttle: LoginThrottle = field(default_factory=LoginThrottle)
    # Turns streaming right now, by user message id: a retried send gets 409 instead of a second turn.
    live_turns: set[str] = field(default_factory=set)
    # The embedded model server when no upstream URL is configured (memchat.llm.local).
    local_model: Any = None
    # Memory v2: the embedder and the embeddings extractor, when configured (memchat.memories.semantic).
    embeddings: MemoryEmbeddings | None = None
