"""What an app start costs: the SDKs memchat uses only on demand are not imported by it, and the
cyclic GC, off while `memchat serve` starts (memchat.cli.main), is on once the app has started.

`mcp` (the /mcp server, built on the first /mcp request) and `openai` (the non-streamed calls and
the OpenAI embedder, imported on first use) are ~0.9 s of CPU together, paid by every `memchat
serve` and every test that starts one. tests/test_mcp.py and tests/llm prove the lazy paths work.
"""

import json
import subprocess
import sys
from pathlib import Path

ON_DEMAND = ("mcp", "openai")

# A fresh interpreter: the test process itself has imported both long ago.
START = """
import asyncio, gc, json, sys
gc.disable()  # as memchat.cli.main does
from memchat.app import create_app
from memchat.settings import Settings

async def main() -> None:
    app = create_app(Settings(
        _env_file=None, database_url=sys.argv[1], data_dir=sys.argv[2], llm_base_url="http://127.0.0.1:9/v1",
        jwt_secret="startup-test-secret-0123456789abcdef", gc_freeze_on_start=False,
    ))
    after_import = sorted(name for name in {on_demand!r} if name in sys.modules)
    async with app.router.lifespan_context(app):
        started = sorted(name for name in {on_demand!r} if name in sys.modules)
        gc_on = gc.isenabled()
    print(json.dumps({{"after_import": after_import, "started": started, "gc_on": gc_on}}))

asyncio.run(main())
"""


def test_an_app_start_imports_neither_mcp_nor_openai_and_turns_the_gc_on(sqlite_url: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", START.format(on_demand=ON_DEMAND), sqlite_url, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded == {"after_import": [], "started": [], "gc_on": True}
