"""Base for every request and response model: camelCase on the wire, snake_case in Python."""

import math
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel


def reject_surrogates(value: Any) -> Any:
    """A JSON string may escape half of a UTF-16 pair ("\\ud800"): no database can store that text."""
    if isinstance(value, str):
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError("must be valid Unicode: it contains a lone surrogate (\\ud800-\\udfff)") from None
    elif isinstance(value, list | tuple):
        for item in value:
            reject_surrogates(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            reject_surrogates(key)
            reject_surrogates(item)
    return value


def reject_nul(value: Any) -> Any:
    """PostgreSQL cannot store or compare text with NUL; no field of ours has a use for one.
    Nor for lone surrogates (reject_surrogates)."""
    if isinstance(value, str) and "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return reject_surrogates(value)


class CamelModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, from_attributes=True)

    @field_validator("*", mode="after")
    @classmethod
    def _no_nul(cls, value: Any) -> Any:
        return reject_nul(value)


class ErrorDetail(BaseModel):
    code: str
    message: str


class ErrorBody(BaseModel):
    error: ErrorDetail


def number_as_text(value: Any) -> Any:
    """78 -> "78", 78.0 -> "78", 7.5 -> "7.5": for a field a person writes as a number (the seed's
    frontend sends 心动值 as one). A bool is no number to a person: it stays a validation error."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
    return value


# Text that may arrive as a JSON number; stored and answered as text. The schema still says string
# (one AgentProfile for requests and responses, as the console's generated types name it).
NumberText = Annotated[str, BeforeValidator(number_as_text)]
NUMBER_PROFILE_FIELDS = frozenset({"chemistry"})
_NUMBER_TEXT_DOC = "text; a number is accepted and stored as text"


class ProfileFields(BaseModel):
    """The chat partner's profile, shown in the prompt's second message (docs/behaviour.md).

    Its fields are written here once: the API's profile models, the prompt's profile and the
    request's override derive from this class (the agents table has a column for each).
    """

    status: str = ""
    last_active: str = ""
    relationship: str = ""
    headline: str = ""
    topic: str = ""
    chemistry_label: str = ""
    chemistry: NumberText = Field(default="", description=_NUMBER_TEXT_DOC)
    rhythm: str = ""
    profile_note: str = ""


class AgentProfile(ProfileFields, CamelModel):
    """The chat partner as the prompt's second message shows it (docs/behaviour.md: prompt assembly)."""


PROFILE_FIELDS: tuple[str, ...] = tuple(ProfileFields.model_fields)


def optional_profile_fields(*extra: str) -> dict[str, Any]:
    """`extra` and the profile fields as optional strings, for create_model (patches and overrides)."""
    return {
        name: (NumberText | None, Field(default=None, description=_NUMBER_TEXT_DOC))
        if name in NUMBER_PROFILE_FIELDS
        else (str | None, None)
        for name in (*extra, *PROFILE_FIELDS)
    }


# A conversation as the API shows it: here, not in conversations/, because the account export in
# auth/ extends it (and auth may not import conversations).
class ConversationOut(CamelModel):
    id: str
    agent_id: str
    title: str | None
    is_default: bool
    summary: str | None
    message_count: int
    last_message_at_ms: int | None
    created_at_ms: int


def sse_content(data: str) -> dict[str, Any]:
    """The OpenAPI `content` of a text/event-stream response, its schema one event (as schemathesis
    and OpenAPI 3.2's `itemSchema` read it: the body is a sequence of such events)."""
    event = {
        "type": "object",
        "required": ["data"],
        "properties": {
            "data": {"type": "string", "description": data},
            "event": {"type": "string"},
            "id": {"type": "string"},
            "retry": {"type": "integer"},
        },
    }
    return {"text/event-stream": {"schema": event}}
