"""All configuration, read from MEMCHAT_* environment variables and an optional .env file."""

from pathlib import Path
from typing import Literal

from pydantic import Field
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

    # --- limits ---
    max_message_chars: int = Field(default=16_000, ge=1)
    max_request_bytes: int = Field(default=2_000_000, ge=1024)
    max_messages_per_request: int = Field(default=500, ge=1)
    max_profile_field_chars: int = Field(default=2_000, ge=1)
    max_memories_per_agent: int = Field(default=1_000, ge=1)
    chat_rate_limit_per_minute: int = Field(default=60, ge=0, description="0 turns the limit off")

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
    def is_sqlite(self) -> bool:
        return self.resolved_database_url().startswith("sqlite")
