"""Password hashing (argon2) and bearer tokens (HS256 JWT, sub = user id)."""

import asyncio
import secrets
from pathlib import Path

import jwt
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from memchat.clock import now_ms
from memchat.errors import Unauthorized
from memchat.settings import AuthSettings

_hasher = PasswordHasher()
# Verified against when the email is unknown, so both failures cost the same time.
_DUMMY_HASH = _hasher.hash(secrets.token_hex(16))


async def hash_password(password: str) -> str:
    return await asyncio.to_thread(_hasher.hash, password)


async def verify_password(password_hash: str | None, password: str) -> bool:
    def _verify() -> bool:
        try:
            return _hasher.verify(password_hash or _DUMMY_HASH, password) and password_hash is not None
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


class TokenCodec:
    def __init__(self, secret: str, ttl_s: int, algorithm: str = "HS256"):
        self._secret = secret
        self._ttl_s = ttl_s
        self._algorithm = algorithm

    def issue(self, user_id: str) -> str:
        now_s = now_ms() // 1000
        claims = {"sub": user_id, "iat": now_s, "exp": now_s + self._ttl_s}
        return jwt.encode(claims, self._secret, algorithm=self._algorithm)

    def user_id(self, token: str) -> str:
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
        return sub
