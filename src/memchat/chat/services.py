"""What the chat turn works with, built once at start-up (memchat.app) and handed to each turn."""

from dataclasses import dataclass, field

from memchat.background import BackgroundTasks
from memchat.db.engine import Database
from memchat.llm.client import LLMClient
from memchat.memories.pipeline import MemoryPipeline
from memchat.settings import LimitSettings, SummarySettings
from memchat.throttle import RateLimiter


@dataclass
class ChatServices:
    db: Database
    llm: LLMClient
    memory: MemoryPipeline
    background: BackgroundTasks
    limiter: RateLimiter
    limits: LimitSettings
    summary: SummarySettings
    # Turns streaming right now, by user message id: a retried send gets 409 instead of a second turn.
    live_turns: set[str] = field(default_factory=set)
