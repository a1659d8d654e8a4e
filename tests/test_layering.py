"""The layering docs/ARCHITECTURE.md promises, checked on the source (every import, lazy ones included).

lib/hippo/ is one folder per layer; a module imports its own layer or the layers below, never one above
or a sibling at the same height. Within surfaces/, hooks/ is a thin adapter only the entry points use.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

LIB = Path(__file__).resolve().parents[1] / "lib" / "hippo"

# height of each layer: imports point to a lower height (or the same layer)
LAYERS = {"core": 0, "index": 1, "retrieval": 2, "push": 3, "sharing": 3, "surfaces": 4}


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def _layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "hippo" and parts[1] in LAYERS else None


@functools.cache
def _modules() -> tuple[tuple[Path, str | None, set[str]], ...]:
    """(path under lib/hippo, its layer, every name it imports) per module: parsed once for all the tests."""
    return tuple((rel, (rel.parts[0] if rel.parts[0] in LAYERS else None), _imports(LIB / rel))
                 for rel in (p.relative_to(LIB) for p in sorted(LIB.rglob("*.py"))))


def test_every_module_lives_in_a_layer():
    loose = [str(rel) for rel, layer, _ in _modules() if layer is None]
    assert sorted(loose) == ["__init__.py", "__main__.py"]


def test_imports_never_point_up_or_sideways():
    offenders = {}
    for rel, layer, names in _modules():
        if layer is None:
            continue
        bad = sorted(n for n in names if (target := _layer_of(n)) and target != layer
                     and LAYERS[target] >= LAYERS[layer])
        if bad:
            offenders[str(rel)] = bad
    assert offenders == {}


def test_the_layer_table_names_every_folder():
    folders = {p.name for p in LIB.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(LAYERS)


def test_only_the_entry_points_import_hooks():
    users = {str(rel) for rel, _, names in _modules()
             if "hooks" not in rel.parts and any(n.startswith("hippo.surfaces.hooks") for n in names)}
    assert users <= {"surfaces/cli.py", "__main__.py"}
