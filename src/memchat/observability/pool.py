"""Database connections in use, from SQLAlchemy's pool events (checkout, checkin)."""

from sqlalchemy import event
from sqlalchemy.pool import Pool

from memchat.observability import metrics


def watch_pool(pool: Pool, name: str) -> None:
    """Count this pool's checked-out connections in memchat_db_pool_in_use{pool=name}."""
    gauge = metrics.DB_POOL_IN_USE.labels(name)

    @event.listens_for(pool, "checkout")
    def _checkout(*_args: object) -> None:
        gauge.inc()

    @event.listens_for(pool, "checkin")
    def _checkin(*_args: object) -> None:
        gauge.dec()
