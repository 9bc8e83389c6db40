from fastapi import APIRouter, Response

from memchat.auth.dependencies import CurrentUser
from memchat.deps import ReadSession
from memchat.errors import NotFound
from memchat.files import repository

router = APIRouter(tags=["files"])


@router.get(
    "/api/files/{file_id}",
    response_class=Response,
    responses={200: {"content": {"image/png": {}, "image/jpeg": {}, "image/gif": {}, "image/webp": {}}}},
)
async def get_file(file_id: str, user: CurrentUser, session: ReadSession) -> Response:
    """A picture sent with one of the user's messages; someone else's is not found, like an unknown id."""
    picture = await repository.users_picture(session, user.id, file_id)
    if picture is None:
        raise NotFound("file not found", code="file_not_found")
    headers = {"Cache-Control": "private, max-age=31536000, immutable", "X-Content-Type-Options": "nosniff"}
    return Response(picture.data, media_type=picture.media_type, headers=headers)
