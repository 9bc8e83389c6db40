from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response, status
from fastapi import BackgroundTasks as AfterResponse

from memchat.auth.dependencies import CurrentUser
from memchat.deps import AppSettings, Db, ReadSession, WriteSession
from memchat.memories import history, service
from memchat.memories.extraction.run import embed_written_memories
from memchat.memories.language.semantic import MemoryEmbeddings
from memchat.memories.schemas import (
    MemoryCreate,
    MemoryHistory,
    MemoryList,
    MemoryOut,
    MemoryPatch,
    MemoryRevert,
    MemoryStatus,
)
from memchat.schemas import ErrorBody

router = APIRouter(tags=["memories"])


async def _memory_embeddings(request: Request) -> MemoryEmbeddings | None:
    """The app's embedder for memories (AppState.memory_embeddings, read by name as memchat.deps does)."""
    embeddings: MemoryEmbeddings | None = request.app.state.memchat.memory_embeddings
    return embeddings


MemoryVectors = Annotated[MemoryEmbeddings | None, Depends(_memory_embeddings)]


@router.get("/api/agents/{agent_id}/memories")
async def list_memories(
    agent_id: str,
    user: CurrentUser,
    session: ReadSession,
    status_filter: Annotated[MemoryStatus | None, Query(alias="status")] = None,
) -> MemoryList:
    return MemoryList(memories=await service.list_memories(session, user.id, agent_id, status_filter))


@router.post("/api/agents/{agent_id}/memories", status_code=status.HTTP_201_CREATED)
async def create_memory(
    agent_id: str,
    body: MemoryCreate,
    user: CurrentUser,
    session: WriteSession,
    settings: AppSettings,
    db: Db,
    embeddings: MemoryVectors,
    after: AfterResponse,
) -> MemoryOut:
    created = await service.create_memory(session, settings.limits.max_memories_per_agent, user.id, agent_id, body)
    if embeddings is not None:  # after the commit (the session's, when the route returns), off the response
        after.add_task(embed_written_memories, db, embeddings, created.agent_id)
    return created


@router.patch("/api/memories/{memory_id}")
async def update_memory(
    memory_id: str,
    body: MemoryPatch,
    user: CurrentUser,
    session: WriteSession,
    settings: AppSettings,
    db: Db,
    embeddings: MemoryVectors,
    after: AfterResponse,
) -> MemoryOut:
    updated = await service.update_memory(session, settings.limits.max_memories_per_agent, user.id, memory_id, body)
    if embeddings is not None and body.content is not None:
        after.add_task(embed_written_memories, db, embeddings, updated.agent_id)
    return updated


@router.delete("/api/memories/{memory_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_memory(memory_id: str, user: CurrentUser, session: WriteSession) -> Response:
    await service.delete_memory(session, user.id, memory_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get(
    "/api/memories/{memory_id}/history",
    responses={404: {"model": ErrorBody, "description": "no such memory of this user"}},
)
async def memory_history(memory_id: str, user: CurrentUser, session: ReadSession) -> MemoryHistory:
    """Every change to the memory (extracted, merged, updated, archived, edited, reverted), oldest first."""
    return await history.memory_history(session, user.id, memory_id)


@router.post(
    "/api/memories/{memory_id}/revert",
    responses={
        404: {"model": ErrorBody, "description": "no such memory of this user, or no such event of the memory"},
        409: {"model": ErrorBody, "description": "the restored content is already another active memory"},
    },
)
async def revert_memory(
    memory_id: str, body: MemoryRevert, user: CurrentUser, session: WriteSession, settings: AppSettings
) -> MemoryOut:
    """Restore the memory as it was before one of its events; recorded as a `reverted` event.

    409 when the restored content is already another active memory of the agent.
    """
    return await history.revert_memory(
        session, settings.limits.max_memories_per_agent, user.id, memory_id, body.event_id
    )
