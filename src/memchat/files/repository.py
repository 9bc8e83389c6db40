"""All SQL of message_files: the chat turn's statements on a sync Connection, and the async reads
of the REST routes."""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from sqlalchemy import Table, insert, literal, select
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncSession

from memchat.files.pictures import IncomingPicture, NewPicture
from memchat.models import MessageFile
from memchat.models.base import new_id

files = cast(Table, MessageFile.__table__)


@dataclass(frozen=True)
class PictureInfo:
    """A stored picture as history shows it: no bytes."""

    id: str
    message_id: str
    media_type: str


@dataclass(frozen=True)
class PictureData:
    media_type: str
    data: bytes


def store_pictures(
    conn: Connection, *, message_id: str, user_id: str, pictures: Sequence[IncomingPicture], now_ms: int
) -> bool:
    """The message's pictures, in order. A stored picture sent again is copied from the user's own;
    False (nothing more to do: the caller's transaction is rolled back) when one is not theirs."""
    for position, picture in enumerate(pictures):
        values = {"message_id": message_id, "user_id": user_id, "position": position, "created_at_ms": now_ms}
        if isinstance(picture, NewPicture):
            conn.execute(
                insert(files),
                {
                    **values,
                    "id": new_id(),
                    "media_type": picture.media_type,
                    "size_bytes": len(picture.data),
                    "data": picture.data,
                },
            )
            continue
        copy = select(
            literal(new_id()),
            literal(message_id),
            literal(user_id),
            literal(position),
            files.c.media_type,
            files.c.size_bytes,
            files.c.data,
            literal(now_ms),
        ).where(files.c.id == picture.file_id, files.c.user_id == user_id)
        columns = ["id", "message_id", "user_id", "position", "media_type", "size_bytes", "data", "created_at_ms"]
        if conn.execute(insert(files).from_select(columns, copy)).rowcount != 1:
            return False
    return True


def pictures_of(conn: Connection, message_ids: Sequence[str]) -> dict[str, list[PictureData]]:
    """The pictures of these messages, with their bytes, in order."""
    if not message_ids:
        return {}
    query = (
        select(files.c.message_id, files.c.media_type, files.c.data)
        .where(files.c.message_id.in_(list(message_ids)))
        .order_by(files.c.message_id, files.c.position)
    )
    out: dict[str, list[PictureData]] = defaultdict(list)
    for row in conn.execute(query):
        out[row.message_id].append(PictureData(row.media_type, row.data))
    return dict(out)


async def picture_infos(session: AsyncSession, message_ids: Sequence[str]) -> dict[str, list[PictureInfo]]:
    if not message_ids:
        return {}
    query = (
        select(files.c.id, files.c.message_id, files.c.media_type)
        .where(files.c.message_id.in_(list(message_ids)))
        .order_by(files.c.message_id, files.c.position)
    )
    out: dict[str, list[PictureInfo]] = defaultdict(list)
    for row in (await session.execute(query)).all():
        out[row.message_id].append(PictureInfo(row.id, row.message_id, row.media_type))
    return dict(out)


async def users_picture(session: AsyncSession, user_id: str, file_id: str) -> PictureData | None:
    query = select(files.c.media_type, files.c.data).where(files.c.id == file_id, files.c.user_id == user_id)
    row = (await session.execute(query)).first()
    return PictureData(row.media_type, row.data) if row is not None else None
