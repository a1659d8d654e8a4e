"""docs/ARCHITECTURE.md's module list is the tree: every module is named, every name exists."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "lib" / "hippo"


def _listed() -> list[str]:
    """The paths of the `lib/hippo/` block, from its indentation (two spaces a level)."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    block = text.split("```\nlib/hippo/\n", 1)[1].split("```", 1)[0]
    stack: list[str] = []
    out = []
    for line in block.splitlines():
        m = re.match(r"( +)(\S+\.py|\S+/)(?:\s|$)", line)
        if not m:
            continue
        depth = len(m.group(1)) // 2 - 1
        stack[depth:] = [m.group(2).rstrip("/")]
        out.append("/".join(stack))
    return out


def test_every_listed_name_is_a_real_module_or_folder():
    listed = _listed()
    assert len(listed) == len(set(listed)), "a module is listed twice"
    assert [p for p in listed if not (LIB / p).exists()] == []


def test_every_module_is_listed_or_inside_a_listed_folder():
    listed = set(_listed())
    missing = []
    for path in LIB.rglob("*.py"):
        rel = path.relative_to(LIB)
        if rel.name == "__init__.py" and len(rel.parts) > 1:
            rel = rel.parent
        if rel.name == "__init__.py":
            continue
        parts = rel.as_posix().split("/")
        if not any("/".join(parts[:i]) in listed for i in range(len(parts), 0, -1)
                   if (LIB / "/".join(parts[:i])).is_dir() or i == len(parts)):
            missing.append(rel.as_posix())
    assert missing == []


def test_every_layer_folder_is_listed_with_its_modules():
    listed = set(_listed())
    for layer in ("core", "index", "retrieval", "push", "sharing", "surfaces"):
        assert layer in listed
        for path in (LIB / layer).glob("*.py"):
            if path.name != "__init__.py":
                assert f"{layer}/{path.name}" in listed
