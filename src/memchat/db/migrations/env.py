from alembic import context
from sqlalchemy.engine import Connection

from memchat.models import Base

target_metadata = Base.metadata


def run_migrations(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("memchat runs its migrations through memchat.db.migrate (`memchat migrate`)")
run_migrations(connection)
