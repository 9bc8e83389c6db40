from typing import TYPE_CHECKING

from pydantic import Field, create_model

from memchat.schemas import AgentProfile, CamelModel, optional_profile_fields

if TYPE_CHECKING:

    class AgentProfilePatch(CamelModel):
        """Profile fields to change; the ones left out stay."""

else:
    AgentProfilePatch = create_model("AgentProfilePatch", __base__=CamelModel, **optional_profile_fields())


class AgentCreate(CamelModel):
    name: str = Field(min_length=1)
    handle: str = ""
    default_prompt: str | None = None
    profile: AgentProfile = Field(default_factory=AgentProfile)


class AgentPatch(CamelModel):
    name: str | None = Field(default=None, min_length=1)
    handle: str | None = None
    default_prompt: str | None = None
    profile: AgentProfilePatch | None = None


class AgentOut(CamelModel):
    id: str
    name: str
    handle: str
    default_prompt: str | None
    profile: AgentProfile
    latest_message: str | None
    latest_message_at_ms: int | None
    last_message_at_ms: int | None
    created_at_ms: int
    updated_at_ms: int


class AgentList(CamelModel):
    agents: list[AgentOut]
