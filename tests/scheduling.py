"""How the suite is spread over pytest-xdist workers (scripts/test: `-n 4 --dist loadgroup`).

Two things decide the wall time of a parallel run:

- Units. Tests that share a module- or package-scoped fixture (a browser and its server, a loaded
  model) go to one worker together, so the fixture is set up once for them. The unit is the
  module, also for package-scoped fixtures: the browser tests are then spread over every worker
  (each sets up its own browser and server, a few seconds) instead of running one after another
  on a single worker for minutes.
- Order. A worker takes the next unit when it is nearly idle, so a long unit handed out last keeps
  one worker busy while the others wait. Inside a worker the units are sorted longest first, by
  the seconds in tests/durations.json (a test it does not name counts as a short one); xdist's own
  reordering by test count is turned off (`--no-loadscope-reorder` in scripts/test). A run without
  workers keeps the collection order.

`MEMCHAT_TEST_DURATIONS_OUT=tests/durations.json scripts/test` writes the file again from that
run (setup, call and teardown of each test; the controller adds up what every worker reports).
"""

import json
import os
import re
from collections import defaultdict
from pathlib import Path

import pytest
from _pytest.nodeid import NodeId

DURATIONS = Path(__file__).with_name("durations.json")
# A test the file does not name: most tests take well under a second.
UNKNOWN_S = 0.3
# What the file keeps: shorter tests read as UNKNOWN_S anyway.
KEEP_FROM_S = 0.5
_GROUP_SUFFIX = re.compile(r"@tests/[^@\]]*$")


def _group(item: pytest.Item) -> str | None:
    fixtureinfo = getattr(item, "_fixtureinfo", None)
    if fixtureinfo is None:
        return None
    scopes = {d.scope for defs in fixtureinfo.name2fixturedefs.values() for d in defs}
    if scopes & {"package", "module"}:
        return str(item.path.relative_to(item.config.rootpath))
    return None


def _load_durations() -> dict[str, float]:
    try:
        loaded: dict[str, float] = json.loads(DURATIONS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded


# before xdist's own hook, which turns the xdist_group marks into the units it hands out (a hook
# that marks after it groups nothing)
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    groups: dict[str, str] = {}
    for item in items:
        group = _group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
        groups[item.nodeid] = group or item.nodeid
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    durations = _load_durations()
    unit_seconds: dict[str, float] = defaultdict(float)
    first_seen: dict[str, int] = {}
    for index, item in enumerate(items):
        unit = groups[item.nodeid]
        unit_seconds[unit] += durations.get(_GROUP_SUFFIX.sub("", item.nodeid), UNKNOWN_S)
        first_seen.setdefault(unit, index)
    # every worker sorts the same collection the same way, as xdist requires
    order = {item.nodeid: index for index, item in enumerate(items)}
    items.sort(
        key=lambda item: (
            -unit_seconds[groups[item.nodeid]],
            first_seen[groups[item.nodeid]],
            order[item.nodeid],
        )
    )


@pytest.hookimpl(tryfirst=True)  # before xdist's, which sends the nodeids to the controller
def pytest_collection_finish(session: pytest.Session) -> None:
    """Under `--dist loadgroup`, xdist 3.8 names a unit by appending `@group` to a test's nodeid, and
    does it by setting `item._nodeid`, which pytest 9 no longer reads (the nodeid comes from
    `item._id`): every test was then a unit of its own and a browser, server or model fixture was
    set up again on every worker, often for each test. Here the suffix is set where pytest 9 reads it
    (and left alone where xdist's own did take)."""
    if not os.environ.get("PYTEST_XDIST_WORKER") or not session.config.getvalue("loadgroup"):
        return
    for item in session.items:
        names = sorted({str(mark.args[0]) for mark in item.iter_markers("xdist_group") if mark.args})
        suffix = "@" + "_".join(names)
        if names and not item.nodeid.endswith(suffix) and hasattr(item, "_id"):
            item._id = NodeId.parse(item.nodeid + suffix)  # noqa: SLF001 - see above


_measured: dict[str, float] = defaultdict(float)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if os.environ.get("MEMCHAT_TEST_DURATIONS_OUT") and not os.environ.get("PYTEST_XDIST_WORKER"):
        _measured[_GROUP_SUFFIX.sub("", report.nodeid)] += report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = os.environ.get("MEMCHAT_TEST_DURATIONS_OUT")
    if not out or os.environ.get("PYTEST_XDIST_WORKER") or not _measured:
        return
    kept = {nodeid: round(seconds, 1) for nodeid, seconds in sorted(_measured.items()) if seconds >= KEEP_FROM_S}
    Path(out).write_text(json.dumps(kept, indent=0, ensure_ascii=False) + "\n", encoding="utf-8")
