"""The layering the architecture promises, checked on the source: core packages never import the hook
adapters (hooks/ is a thin layer over diagnosis, brief and service, not the other way round)."""
from __future__ import annotations

import ast
from pathlib import Path

LIB = Path(__file__).resolve().parents[1] / "lib" / "hippo"
CORE = ("service", "diagnosis", "brief")


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def test_core_packages_never_import_the_hook_adapters():
    offenders = {str(p.relative_to(LIB)): sorted(n for n in _imports(p) if n.startswith("hippo.hooks"))
                 for pkg in CORE for p in (LIB / pkg).rglob("*.py")}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_only_the_entry_points_import_hooks():
    outside = [p for p in LIB.rglob("*.py") if "hooks" not in p.relative_to(LIB).parts]
    users = {str(p.relative_to(LIB)) for p in outside if any(n.startswith("hippo.hooks") for n in _imports(p))}
    assert users <= {"cli.py", "__main__.py"}
