"""The MCP tools: a user's agents, memories and conversations, through the services the REST API uses.

Each tool reads who is asking from the HTTP request that carried the call (`endpoint.McpEndpoint`
checked its bearer credential), runs in one transaction of its own, and answers another user's
agent, memory or conversation as not found, like the REST API. Expected failures (not found, a
duplicate memory, a full agent) come back as tool errors reading `<code>: <message>`.
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from memchat import __version__
from memchat.agents.schemas import AgentOut
from memchat.agents.service import list_agents as list_user_agents
from memchat.agents.service import require_agent
from memchat.conversations import repository as conversations
from memchat.conversations import service as conversation_service
from memchat.conversations.schemas import ConversationList, MessageOut
from memchat.errors import MemchatError, NotFound
from memchat.mcp_tools.parts import CALLER_KEY, Caller
from memchat.memories import repository as memory_repository
from memchat.memories import service as memory_service
from memchat.memories.schemas import MemoryCreate, MemoryOut, MemoryPatch, MemoryStatus, MemoryType
from memchat.schemas import CamelModel, ConversationOut

Id = Annotated[str, Field(min_length=1, max_length=64)]
Content = Annotated[str, Field(min_length=1, max_length=2000)]
Importance = Annotated[int, Field(ge=1, le=5, description="1 (trivia) to 5 (essential)")]


class AgentList(CamelModel):
    agents: list[AgentOut]


class MemoryList(CamelModel):
    memories: list[MemoryOut]


class Deleted(CamelModel):
    deleted: str


class ConversationRead(CamelModel):
    conversation: ConversationOut | None = Field(description="null when the agent has not been talked to yet")
    messages: list[MessageOut] = Field(description="the most recent messages, oldest first")
    has_more: bool


def caller(ctx: Context) -> Caller:
    request = ctx.request_context.request
    found = getattr(request, "scope", {}).get(CALLER_KEY)
    if not isinstance(found, Caller):  # only reachable if the endpoint's check were bypassed
        raise ToolError("unauthorized: no caller on this request")
    return found


@asynccontextmanager
async def _as_tool_errors() -> AsyncIterator[None]:
    try:
        yield
    except MemchatError as exc:
        raise ToolError(f"{exc.code}: {exc.message}") from exc


async def list_agents(ctx: Context) -> AgentList:
    """The user's agents (id, name, handle, profile), newest activity first."""
    me = caller(ctx)
    async with _as_tool_errors(), me.parts.db.read() as session:
        return AgentList(agents=await list_user_agents(session, me.user_id))


async def search_memories(
    ctx: Context,
    agent_id: Id,
    query: Annotated[str, Field(min_length=1, max_length=4000, description="what the user says or asks")],
) -> MemoryList:
    """The agent's memories that its prompt would take in if the user said `query`, in prompt order.

    The same recall as a chat turn: with MEMCHAT_MEMORY_RECALL=ranked, boundaries first, then
    importance, recency and similarity to `query`; with the default (v1), the first memories by
    importance and recency, whatever the query.
    """
    me = caller(ctx)
    pipeline = me.parts.memory
    async with _as_tool_errors(), me.parts.db.read() as session:
        await require_agent(session, me.user_id, agent_id)
        active = await memory_repository.active_memories(session, agent_id)
        chosen = [m.id for m in await pipeline.recall(query, active)]
        rows = await memory_repository.list_memories(session, user_id=me.user_id, agent_id=agent_id, status="active")
    by_id = {m.id: m for m in rows}
    return MemoryList(memories=[MemoryOut.model_validate(by_id[i]) for i in chosen if i in by_id])


async def list_memories(ctx: Context, agent_id: Id, status: MemoryStatus | None = "active") -> MemoryList:
    """The agent's memories by importance, then recency; `status` null lists archived ones too."""
    me = caller(ctx)
    async with _as_tool_errors(), me.parts.db.read() as session:
        return MemoryList(memories=await memory_service.list_memories(session, me.user_id, agent_id, status))


