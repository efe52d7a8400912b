"""The import rule from ARCHITECTURE.md: a stage imports only stages to its left."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "myna"
PIPELINE = ("traces", "schemas", "mocks", "backends", "replay", "itsm")


def _stage_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "myna" or len(parts) < 2:
        return None
    return parts[1] if parts[1] in PIPELINE else None


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def _violations(stage: str) -> list[str]:
    allowed = set(PIPELINE[: PIPELINE.index(stage) + 1])
    problems = []
    for path in sorted((PACKAGE / stage).rglob("*.py")):
        for line, module in _imports(path):
            target = _stage_of(module)
            if target is not None and target not in allowed:
                problems.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {module}")
    return problems


@pytest.mark.parametrize("stage", PIPELINE)
def test_stage_imports_only_earlier_stages(stage: str) -> None:
    assert _violations(stage) == []


def test_errors_module_imports_nothing_of_myna() -> None:
    imported = [module for _, module in _imports(PACKAGE / "errors.py")]
    assert not [module for module in imported if module.startswith("myna")]
