"""What the chat turn works with, built once at start-up (memchat.app) and handed to each turn."""

import os
import socket
import uuid
from dataclasses import dataclass, field

from memchat.background import BackgroundTasks
from memchat.chat.streams import LocalTurnStreams, TurnStreams
from memchat.db.engine import Database
from memchat.limits.throttle import ChatLimiter
from memchat.llm.client import LLMClient
from memchat.memories.extraction.pipeline import MemoryPipeline
from memchat.settings import LimitSettings, SummarySettings


@dataclass
class ChatServices:
    db: Database
    llm: LLMClient
    memory: MemoryPipeline
    background: BackgroundTasks
    limiter: ChatLimiter
    limits: LimitSettings
    summary: SummarySettings
    # the model reads pictures (MEMCHAT_LLM_IMAGES): the turn's, and those of this many earlier messages
    images: bool = False
    image_history_messages: int = 0
    # Live turns for resume and stop (in this process, or in Redis for every instance).
    streams: TurnStreams = field(default_factory=LocalTurnStreams)
    # The turns this process streams or stores now: their leases are renewed together.
    active_turns: set[str] = field(default_factory=set)
    # This process, as the owner of the turns it answers (messages.turn_owner).
    # on PostgreSQL: this process's row in `instances` (memchat.instances), refreshed with the leases
    registered: bool = False
    instance_id: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}")
