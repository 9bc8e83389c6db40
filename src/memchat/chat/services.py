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
    # Turns streaming right now: user message id -> conversation id. A retried send gets 409
    # instead of a second turn, and so does an edit while a turn of its conversation streams.
    live_turns: dict[str, str] = field(default_factory=dict)
