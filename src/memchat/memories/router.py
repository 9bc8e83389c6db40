from typing import Annotated

from fastapi import APIRouter, Query, Response, status

from memchat.deps import CurrentUser, ReadSession, State, WriteSession
from memchat.memories import service
from memchat.memories.schemas import MemoryCreate, MemoryList, MemoryOut, MemoryPatch, MemoryStatus

router = APIRouter(tags=["memories"])


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
    agent_id: str, body: MemoryCreate, user: CurrentUser, session: WriteSession, state: State
) -> MemoryOut:
    return await service.create_memory(session, state.settings, user.id, agent_id, body)


@router.patch("/api/memories/{memory_id}")
async def update_memory(
    memory_id: str, body: MemoryPatch, user: CurrentUser, session: WriteSession, state: State
) -> MemoryOut:
    return await service.update_memory(session, state.settings, user.id, memory_id, body)


@router.delete("/api/memories/{memory_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_memory(memory_id: str, user: CurrentUser, session: WriteSession) -> Response:
    await service.delete_memory(session, user.id, memory_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
