"""What the running app holds, built once in the lifespan (memchat.app).

Only the app, the CLI, tests and benchmarks import this module: routes reach its parts through
memchat.deps and their own package's dependencies, so no domain package depends on the whole.
"""

from dataclasses import dataclass

from redis.asyncio import Redis

from memchat.background import BackgroundTasks
from memchat.chat.services import ChatServices
from memchat.db.engine import Database
from memchat.llm.local import LocalModelServer
from memchat.security import TokenCodec
from memchat.settings import Settings
from memchat.throttle import LoginGuard


@dataclass
class AppState:
    settings: Settings
    db: Database
    tokens: TokenCodec
    login_throttle: LoginGuard
    background: BackgroundTasks
    chat: ChatServices
    # The embedded model server when no upstream URL is configured.
    local_model: LocalModelServer | None = None
    # Redis (MEMCHAT_REDIS_URL) for /healthz; its users hold their own reference.
    redis: Redis | None = None
