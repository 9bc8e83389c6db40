"""OpenAI's request and response bodies, as much of them as memchat reads or writes.

Requests keep what they do not know (an OpenAI client sends temperature, max_tokens, tools...):
sampling is the server's LLM settings, and unknown fields are ignored, not refused.
"""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from memchat.schemas import reject_nul, reject_surrogates


class _Lenient(BaseModel):
    """Keeps the fields it does not know; every string in it, known or not, must be valid Unicode."""

    model_config = ConfigDict(extra="allow")

    @model_validator(mode="after")
    def _valid_unicode(self) -> "_Lenient":
        reject_surrogates(self.model_dump())
        return self


class ImageUrl(_Lenient):
    url: str = Field(description="a base64 data URL (a picture on the web is refused: nothing is fetched)")


class ContentPart(_Lenient):
    type: str = Field(max_length=100)
    text: str | None = None
    image_url: ImageUrl | None = Field(default=None, description="an `image_url` part: a picture sent with the message")


class InputMessage(_Lenient):
    role: str = Field(max_length=50, description="system, developer, user, assistant or tool")
    content: str | list[ContentPart] | None = None

    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "".join(part.text for part in self.content or [] if part.type == "text" and part.text)

    def picture_urls(self) -> list[str]:
        """The urls of its `image_url` parts (a part without one is kept, to be refused as such)."""
        if isinstance(self.content, str):
            return []
        return [part.image_url.url if part.image_url else "" for part in self.content or [] if part.type == "image_url"]


class StreamOptions(_Lenient):
    include_usage: bool = False


class ChatCompletionRequest(_Lenient):
    model: str = Field(min_length=1, max_length=200, description="an agent's id or handle (GET /v1/models)")
    messages: list[InputMessage] = Field(min_length=1)
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    n: int | None = Field(default=None, ge=1, le=1, description="one choice only")
    conversation_id: str | None = Field(
        default=None, max_length=200, description="memchat: one of the agent's conversations (default: its default)"
    )

    @field_validator("model", "conversation_id", mode="after")
    @classmethod
    def _no_nul(cls, value: str | None) -> str | None:
        checked: str | None = reject_nul(value)
        return checked


class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class AssistantMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str
    refusal: None = None
    # a reasoning model's thinking, as DeepSeek's API names it; left out of the body when there is none
    reasoning_content: str | None = None


class Choice(BaseModel):
    index: int = 0
    message: AssistantMessage
    logprobs: None = None
    finish_reason: str


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[Choice]
    usage: Usage


class ModelOut(BaseModel):
    id: str = Field(description="the agent's id")
    object: Literal["model"] = "model"
    created: int = Field(description="when the agent was created (seconds)")
    owned_by: str = "memchat"
    name: str = Field(description="memchat: the agent's name")
    handle: str = Field(description="memchat: the agent's handle, which `model` also takes")


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelOut]


class OpenAIErrorDetail(BaseModel):
    message: str
    type: str
    param: str | None
    code: str | None


class OpenAIErrorBody(BaseModel):
    error: OpenAIErrorDetail
