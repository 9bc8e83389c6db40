"""The body that AI SDK's TextStreamChatTransport sends, plus memchat's agentId/conversationId."""

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator, model_validator
from pydantic.alias_generators import to_camel

from memchat.schemas import optional_profile_fields, reject_nul, reject_surrogates


class _OpenModel(BaseModel):
    """A model that keeps fields it does not know; every string in it, known or not, must be valid Unicode."""

    model_config = ConfigDict(extra="allow")

    @field_validator("*", mode="after")
    @classmethod
    def _valid_unicode(cls, value: object) -> object:
        return reject_surrogates(value)

    @model_validator(mode="after")
    def _valid_unicode_extras(self) -> "_OpenModel":
        reject_surrogates(self.model_extra)
        return self


class UIPart(_OpenModel):
    """A UIMessage part. Text parts and a user message's file parts (pictures) are read; step-start,
    reasoning... are accepted and ignored."""

    model_config = ConfigDict(populate_by_name=True)

    type: str = Field(max_length=100)
    text: str | None = None
    media_type: str | None = Field(default=None, alias="mediaType", max_length=100)
    url: str | None = Field(default=None, description="a file part: a base64 data URL, or /api/files/{id}")


class UIMessage(_OpenModel):
    id: str | None = Field(default=None, max_length=200)
    role: Literal["system", "user", "assistant"]
    parts: list[UIPart] = Field(default_factory=list)
    content: str | None = Field(default=None, description="older clients send plain content instead of parts")

    @field_validator("id", mode="after")
    @classmethod
    def _no_nul_id(cls, value: str | None) -> str | None:
        result: str | None = reject_nul(value)
        return result

    def text(self) -> str:
        texts = [part.text for part in self.parts if part.type == "text" and part.text]
        if texts:
            return "".join(texts)
        return self.content or ""

    def files(self) -> list["UIPart"]:
        return [part for part in self.parts if part.type == "file"]


class _ProfileOverride(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    @field_validator("*", mode="before")
    @classmethod
    def _numbers_as_text(cls, value: object) -> object:
        if isinstance(value, bool):
            return str(value).lower()
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        if isinstance(value, int | float):
            return str(value)
        return value

    @field_validator("*", mode="after")
    @classmethod
    def _valid_unicode(cls, value: object) -> object:
        return reject_surrogates(value)

    def fields_set(self) -> dict[str, str]:
        return {k: v for k, v in self.model_dump(exclude_unset=True).items() if v is not None}


_OVERRIDE_DOC = "The seed's frontend sends the chat partner's profile; named fields override the stored ones."
if TYPE_CHECKING:

    class ConversationOverride(_ProfileOverride):
        __doc__ = _OVERRIDE_DOC

else:
    ConversationOverride = create_model(
        "ConversationOverride",
        __base__=_ProfileOverride,
        __doc__=_OVERRIDE_DOC,
        **optional_profile_fields("name", "handle"),
    )


class ChatRequest(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    id: str | None = Field(default=None, max_length=200, description="the useChat chat id")
    messages: list[UIMessage] = Field(default_factory=list)
    trigger: Literal["submit-message", "regenerate-message"] = "submit-message"
    message_id: str | None = Field(default=None, max_length=200)
    agent_id: str | None = Field(default=None, max_length=200)
    conversation_id: str | None = Field(default=None, max_length=200)
    conversation: ConversationOverride | None = None

    @field_validator("id", "message_id", "agent_id", "conversation_id", mode="after")
    @classmethod
    def _no_nul(cls, value: str | None) -> str | None:
        result: str | None = reject_nul(value)
        return result

    def last_user_message(self) -> UIMessage | None:
        for message in reversed(self.messages):
            if message.role == "user":
                return message
        return None
