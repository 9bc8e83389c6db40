from sqlalchemy.ext.asyncio import AsyncSession

from memchat.agents import repository
from memchat.agents.schemas import AgentCreate, AgentOut, AgentPatch
from memchat.clock import now_ms
from memchat.errors import InvalidInput, NotFound
from memchat.models import Agent
from memchat.schemas import PROFILE_FIELDS, AgentProfile
from memchat.settings import LimitSettings


def agent_out(agent: Agent, last_message_at_ms: int | None) -> AgentOut:
    return AgentOut(
        id=agent.id,
        name=agent.name,
        handle=agent.handle,
        default_prompt=agent.default_prompt,
        profile=AgentProfile(**{name: getattr(agent, name) for name in PROFILE_FIELDS}),
        latest_message=agent.latest_message,
        latest_message_at_ms=agent.latest_message_at_ms,
        last_message_at_ms=last_message_at_ms,
        created_at_ms=agent.created_at_ms,
        updated_at_ms=agent.updated_at_ms,
    )


def _check_lengths(limits: LimitSettings, fields: dict[str, str | None]) -> None:
    cap = limits.max_profile_field_chars
    for name, value in fields.items():
        limit = limits.max_message_chars if name == "default_prompt" else cap
        if value is not None and len(value) > limit:
            raise InvalidInput(f"{name} is longer than {limit} characters", code="field_too_long")


async def require_agent(session: AsyncSession, user_id: str, agent_id: str) -> Agent:
    agent = await repository.get_agent(session, user_id, agent_id)
    if agent is None:
        raise NotFound("agent not found", code="agent_not_found")
    return agent


async def get_agent_out(session: AsyncSession, user_id: str, agent_id: str) -> AgentOut:
    found = await repository.get_agent_with_activity(session, user_id, agent_id)
    if found is None:
        raise NotFound("agent not found", code="agent_not_found")
    return agent_out(*found)


async def list_agents(session: AsyncSession, user_id: str) -> list[AgentOut]:
    return [agent_out(agent, last_at) for agent, last_at in await repository.list_agents(session, user_id)]


async def create_agent(session: AsyncSession, limits: LimitSettings, user_id: str, body: AgentCreate) -> AgentOut:
    profile = body.profile.model_dump()
    _check_lengths(limits, {"name": body.name, "handle": body.handle, "default_prompt": body.default_prompt, **profile})
    now = now_ms()
    agent = Agent(
        user_id=user_id,
        name=body.name,
        handle=body.handle,
        default_prompt=body.default_prompt,
        created_at_ms=now,
        updated_at_ms=now,
        **profile,
    )
    await repository.insert_agent(session, agent)
    return agent_out(agent, None)


async def update_agent(
    session: AsyncSession, limits: LimitSettings, user_id: str, agent_id: str, body: AgentPatch
) -> AgentOut:
    agent = await require_agent(session, user_id, agent_id)
    changes: dict[str, str | None] = {
        name: value for name, value in body.model_dump(exclude_unset=True, exclude={"profile"}).items()
    }
    if "name" in changes and changes["name"] is None:
        raise InvalidInput("name cannot be null", code="invalid_input")
    if "handle" in changes and changes["handle"] is None:
        changes["handle"] = ""
    if body.profile is not None:
        changes.update(
            {
                name: value if value is not None else ""
                for name, value in body.profile.model_dump(exclude_unset=True).items()
            }
        )
    _check_lengths(limits, changes)
    for name, value in changes.items():
        setattr(agent, name, value)
    agent.updated_at_ms = now_ms()
    await session.flush()
    return await get_agent_out(session, user_id, agent_id)


async def delete_agent(session: AsyncSession, user_id: str, agent_id: str) -> None:
    await repository.delete_agent(session, await require_agent(session, user_id, agent_id))
