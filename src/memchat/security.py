"""Password hashing (argon2) and bearer tokens (HS256 JWT, sub = user id)."""

import asyncio
import secrets
from pathlib import Path

import jwt
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from memchat.clock import now_ms
from memchat.errors import Unauthorized
from memchat.settings import AuthSettings, PasswordHashSettings


class Passwords:
    """argon2id password hashes at the configured cost (MEMCHAT_PASSWORD_HASH_*; argon2-cffi's
    defaults unless set). A hash names its own parameters, so one made at another cost still verifies.
    Hashing runs in a thread: it takes ~0.2 s of CPU at the default cost."""

    def __init__(self, cost: PasswordHashSettings):
        self._hasher = PasswordHasher(
            time_cost=cost.time_cost, memory_cost=cost.memory_kib, parallelism=cost.parallelism
        )
        self._dummy: str | None = None

    def _dummy_hash(self) -> str:
        """Verified against when the email is unknown, so both failures cost the same time. Made on the
        first login of either kind (not at start: a hash costs a CLI command or a start-up ~0.2 s)."""
        if self._dummy is None:
            self._dummy = self._hasher.hash(secrets.token_hex(16))
        return self._dummy

    async def hash(self, password: str) -> str:
        return await asyncio.to_thread(self._hasher.hash, password)

    async def verify(self, password_hash: str | None, password: str) -> bool:
        def _verify() -> bool:
            dummy = self._dummy_hash()  # on every path, so the first login costs the same whoever it names
            try:
                return self._hasher.verify(password_hash or dummy, password) and password_hash is not None
            except (VerificationError, InvalidHashError):
                return False

        return await asyncio.to_thread(_verify)


def resolve_jwt_secret(auth: AuthSettings, data_dir: Path) -> str:
    """MEMCHAT_JWT_SECRET, or one generated on first start and kept in the data folder."""
    if auth.secret:
        return auth.secret
    path = Path(data_dir) / "jwt_secret"
    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_urlsafe(48)
    path.touch(mode=0o600)
    path.write_text(secret)
    return secret


class TokenSubject(str):
    """The user id a login token names, carrying when the token was issued (ms).

    A str wherever a user id goes (the chat turn takes one); the turn reads `issued_at_ms` to refuse
    a token from before the password changed inside its own transaction (chat.intent).
    """

    issued_at_ms: int

    def __new__(cls, user_id: str, issued_at_ms: int) -> "TokenSubject":
        subject = super().__new__(cls, user_id)
        subject.issued_at_ms = issued_at_ms
        return subject


def check_token_current(issued_at_ms: int, tokens_valid_after_ms: int | None) -> None:
    """A token issued before the user's password changed (users.tokens_valid_after_ms) is refused."""
    if tokens_valid_after_ms is not None and issued_at_ms < tokens_valid_after_ms:
        raise Unauthorized("the password has changed since this token was issued; sign in again", code="token_revoked")


class TokenCodec:
    def __init__(self, secret: str, ttl_s: int, algorithm: str = "HS256"):
        self._secret = secret
        self._ttl_s = ttl_s
        self._algorithm = algorithm

    def issue(self, user_id: str, issued_at_ms: int | None = None) -> str:
        """`iat` and `exp` in seconds as JWT has them; `iat_ms` too, so that a token issued in the
        millisecond after a password change is told from one issued just before it."""
        now = now_ms() if issued_at_ms is None else issued_at_ms
        claims = {"sub": user_id, "iat": now // 1000, "iat_ms": now, "exp": now // 1000 + self._ttl_s}
        return jwt.encode(claims, self._secret, algorithm=self._algorithm)

    def subject(self, token: str) -> TokenSubject:
        """The user id and issue time of a token whose signature and expiry hold (no database)."""
        try:
            # Only our algorithm: refuses alg=none and key-confusion tokens.
            claims = jwt.decode(token, self._secret, algorithms=[self._algorithm], options={"require": ["sub", "exp"]})
        except jwt.ExpiredSignatureError as exc:
            raise Unauthorized("token expired", code="token_expired") from exc
        except jwt.PyJWTError as exc:
            raise Unauthorized("invalid token", code="invalid_token") from exc
        sub = claims.get("sub")
        if not isinstance(sub, str) or not sub:
            raise Unauthorized("invalid token", code="invalid_token")
        return TokenSubject(sub, _issued_at_ms(claims))

    def user_id(self, token: str) -> str:
        return str(self.subject(token))


def _issued_at_ms(claims: dict[str, object]) -> int:
    """`iat_ms`; for a token from before it was added, `iat` (seconds, so the start of its second);
    with neither, 0: older than any password change."""
    iat_ms, iat = claims.get("iat_ms"), claims.get("iat")
    if isinstance(iat_ms, int) and not isinstance(iat_ms, bool):
        return iat_ms
    if isinstance(iat, int | float) and not isinstance(iat, bool):
        return int(iat) * 1000
    return 0