async def add_memory(
    ctx: Context, agent_id: Id, type: MemoryType, content: Content, importance: Importance = 3
) -> MemoryOut:
    """Save a long-term memory for the agent (recorded in its history as created by the user)."""
    me = caller(ctx)
    body = MemoryCreate(type=type, content=content, importance=importance)
    async with _as_tool_errors(), me.parts.db.write() as session:
        return await memory_service.create_memory(session, me.parts.max_memories, me.user_id, agent_id, body)


async def update_memory(
    ctx: Context,
    memory_id: Id,
    content: Content | None = None,
    type: MemoryType | None = None,
    importance: Importance | None = None,
) -> MemoryOut:
    """Change a memory's content, type or importance; what is left out stays."""
    me = caller(ctx)
    body = MemoryPatch(content=content, type=type, importance=importance)
    async with _as_tool_errors(), me.parts.db.write() as session:
        return await memory_service.update_memory(session, me.parts.max_memories, me.user_id, memory_id, body)


async def archive_memory(ctx: Context, memory_id: Id) -> MemoryOut:
    """Archive a memory: kept with its history, no longer in the agent's prompt."""
    me = caller(ctx)
    body = MemoryPatch(status="archived")
    async with _as_tool_errors(), me.parts.db.write() as session:
        return await memory_service.update_memory(session, me.parts.max_memories, me.user_id, memory_id, body)


async def delete_memory(ctx: Context, memory_id: Id) -> Deleted:
    """Delete a memory and its history for good."""
    me = caller(ctx)
    async with _as_tool_errors(), me.parts.db.write() as session:
        await memory_service.delete_memory(session, me.user_id, memory_id)
    return Deleted(deleted=memory_id)


async def list_conversations(ctx: Context, agent_id: Id) -> ConversationList:
    """The agent's conversations (the default one always among them), each with its summary."""
    me = caller(ctx)
    async with _as_tool_errors(), me.parts.db.write() as session:  # the default one is made on first use
        return await conversation_service.list_conversations(session, me.user_id, agent_id)


async def read_conversation(
    ctx: Context,
    agent_id: Id,
    conversation_id: Id | None = None,
    limit: Annotated[int, Field(ge=1, le=200)] = 20,
) -> ConversationRead:
    """A conversation's rolling summary and its most recent messages: the agent's default
    conversation, or `conversation_id` (one of the agent's, see list_conversations)."""
    me = caller(ctx)
    async with _as_tool_errors(), me.parts.db.read() as session:
        await require_agent(session, me.user_id, agent_id)
        if conversation_id is None:
            found = await conversations.get_default_conversation(session, me.user_id, agent_id)
        else:
            found = await conversation_service.require_conversation(session, me.user_id, conversation_id)
            if found.agent_id != agent_id:
                raise NotFound("conversation not found", code="conversation_not_found")
        if found is None:
            return ConversationRead(conversation=None, messages=[], has_more=False)
        page = await conversation_service.conversation_history(
            session, me.user_id, found.id, limit=limit, before=None, include_superseded=False
        )
        return ConversationRead(
            conversation=ConversationOut.model_validate(found), messages=page.messages, has_more=page.has_more
        )


_READ = ToolAnnotations(read_only_hint=True)
_WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False)
_DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True)
TOOLS: list[tuple[Any, ToolAnnotations]] = [
    (list_agents, _READ),
    (search_memories, _READ),
    (list_memories, _READ),
    (add_memory, _WRITE),
    (update_memory, _WRITE),
    (archive_memory, _WRITE),
    (delete_memory, _DESTRUCTIVE),
    (list_conversations, _WRITE),
    (read_conversation, _READ),
]


def build_server() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer(
        "memchat",
        version=__version__,
        instructions=(
            "memchat keeps chat agents with server-side history, rolling summaries and long-term memories. "
            "Call list_agents first; every other tool takes an agent id (or a memory id from a memory tool)."
        ),
        log_level="WARNING",
    )
    for fn, annotations in TOOLS:
        server.add_tool(fn, annotations=annotations)
    return server
