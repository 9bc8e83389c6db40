"""The dependency locks in requirements/ (written by scripts/lock) say what pyproject.toml says, and the
venv that scripts/setup installed holds exactly what its lock pins."""

import importlib.metadata
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
LOCK_SCRIPT = ROOT / "scripts" / "lock"
# a pinned line: `name==version ; marker \` followed by its `--hash=sha256:...` lines
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")


def locks() -> dict[str, Path]:
    return {path.stem: path for path in sorted((ROOT / "requirements").glob("*.txt"))}


def pins(lock: Path) -> list[tuple[str, str, str | None, int]]:
    """(normalized name, version, marker or None, number of hashes) for every package the lock pins."""
    found: list[tuple[str, str, str | None, int]] = []
    for line in lock.read_text(encoding="utf-8").splitlines():
        match = PIN.match(line)
        if match:
            found.append((canonicalize_name(match[1]), match[2], match[3], 0))
        elif line.strip().startswith("--hash=sha256:") and found:
            name, version, marker, hashes = found[-1]
            found[-1] = (name, version, marker, hashes + 1)
    return found


def extras_of(lock: Path) -> list[str]:
    header = next(line for line in lock.read_text(encoding="utf-8").splitlines() if line.startswith("# extras:"))
    return [extra for extra in header.removeprefix("# extras:").strip().split(",") if extra]


def test_the_locks_are_current_with_pyproject() -> None:
    result = subprocess.run([sys.executable, LOCK_SCRIPT, "--check"], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert set(locks()) == {"base", "local-embeddings", "local-embeddings-test", "local-embeddings-test-bench"}


def test_a_dependency_change_without_relocking_fails_the_check(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    shutil.copy(LOCK_SCRIPT, tmp_path / "scripts" / "lock")
    shutil.copytree(ROOT / "requirements", tmp_path / "requirements")
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    check = [sys.executable, str(tmp_path / "scripts" / "lock"), "--check"]

    (tmp_path / "pyproject.toml").write_text(pyproject.replace("# Exactly what", "# Only what"), encoding="utf-8")
    assert subprocess.run(check, capture_output=True, check=False).returncode == 0  # a comment is no change

    changed = pyproject.replace('"orjson==3.13.0"', '"orjson==3.12.0"')
    assert changed != pyproject
    (tmp_path / "pyproject.toml").write_text(changed, encoding="utf-8")
    result = subprocess.run(check, capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert "make lock" in result.stderr


def test_every_lock_pins_pyprojects_requirements_at_their_versions_with_hashes() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for name, lock in locks().items():
        extras = extras_of(lock)
        assert name == ("-".join(extras) or "base")  # scripts/setup finds a lock by its extras
        locked = {(pinned, version) for pinned, version, _, _ in pins(lock)}
        wanted = [*project["dependencies"]] + [r for extra in extras for r in project["optional-dependencies"][extra]]
        for requirement in map(Requirement, wanted):
            (specifier,) = requirement.specifier
            assert specifier.operator == "==", requirement
            assert (canonicalize_name(requirement.name), specifier.version) in locked, (name, str(requirement))
        assert all(hashes > 0 for _, _, _, hashes in pins(lock)), name


def test_the_locks_agree_on_every_version_they_share() -> None:
    largest = {(name, version, marker) for name, version, marker, _ in pins(locks()["local-embeddings-test-bench"])}
    for lock in locks().values():
        assert {(name, version, marker) for name, version, marker, _ in pins(lock)} <= largest, lock.name


def test_the_venv_holds_exactly_its_lock() -> None:
    stamp = Path(sys.prefix) / ".memchat-installed"
    if not stamp.is_file():
        pytest.skip("this interpreter's environment was not installed by scripts/setup")
    lock = ROOT / "requirements" / f"{stamp.read_text(encoding='utf-8').split()[0]}.txt"
    wanted = {name: version for name, version, marker, _ in pins(lock) if marker is None or Marker(marker).evaluate()}
    installed = {
        canonicalize_name(dist.metadata["Name"]): dist.version
        for dist in importlib.metadata.distributions()
        if canonicalize_name(dist.metadata["Name"]) not in {"memchat", "pip", "setuptools", "wheel"}
    }
    assert installed == wanted
