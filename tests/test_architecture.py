"""The code's shape, as the redesign left it: small modules, packages that do not import each other in a circle."""

import ast
from pathlib import Path

import memchat

SRC = Path(memchat.__file__).parent
MAX_MODULE_LINES = 400


def _modules() -> list[Path]:
    return [p for p in SRC.rglob("*.py") if "migrations" not in p.parts]


def _unit(path: Path) -> str:
    """A package of src/memchat, or a top-level module."""
    return path.relative_to(SRC).parts[0].removesuffix(".py")


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("memchat."):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("memchat."))
    return found


def _graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for path in _modules():
        unit = _unit(path)
        for module in _imports(path):
            target = module.split(".")[1]
            if target != unit:
                edges.setdefault(unit, set()).add(target)
    return edges


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if not state.get(target) and (found := visit(target)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if not state.get(node) and (found := visit(node)):
            return found
    return None


def test_no_module_is_over_400_lines() -> None:
    long = {str(p.relative_to(SRC)): n for p in _modules() if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def test_packages_import_each_other_in_no_circle() -> None:
    assert _cycle(_graph()) is None


def test_memories_import_nothing_from_chat() -> None:
    offenders = [
        str(p) for p in (SRC / "memories").rglob("*.py") if any(m.startswith("memchat.chat") for m in _imports(p))
    ]
    assert offenders == []


def test_the_graph_check_sees_a_circle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
