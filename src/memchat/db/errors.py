"""What a database error means for the client: busy (try again), unavailable, or a bug.

SQLite says "database is locked" when another writer held the lock past the busy timeout;
PostgreSQL answers a lock or statement timeout, a deadlock or a serialization failure with its
SQLSTATE. Those are 503 and worth a retry. A connection that cannot be made or was lost is 503
too. Everything else (a disk I/O error, a schema that does not match the code) is a bug: 500,
logged, with nothing internal in the response.
"""

from sqlalchemy.exc import DBAPIError

_BUSY_SQLSTATES = frozenset({"55P03", "40P01", "40001", "57014"})  # lock, deadlock, serialization, timeout
_UNAVAILABLE_SQLSTATES = frozenset({"57P01", "57P02", "57P03"})  # shutdown, crash, cannot connect now
_SQLITE_BUSY = ("database is locked", "database table is locked", "database is busy")


def _sqlstate(exc: DBAPIError) -> str | None:
    for source in (exc.orig, getattr(exc.orig, "__cause__", None)):
        code = getattr(source, "sqlstate", None) or getattr(source, "pgcode", None)
        if isinstance(code, str):
            return code
    return None


def is_busy(exc: BaseException) -> bool:
    """A lock or statement timeout: the same request may well succeed a moment later."""
    if not isinstance(exc, DBAPIError):
        return False
    if _sqlstate(exc) in _BUSY_SQLSTATES:
        return True
    message = str(exc.orig).lower()
    return any(text in message for text in _SQLITE_BUSY)


def is_unavailable(exc: BaseException) -> bool:
    """The database cannot be reached, or the connection was lost."""
    if not isinstance(exc, DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    state = _sqlstate(exc)
    if state is not None and (state.startswith("08") or state in _UNAVAILABLE_SQLSTATES):
        return True
    return isinstance(exc.orig, OSError) or isinstance(getattr(exc.orig, "__cause__", None), OSError)
