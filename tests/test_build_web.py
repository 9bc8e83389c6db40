"""scripts/build-web rebuilds the console only when web/ changed since the last build.

The script runs for real against a small copy of the repository's layout; `npm` is a stand-in on
PATH that logs its arguments and writes web/dist as `vite build` would, so the test is quick and
says exactly which npm commands each run started.
"""

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FAKE_NPM = """#!/usr/bin/env bash
set -euo pipefail
echo "$*" >>"$NPM_LOG"
case "$1" in
  ci) rm -rf node_modules && mkdir -p node_modules ;;
  run) rm -rf dist && mkdir -p dist && echo '<!doctype html>' >dist/index.html ;;
esac
"""


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "build-web", repo / "scripts" / "build-web")
    web = repo / "web"
    (web / "src").mkdir(parents=True)
    (web / "package.json").write_text('{"name": "console"}\n')
    (web / "package-lock.json").write_text('{"lockfileVersion": 3}\n')
    (web / "vite.config.ts").write_text("export default {}\n")
    (web / "src" / "main.tsx").write_text("console.log('hi')\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text(FAKE_NPM)
    npm.chmod(npm.stat().st_mode | stat.S_IXUSR)
    return repo


def build(repo: Path, **env: str) -> list[str]:
    """Runs scripts/build-web; returns the npm commands it ran."""
    log = repo.parent / "npm.log"
    log.write_text("")
    path = f"{repo.parent / 'bin'}{os.pathsep}{os.environ['PATH']}"
    subprocess.run(
        ["bash", "scripts/build-web"],
        cwd=repo,
        env={**os.environ, "PATH": path, "NPM_LOG": str(log), **env},
        check=True,
        capture_output=True,
    )
    return [_command(line) for line in log.read_text().splitlines()]


def _command(args: str) -> str:
    """`ci` or `run build`: the npm command without its flags."""
    words = args.split()
    return " ".join(words[:2]) if words[0] == "run" else words[0]


def test_second_build_runs_no_npm(checkout: Path) -> None:
    assert build(checkout) == ["ci", "run build"]
    assert (checkout / "web" / "dist" / "index.html").is_file()
    assert build(checkout) == []


def test_a_source_change_rebuilds_without_reinstalling(checkout: Path) -> None:
    build(checkout)
    (checkout / "web" / "src" / "main.tsx").write_text("console.log('changed')\n")
    assert build(checkout) == ["run build"]
    (checkout / "web" / "src" / "new.tsx").write_text("export {}\n")
    assert build(checkout) == ["run build"]
    assert build(checkout) == []


def test_a_config_change_rebuilds(checkout: Path) -> None:
    build(checkout)
    (checkout / "web" / "vite.config.ts").write_text("export default {base: '/'}\n")
    assert build(checkout) == ["run build"]


def test_a_lockfile_change_reinstalls_and_rebuilds(checkout: Path) -> None:
    build(checkout)
    (checkout / "web" / "package-lock.json").write_text('{"lockfileVersion": 3, "packages": {}}\n')
    assert build(checkout) == ["ci", "run build"]
    assert build(checkout) == []


def test_a_missing_dist_or_install_rebuilds(checkout: Path) -> None:
    build(checkout)
    shutil.rmtree(checkout / "web" / "dist")
    assert build(checkout) == ["run build"]
    shutil.rmtree(checkout / "web" / "node_modules")
    (checkout / "web" / "src" / "main.tsx").write_text("console.log('again')\n")
    assert build(checkout) == ["ci", "run build"]


def test_a_failed_build_leaves_no_stamp(checkout: Path) -> None:
    build(checkout)
    (checkout / "web" / "src" / "main.tsx").write_text("broken\n")
    npm = checkout.parent / "bin" / "npm"
    npm.write_text(FAKE_NPM.replace('case "$1" in', 'if [ "$1" = run ]; then exit 1; fi\ncase "$1" in'))
    with pytest.raises(subprocess.CalledProcessError):
        build(checkout)
    npm.write_text(FAKE_NPM)
    assert build(checkout) == ["run build"]


def test_rebuild_on_request(checkout: Path) -> None:
    build(checkout)
    assert build(checkout, MEMCHAT_WEB_REBUILD="1") == ["ci", "run build"]
