"""What the MCP tools work with and who is asking: no `mcp` import, so the app can hold these
without loading the SDK (endpoint.McpEndpoint builds the server on the first /mcp request)."""

from dataclasses import dataclass

from memchat.background import BackgroundTasks
from memchat.db.engine import Database
from memchat.memories.extraction.pipeline import MemoryPipeline
from memchat.security import TokenCodec

# where endpoint.McpEndpoint puts the Caller in the ASGI scope for the tools
CALLER_KEY = "memchat.mcp_caller"


@dataclass(frozen=True)
class McpParts:
    """What the tools work with, given by the app's lifespan."""

    db: Database
    tokens: TokenCodec
    background: BackgroundTasks
    memory: MemoryPipeline
    max_memories: int


@dataclass(frozen=True)
class Caller:
    user_id: str
    parts: McpParts
