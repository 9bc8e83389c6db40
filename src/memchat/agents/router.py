from fastapi import APIRouter, Response, status

from memchat.agents import service
from memchat.agents.schemas import AgentCreate, AgentList, AgentOut, AgentPatch
from memchat.auth.dependencies import CurrentUser
from memchat.deps import AppSettings, ReadSession, WriteSession

router = APIRouter(tags=["agents"])


@router.get("/api/agents")
async def list_agents(user: CurrentUser, session: ReadSession) -> AgentList:
    return AgentList(agents=await service.list_agents(session, user.id))


@router.post("/api/agents", status_code=status.HTTP_201_CREATED)
async def create_agent(body: AgentCreate, user: CurrentUser, session: WriteSession, settings: AppSettings) -> AgentOut:
    return await service.create_agent(session, settings.limits, user.id, body)


@router.get("/api/agents/{agent_id}")
async def get_agent(agent_id: str, user: CurrentUser, session: ReadSession) -> AgentOut:
    return await service.get_agent_out(session, user.id, agent_id)


@router.patch("/api/agents/{agent_id}")
async def update_agent(
    agent_id: str, body: AgentPatch, user: CurrentUser, session: WriteSession, settings: AppSettings
) -> AgentOut:
    return await service.update_agent(session, settings.limits, user.id, agent_id, body)


@router.delete("/api/agents/{agent_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_agent(agent_id: str, user: CurrentUser, session: WriteSession) -> Response:
    await service.delete_agent(session, user.id, agent_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
