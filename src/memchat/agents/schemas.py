from pydantic import Field

from memchat.schemas import CamelModel


class AgentProfile(CamelModel):
    """The chat partner as the prompt's second message shows it (SPEC: prompt assembly)."""

    status: str = ""
    last_active: str = ""
    relationship: str = ""
    headline: str = ""
    topic: str = ""
    chemistry_label: str = ""
    chemistry: str = ""
    rhythm: str = ""
    profile_note: str = ""


class AgentProfilePatch(CamelModel):
    status: str | None = None
    last_active: str | None = None
    relationship: str | None = None
    headline: str | None = None
    topic: str | None = None
    chemistry_label: str | None = None
    chemistry: str | None = None
    rhythm: str | None = None
    profile_note: str | None = None


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
