"""memchat serve keeps its start-up objects out of the cyclic GC (MEMCHAT_GC_FREEZE_ON_START)."""

import gc

from memchat.app import create_app
from memchat.settings import Settings
from tests.conftest import start_server


async def test_start_up_objects_leave_the_cyclic_gc(settings: Settings) -> None:
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    server, task, _ = await start_server(create_app(settings.replace(gc_freeze_on_start=True)))
    try:
        # the framework, SQLAlchemy, aiohttp and memchat's own objects: far more than a handful
        assert gc.get_freeze_count() > 10_000
    finally:
        server.should_exit = True
        await task
        gc.unfreeze()
